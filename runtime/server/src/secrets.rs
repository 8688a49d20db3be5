//! Secret values for `ctx.secret(name)`.
//!
//! - Development (`svc dev`, `serve --dev`): the environment variable of the same name.
//! - Deployed: the workspace store (`svc secrets set`), where values are sealed; the
//!   server opens them with the secrets key ([`crate::seal`]).
//!
//! Values are read once at start-up; a server that lacks a required secret refuses to
//! start and names what is missing (never a value). The [`Redactor`] built from the values
//! scrubs them from node logs and panic messages, so a node cannot leak a secret into a
//! log line by printing it.

use crate::seal::SecretsKey;
use crate::store::WorkspaceStore;
use std::collections::BTreeMap;
use svc_sdk::Secret;

/// A secret the project declares.
#[derive(Debug, Clone, Copy)]
pub struct Requirement {
    pub name: &'static str,
    pub required: bool,
}

/// Where secret values come from.
pub enum SecretSource<'a> {
    /// The process environment (development).
    Environment,
    /// The workspace store (deployed), with the key its values are sealed with, if the
    /// server was given one.
    Store(&'a dyn WorkspaceStore, Option<&'a SecretsKey>),
}

/// The secrets a server runs with.
#[derive(Clone, Default)]
pub struct Secrets {
    values: BTreeMap<&'static str, Secret>,
}

/// Secrets that are required and have no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingSecrets(pub Vec<&'static str>);

impl std::fmt::Display for MissingSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "required secrets have no value: {}", self.0.join(", "))
    }
}

impl Secrets {
    /// Loads every declared secret; fails listing the required ones that are missing.
    pub fn load(requirements: &[Requirement], source: SecretSource<'_>) -> Result<Secrets, LoadError> {
        let mut values = BTreeMap::new();
        let mut missing = Vec::new();
        for r in requirements {
            let value = match &source {
                SecretSource::Environment => std::env::var(r.name).ok(),
                SecretSource::Store(store, key) => {
                    match store.secret(r.name).map_err(|e| LoadError::Store(e.to_string()))? {
                        None => None,
                        Some(sealed) => {
                            let key = key.ok_or(LoadError::NoKey)?;
                            let value = key.open(r.name, &sealed).map_err(|e| LoadError::Unseal(r.name, e))?;
                            Some(value)
                        }
                    }
                }
            };
            match value {
                Some(v) if !v.is_empty() => {
                    values.insert(r.name, Secret::new(v));
                }
                _ if r.required => missing.push(r.name),
                _ => {}
            }
        }
        if missing.is_empty() {
            Ok(Secrets { values })
        } else {
            Err(LoadError::Missing(MissingSecrets(missing)))
        }
    }

    /// Secrets given directly (tests).
    pub fn from_values(values: impl IntoIterator<Item = (&'static str, String)>) -> Self {
        Secrets {
            values: values.into_iter().map(|(k, v)| (k, Secret::new(v))).collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<Secret> {
        self.values.get(name).cloned()
    }

    pub fn redactor(&self) -> Redactor {
        Redactor::new(self.values.values().map(|s| s.expose().to_string()))
    }
}

/// Why secrets could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    Missing(MissingSecrets),
    Store(String),
    /// The store holds sealed values and the server has no key.
    NoKey,
    /// A value did not open (a wrong key, or damaged): names the secret, never the value.
    Unseal(&'static str, crate::seal::SealError),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Missing(m) => m.fmt(f),
            LoadError::Store(e) => write!(f, "cannot read secrets: {e}"),
            LoadError::NoKey => write!(
                f,
                "the workspace store holds sealed secret values and no secrets key was given: set {} or {}",
                crate::seal::KEY_ENV,
                crate::seal::KEY_FILE_ENV
            ),
            LoadError::Unseal(name, e) => write!(f, "cannot open secret `{name}`: {e}"),
        }
    }
}

/// Checks that every value in `store` is sealed with `key`: a store whose values were
/// sealed with another key is an error naming both keys' ids (never a value).
/// The secret under which the shared limiter's MAC key is kept (sealed, as every secret
/// value). Not a name a project can declare (secret names start with a letter), and left
/// out of `svc secrets list`.
pub const RATE_LIMIT_KEY_SECRET: &str = "__SVC_RATE_LIMIT_KEY";

/// Whether `name` is one of svc's own secrets rather than a project's.
pub fn is_internal(name: &str) -> bool {
    name.starts_with("__SVC_")
}

/// The key of the MACs in the shared limiter's Redis keys (`svc:rl:…:<MAC>`). It was
/// derived from the secrets key, so rotating that key moved every count to new Redis
/// keys: during a rolling restart old and new instances counted apart (up to twice the
/// limit). It is now kept in the workspace store, sealed like a secret value and re-sealed
/// by `svc secrets rotate-key` with the others, so it outlives a rotation. The first start
/// stores the key the limiter used until then (derived from the current secrets key), so
/// counts carry over an upgrade too; instances starting together agree on the first one
/// stored.
pub fn rate_limit_mac_key(store: &dyn WorkspaceStore, key: &SecretsKey) -> Result<[u8; 32], String> {
    use base64::Engine;
    let open = |sealed: &[u8]| -> Result<[u8; 32], String> {
        let text = key
            .open(RATE_LIMIT_KEY_SECRET, sealed)
            .map_err(|e| format!("the shared limiter's key in the workspace store: {e}"))?;
        base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .ok()
            .and_then(|bytes| <[u8; 32]>::try_from(bytes.as_slice()).ok())
            .ok_or_else(|| "the shared limiter's key in the workspace store is damaged".to_string())
    };
    if let Some(sealed) = store.secret(RATE_LIMIT_KEY_SECRET).map_err(|e| e.to_string())? {
        return open(&sealed);
    }
    let initial = base64::engine::general_purpose::STANDARD.encode(key.derive("rate-limit keys"));
    store
        .set_secret_if_absent(
            RATE_LIMIT_KEY_SECRET,
            &key.seal(RATE_LIMIT_KEY_SECRET, &initial),
            crate::apikey::unix_now(),
        )
        .map_err(|e| e.to_string())?;
    let sealed = store
        .secret(RATE_LIMIT_KEY_SECRET)
        .map_err(|e| e.to_string())?
        .ok_or("the shared limiter's key was not kept by the workspace store")?;
    open(&sealed)
}

pub fn check_key(store: &dyn WorkspaceStore, key: &SecretsKey) -> Result<(), String> {
    for info in store.list_secrets().map_err(|e| e.to_string())? {
        let Some(sealed) = store.secret(&info.name).map_err(|e| e.to_string())? else {
            continue;
        };
        match crate::seal::sealed_key_id_hex(&sealed) {
            Some(id) if id == key.id_hex() => {}
            Some(id) => {
                return Err(format!(
                    "the secrets key given (id {}) is not the one the secrets in {} are sealed with (id {id})",
                    key.id_hex(),
                    store.describe()
                ));
            }
            None => return Err(format!("secret `{}` in {} is damaged", info.name, store.describe())),
        }
    }
    Ok(())
}

/// Gets `store` ready for `key`: its values must be sealed with it ([`check_key`]), and
/// values an older svc stored in clear are sealed now ([`upgrade_plaintext`]). Returns
/// how many were sealed.
pub fn prepare_store(store: &dyn WorkspaceStore, key: &SecretsKey) -> Result<usize, String> {
    check_key(store, key)?;
    upgrade_plaintext(store, key).map_err(|e| e.to_string())
}

/// Seals the values an old SQLite store kept in clear, then forgets the clear ones.
/// Returns how many were sealed.
pub fn upgrade_plaintext(store: &dyn WorkspaceStore, key: &SecretsKey) -> crate::store::Result<usize> {
    let plain = store.plaintext_secrets()?;
    for (name, value, updated_at) in &plain {
        store.set_secret(name, &key.seal(name, value), *updated_at)?;
    }
    store.forget_plaintext_secrets()?;
    Ok(plain.len())
}

/// Replaces known secret values in text with `[redacted]`.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Longest first, so that a secret containing another is replaced whole.
    values: Vec<String>,
}

impl Redactor {
    /// Values shorter than 4 characters are not scrubbed: they would mangle ordinary text.
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<String> = values.into_iter().filter(|v| v.len() >= 4).collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Redactor { values }
    }

    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), "[redacted]");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SqliteStore;

    const REQ: &[Requirement] = &[
        Requirement {
            name: "SVC_TEST_A",
            required: true,
        },
        Requirement {
            name: "SVC_TEST_B",
            required: false,
        },
    ];

    #[test]
    fn a_missing_required_secret_is_named_not_shown() {
        let store = SqliteStore::in_memory().unwrap();
        let key = SecretsKey::generate();
        let err = Secrets::load(REQ, SecretSource::Store(&store, Some(&key)))
            .err()
            .unwrap();
        assert_eq!(err.to_string(), "required secrets have no value: SVC_TEST_A");
        store
            .set_secret("SVC_TEST_A", &key.seal("SVC_TEST_A", "value-a"), 1)
            .unwrap();
        let s = Secrets::load(REQ, SecretSource::Store(&store, Some(&key))).unwrap();
        assert_eq!(s.get("SVC_TEST_A").unwrap().expose(), "value-a");
        assert!(s.get("SVC_TEST_B").is_none());

        // Without the key, or with another one: a clear error that names no value.
        let err = Secrets::load(REQ, SecretSource::Store(&store, None)).err().unwrap();
        assert!(err.to_string().contains("no secrets key was given"), "{err}");
        let other = SecretsKey::generate();
        let err = Secrets::load(REQ, SecretSource::Store(&store, Some(&other)))
            .err()
            .unwrap();
        let text = err.to_string();
        assert!(
            text.contains("SVC_TEST_A") && text.contains(&key.id_hex()) && !text.contains("value-a"),
            "{text}"
        );
    }

    #[test]
    fn redaction() {
        let r = Redactor::new(["s3cr3t-value".to_string(), "abc".to_string(), "s3cr3t".to_string()]);
        assert_eq!(
            r.redact("token=s3cr3t-value and s3cr3t, abc"),
            "token=[redacted] and [redacted], abc"
        );
    }
}
