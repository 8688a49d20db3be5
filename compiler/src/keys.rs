//! API keys in the workspace store: the rules `svc keys` and the Builder's Settings > API
//! Keys both follow. A key is returned once, when issued, and stored only as a hash; an
//! active key's name is unique (names address keys in `revoke` and `rotate`); a rotation
//! keeps the name, the owner and the lifetime.

use svc_runtime::apikey::{KeyRecord, unix_now};
use svc_runtime::store::WorkspaceStore;

/// Why a key operation wrote nothing. Each front end words the remedy its own way (a
/// flag for `svc keys`, a button for the Builder).
#[derive(Debug)]
pub enum KeyError {
    /// The name or the owner is empty.
    EmptyNameOrOwner,
    /// An active key already has the name.
    NameTaken { name: String, id: String },
    /// No active key has this id or name.
    NoActiveKey(String),
    /// Several active keys of this name would live as long: one must be named by id.
    Ambiguous { name: String, ids: Vec<String> },
    /// The store failed.
    Store(String),
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyError::EmptyNameOrOwner => write!(f, "the key needs a non-empty name and owner"),
            KeyError::NameTaken { name, id } => write!(f, "an active key is already named `{name}` ({id})"),
            KeyError::NoActiveKey(id_or_name) => write!(f, "no active key has the id or name `{id_or_name}`"),
            KeyError::Ambiguous { name, ids } => write!(
                f,
                "several active keys are named `{name}` ({}); rotate one by id",
                ids.join(", ")
            ),
            KeyError::Store(e) => write!(f, "{e}"),
        }
    }
}

fn store_error(e: impl std::fmt::Display) -> KeyError {
    KeyError::Store(e.to_string())
}

/// A key just issued: the key itself (shown once) and what is stored of it.
pub struct Issued {
    pub key: String,
    pub record: KeyRecord,
}

/// What a rotation did.
pub struct Rotation {
    pub issued: Issued,
    /// The key replaced.
    pub old: KeyRecord,
    /// When the old key stops working (`now` when it was revoked at once), or why it could
    /// not be retired: the new key works either way.
    pub retired: Result<i64, String>,
}

/// What may be shown of a key: never the key or its hash. The shape of
/// `svc keys list --format json`.
pub fn summary(k: &KeyRecord, now: i64) -> serde_json::Value {
    serde_json::json!({
        "id": k.id, "name": k.name, "owner": k.owner, "prefix": k.prefix,
        "createdAt": k.created_at, "expiresAt": k.expires_at, "revokedAt": k.revoked_at,
        "status": k.status(now).as_str(),
    })
}

/// Issues a key named `name` for `owner`, living `lifetime` seconds (`None`: forever).
/// Nothing is written when the name or owner is empty or an active key has the name.
pub fn create(store: &dyn WorkspaceStore, name: &str, owner: &str, lifetime: Option<i64>) -> Result<Issued, KeyError> {
    if name.trim().is_empty() || owner.trim().is_empty() {
        return Err(KeyError::EmptyNameOrOwner);
    }
    if let Some(existing) = active(store, name)?.first() {
        return Err(KeyError::NameTaken {
            name: name.to_string(),
            id: existing.id.clone(),
        });
    }
    insert(store, name, owner, lifetime.map(|d| unix_now() + d))
}

/// Revokes the key with this id or name.
pub fn revoke(store: &dyn WorkspaceStore, id_or_name: &str) -> Result<KeyRecord, KeyError> {
    store.revoke_key(id_or_name, unix_now()).map_err(store_error)
}

/// Replaces the key with this id or name by a new one of the same name and owner. The new
/// key lives `lifetime` seconds, or as long as the old one did; the old key keeps working
/// for `grace` seconds (never past its own expiry), or is revoked now.
pub fn rotate(
    store: &dyn WorkspaceStore,
    id_or_name: &str,
    grace: Option<i64>,
    lifetime: Option<i64>,
) -> Result<Rotation, KeyError> {
    let old = key_to_rotate(store, id_or_name)?;
    let now = unix_now();
    let lifetime = lifetime.or(old.expires_at.map(|e| e - old.created_at));
    let issued = insert(store, &old.name, &old.owner, lifetime.map(|d| now + d))?;
    let retired = match grace {
        Some(g) if g > 0 => {
            let until = old.expires_at.map(|e| e.min(now + g)).unwrap_or(now + g);
            store.set_key_expiry(&old.id, until).map(|()| until)
        }
        _ => store.revoke_key(&old.id, now).map(|_| now),
    }
    .map_err(|e| e.to_string());
    Ok(Rotation { issued, old, retired })
}

fn insert(store: &dyn WorkspaceStore, name: &str, owner: &str, expires_at: Option<i64>) -> Result<Issued, KeyError> {
    let (key, record) = KeyRecord::issue(name, owner, unix_now(), expires_at);
    store.insert_key(&record).map_err(store_error)?;
    Ok(Issued { key, record })
}

/// The active keys answering to `id_or_name`, oldest first.
fn active(store: &dyn WorkspaceStore, id_or_name: &str) -> Result<Vec<KeyRecord>, KeyError> {
    let now = unix_now();
    Ok(store
        .list_keys()
        .map_err(store_error)?
        .into_iter()
        .filter(|k| k.revoked_at.is_none() && k.expires_at.is_none_or(|e| e > now))
        .filter(|k| k.id == id_or_name || k.name == id_or_name)
        .collect())
}

/// The key a rotation replaces: the one key with that id or name. While an earlier
/// rotation's grace period runs, the old key shares the name with its replacement; the
/// replacement, which outlives the keys being retired, is meant. Two keys that would live
/// as long are ambiguous: rotate one by id.
fn key_to_rotate(store: &dyn WorkspaceStore, id_or_name: &str) -> Result<KeyRecord, KeyError> {
    let found = active(store, id_or_name)?;
    let lives = |k: &KeyRecord| k.expires_at.unwrap_or(i64::MAX);
    let Some(longest) = found.iter().map(lives).max() else {
        return Err(KeyError::NoActiveKey(id_or_name.to_string()));
    };
    let mut outliving: Vec<&KeyRecord> = found.iter().filter(|k| lives(k) == longest).collect();
    if outliving.len() == 1 {
        return Ok(outliving.remove(0).clone());
    }
    Err(KeyError::Ambiguous {
        name: id_or_name.to_string(),
        ids: found.iter().map(|k| k.id.clone()).collect(),
    })
}
