//! The workspace store: API keys (as hashes), secret values (sealed, see [`crate::seal`]),
//! and synced assets.
//!
//! [`WorkspaceStore`] has two engines: [`sqlite::SqliteStore`], the embedded default for
//! one instance, and [`postgres::PostgresStore`], shared by N instances, which also
//! pushes key changes to every server (LISTEN/NOTIFY). [`Location`] picks one from
//! `--store` or `SVC_STORE`: a `postgres://` URL, else the path of an SQLite file
//! (default `.svc/workspace.db`).

/// `SELECT` of a key row's columns from `$table`, then `$rest`: the columns in the order
/// both stores' `key_from_row` read them, by position. A server reads every key at
/// start-up, and looking each column up by name was a fifth of that (SQLite, 10,000 keys).
macro_rules! select_keys {
    ($table:literal $(, $rest:literal)?) => {
        concat!(
            "SELECT id, name, owner, prefix, hash, created_at, expires_at, revoked_at FROM ",
            $table
            $(, " ", $rest)?
        )
    };
}

pub mod copy;
pub mod postgres;
pub mod sqlite;

use crate::apikey::KeyRecord;
pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The environment variable naming the store.
pub const STORE_ENV: &str = "SVC_STORE";
/// The default path, relative to the working directory.
pub const DEFAULT_PATH: &str = ".svc/workspace.db";

/// A store failure.
#[derive(Debug)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError(format!("workspace store: {e}"))
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// A secret's metadata: never its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretInfo {
    pub name: String,
    pub updated_at: i64,
}

/// One synced asset: an enum, structure, secret requirement or node manifest, as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAsset {
    /// `enum`, `structure`, `secret` or `node`.
    pub kind: String,
    pub name: String,
    pub json: String,
}

/// Where the workspace lives. Secret values are stored sealed: the store never sees them
/// in clear, and copying a store moves sealed bytes without needing the key.
pub trait WorkspaceStore: Send + Sync {
    /// What this store is, for logs and messages (an SQLite path, or a PostgreSQL URL
    /// without its password).
    fn describe(&self) -> String;

    /// What start-up should warn about (a connection that may cross the network in
    /// plaintext): servers log each line, the CLI prints it.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    fn insert_key(&self, record: &KeyRecord) -> Result<()>;
    /// Every key, oldest first (for people: `svc keys list`).
    fn list_keys(&self) -> Result<Vec<KeyRecord>>;
    /// Every key, in no particular order: what a server indexes at start-up and on each
    /// reload. A store that can skip the sort of `list_keys` does (SQLite: 10,000 keys
    /// are read a tenth faster, which is start-up time).
    fn index_keys(&self) -> Result<Vec<KeyRecord>> {
        self.list_keys()
    }
    /// The key whose SHA-256 is `hash`, if any (one indexed lookup: the column is unique).
    fn find_key(&self, hash: &[u8; 32]) -> Result<Option<KeyRecord>>;
    /// Revokes by id or by name (a name must be unique among active keys).
    fn revoke_key(&self, id_or_name: &str, now: i64) -> Result<KeyRecord>;
    /// Sets when a key stops working (rotation with a grace period).
    fn set_key_expiry(&self, id: &str, expires_at: i64) -> Result<()>;
    /// Changes whenever any key is added, revoked or removed.
    fn keys_revision(&self) -> Result<i64>;

    /// Stores a sealed value (see [`crate::seal::SecretsKey::seal`]).
    fn set_secret(&self, name: &str, sealed: &[u8], updated_at: i64) -> Result<()>;
    /// Stores a sealed value unless one is stored under `name` already (instances that
    /// start together agree on the first); whether it was stored.
    fn set_secret_if_absent(&self, name: &str, sealed: &[u8], updated_at: i64) -> Result<bool>;
    /// The sealed value of a secret.
    fn secret(&self, name: &str) -> Result<Option<Vec<u8>>>;
    fn list_secrets(&self) -> Result<Vec<SecretInfo>>;
    /// Whether there was a value.
    fn unset_secret(&self, name: &str) -> Result<bool>;
    /// Replaces the sealed values of the secrets named, in one transaction (a new key).
    fn reseal_secrets(&self, sealed: &[(String, Vec<u8>)]) -> Result<()>;
    /// Values stored in clear by a store from before sealing (SQLite schema 1): name,
    /// value, when set. [`crate::secrets::upgrade_plaintext`] seals them.
    fn plaintext_secrets(&self) -> Result<Vec<(String, String, i64)>> {
        Ok(Vec::new())
    }
    /// Forgets the values [`WorkspaceStore::plaintext_secrets`] returned, once sealed.
    fn forget_plaintext_secrets(&self) -> Result<()> {
        Ok(())
    }

    fn list_assets(&self) -> Result<Vec<StoredAsset>>;
    /// Replaces every asset with `assets`, in one transaction.
    fn replace_assets(&self, assets: &[StoredAsset], now: i64) -> Result<()>;

    /// Raised when keys may have changed, for stores that push changes (PostgreSQL:
    /// LISTEN/NOTIFY, and a full reload after every reconnect). `None`: poll
    /// [`WorkspaceStore::keys_revision`].
    fn key_changes(&self) -> Option<Arc<KeyChanges>> {
        None
    }
}

/// Key changes pushed by a store, waited for by the server's key reloader.
#[derive(Debug, Default)]
pub struct KeyChanges {
    notify: tokio::sync::Notify,
    reload_all: std::sync::atomic::AtomicBool,
}

impl KeyChanges {
    /// Keys changed (a notification).
    pub fn changed(&self) {
        self.notify.notify_one();
    }

    /// Changes may have been missed (a reconnect): reload every key, whatever the revision.
    pub fn reload_all(&self) {
        self.reload_all.store(true, std::sync::atomic::Ordering::Release);
        self.notify.notify_one();
    }

    /// Waits for the next change (or returns at once if one came since the last wait).
    pub async fn wait(&self) {
        self.notify.notified().await;
    }

    /// Whether a full reload was asked for since the last call.
    pub fn take_reload_all(&self) -> bool {
        self.reload_all.swap(false, std::sync::atomic::Ordering::AcqRel)
    }
}

/// Where a workspace store is: `--store` / `SVC_STORE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file (`sqlite:PATH`, or any path).
    Sqlite(PathBuf),
    /// A PostgreSQL database: `postgres://` or `postgresql://`.
    Postgres(String),
}

impl Location {
    pub fn parse(text: &str) -> Location {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Location::Postgres(text.to_string())
        } else {
            Location::Sqlite(PathBuf::from(text.strip_prefix("sqlite:").unwrap_or(text)))
        }
    }

    /// The default key file of this store (`secrets.key` beside an SQLite file); a shared
    /// store has none.
    pub fn default_key_file(&self) -> Option<PathBuf> {
        match self {
            Location::Sqlite(path) => Some(
                path.parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."))
                    .join(crate::seal::DEFAULT_KEY_FILE),
            ),
            Location::Postgres(_) => None,
        }
    }

    /// Opens the store, creating and migrating it as needed.
    pub fn open(&self) -> Result<Arc<dyn WorkspaceStore>> {
        Ok(match self {
            Location::Sqlite(path) => Arc::new(SqliteStore::open(path)?),
            Location::Postgres(url) => Arc::new(PostgresStore::connect(url)?),
        })
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&crate::url_redaction::redact_url(url)),
        }
    }
}

impl Default for Location {
    fn default() -> Self {
        Location::Sqlite(PathBuf::from(DEFAULT_PATH))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations() {
        assert_eq!(Location::parse("a/b.db"), Location::Sqlite("a/b.db".into()));
        assert_eq!(Location::parse("sqlite:x.db"), Location::Sqlite("x.db".into()));
        assert!(matches!(Location::parse("postgres://u@h/db"), Location::Postgres(_)));
        assert!(matches!(Location::parse("postgresql://h/db"), Location::Postgres(_)));
        assert_eq!(
            Location::parse("postgres://u:pw@h/db").to_string(),
            "postgres://***@h/db"
        );
        assert_eq!(
            Location::parse(".svc/workspace.db").default_key_file(),
            Some(PathBuf::from(".svc/secrets.key"))
        );
        assert_eq!(
            Location::parse("w.db").default_key_file(),
            Some(PathBuf::from("./secrets.key"))
        );
        assert_eq!(Location::parse("postgres://h/db").default_key_file(), None);
    }
}
