//! `svc store copy`: moves a workspace from one store to another (SQLite to PostgreSQL,
//! usually), keys, sealed secrets and assets, as they are. Sealed values are copied
//! without being opened, so no secrets key is needed and none changes.

use super::{Result, StoreError, WorkspaceStore};

/// What was copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Copied {
    pub keys: usize,
    pub secrets: usize,
    pub assets: usize,
}

/// Copies everything in `from` into `to`, which must hold no keys and no secrets (a copy
/// never overwrites or merges a workspace). Values still stored in clear by an old
/// SQLite store must be sealed first (any `svc secrets` command does it).
pub fn copy(from: &dyn WorkspaceStore, to: &dyn WorkspaceStore, now: i64) -> Result<Copied> {
    if !from.plaintext_secrets()?.is_empty() {
        return Err(StoreError(format!(
            "{} still holds secret values in clear (from an older svc); run `svc secrets list` against it once to seal them, then copy",
            from.describe()
        )));
    }
    if !to.list_keys()?.is_empty() || !to.list_secrets()?.is_empty() {
        return Err(StoreError(format!(
            "{} already holds keys or secrets; copy into an empty store",
            to.describe()
        )));
    }
    let keys = from.list_keys()?;
    for k in &keys {
        to.insert_key(k)?;
    }
    let secrets = from.list_secrets()?;
    for s in &secrets {
        let Some(sealed) = from.secret(&s.name)? else { continue };
        to.set_secret(&s.name, &sealed, s.updated_at)?;
    }
    let assets = from.list_assets()?;
    to.replace_assets(&assets, now)?;
    Ok(Copied {
        keys: keys.len(),
        secrets: secrets.len(),
        assets: assets.len(),
    })
}
