//! The workspace store: API keys (as hashes), secret values, and synced assets.
//!
//! [`WorkspaceStore`] is the seam for a shared database later; [`sqlite::SqliteStore`]
//! is the embedded default. The path comes from `--store` or `SVC_STORE`, default
//! `.svc/workspace.db`.

pub mod sqlite;

use crate::apikey::KeyRecord;
pub use sqlite::SqliteStore;

/// The environment variable naming the store's path.
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

pub trait WorkspaceStore: Send + Sync {
    fn insert_key(&self, record: &KeyRecord) -> Result<()>;
    fn list_keys(&self) -> Result<Vec<KeyRecord>>;
    /// Revokes by id or by name (a name must be unique among active keys).
    fn revoke_key(&self, id_or_name: &str, now: i64) -> Result<KeyRecord>;
    /// Sets when a key stops working (rotation with a grace period).
    fn set_key_expiry(&self, id: &str, expires_at: i64) -> Result<()>;
    /// Changes whenever any key is added, revoked or removed.
    fn keys_revision(&self) -> Result<i64>;

    fn set_secret(&self, name: &str, value: &str, now: i64) -> Result<()>;
    fn secret(&self, name: &str) -> Result<Option<String>>;
    fn list_secrets(&self) -> Result<Vec<SecretInfo>>;
    /// Whether there was a value.
    fn unset_secret(&self, name: &str) -> Result<bool>;

    fn list_assets(&self) -> Result<Vec<StoredAsset>>;
    /// Replaces every asset with `assets`, in one transaction.
    fn replace_assets(&self, assets: &[StoredAsset], now: i64) -> Result<()>;
}
