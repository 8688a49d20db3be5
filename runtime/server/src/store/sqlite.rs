//! The embedded store: one SQLite file, opened in WAL mode so that a running server
//! reads while `svc keys` / `svc secrets` write. Schema changes are numbered migrations
//! tracked in `PRAGMA user_version`.
//!
//! Secret values are stored sealed (see [`crate::seal`]); the file is also created
//! readable by its owner only.

use super::{Result, SecretInfo, StoreError, StoredAsset, WorkspaceStore};
use crate::apikey::KeyRecord;
use parking_lot::Mutex;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};

/// Migrations, applied in order; never edit one that has shipped, add a new one.
const MIGRATIONS: &[&str] = &[
    // 1: keys, secrets, assets, and a revision counter kept by triggers.
    r#"
    CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        owner TEXT NOT NULL,
        prefix TEXT NOT NULL,
        hash BLOB NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER
    );
    CREATE TABLE secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE TABLE assets (
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        json TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (kind, name)
    );
    CREATE TABLE revisions (
        what TEXT PRIMARY KEY,
        value INTEGER NOT NULL
    );
    INSERT INTO revisions (what, value) VALUES ('keys', 0);
    CREATE TRIGGER keys_insert AFTER INSERT ON api_keys BEGIN UPDATE revisions SET value = value + 1 WHERE what = 'keys'; END;
    CREATE TRIGGER keys_update AFTER UPDATE ON api_keys BEGIN UPDATE revisions SET value = value + 1 WHERE what = 'keys'; END;
    CREATE TRIGGER keys_delete AFTER DELETE ON api_keys BEGIN UPDATE revisions SET value = value + 1 WHERE what = 'keys'; END;
    "#,
    // 2: secret values sealed. Values stored in clear by schema 1 wait in
    // `plaintext_secrets` until a command or server with the key seals them.
    r#"
    ALTER TABLE secrets RENAME TO plaintext_secrets;
    CREATE TABLE secrets (
        name TEXT PRIMARY KEY,
        sealed BLOB NOT NULL,
        updated_at INTEGER NOT NULL
    );
    "#,
];

pub struct SqliteStore {
    path: PathBuf,
    conn: Mutex<Connection>,
}

/// SQLite writes its journal files (`-wal`, `-shm`, `-journal`) beside the database by
/// name, following links: one planted there (a cloned project's `.svc/`) would have the
/// store's pages written into whatever it points to. The database itself may be a link
/// (SQLite resolves it, and its companions sit beside the target); a companion may not.
fn refuse_linked_companions(path: &Path) -> Result<()> {
    let resolved = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut companion = resolved.clone().into_os_string();
        companion.push(suffix);
        let companion = PathBuf::from(companion);
        if std::fs::symlink_metadata(&companion).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(StoreError(format!(
                "`{}` is a symbolic link: SQLite would write the store's pages through it; remove it (SQLite makes the file itself)",
                companion.display()
            )));
        }
    }
    Ok(())
}

impl SqliteStore {
    /// Opens (creating if needed) the store at `path` and applies pending migrations.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError(format!("cannot create `{}`: {e}", dir.display())))?;
        }
        refuse_linked_companions(path)?;
        let existed = path.exists();
        let conn = Connection::open(path)
            .map_err(|e| StoreError(format!("cannot open the workspace store `{}`: {e}", path.display())))?;
        if !existed {
            restrict_permissions(path);
        }
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrate(&conn)?;
        Ok(SqliteStore {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    /// An in-memory store (tests, `svc dev`).
    pub fn in_memory() -> Result<SqliteStore> {
        let conn = Connection::open_in_memory()?;
        migrate(&conn)?;
        Ok(SqliteStore {
            path: PathBuf::from(":memory:"),
            conn: Mutex::new(conn),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version.
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self.conn.lock().query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }
}

#[cfg(unix)]
fn restrict_permissions(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
}

#[cfg(not(unix))]
fn restrict_permissions(_path: &Path) {}

fn migrate(conn: &Connection) -> Result<()> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current as usize > MIGRATIONS.len() {
        return Err(StoreError(format!(
            "the workspace store has schema version {current}, newer than this svc understands ({}); upgrade svc",
            MIGRATIONS.len()
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}

/// Reads a row of `select_keys!("api_keys", …)`, by position.
fn key_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<KeyRecord> {
    let mut hash = [0u8; 32];
    if let Ok(stored) = <&[u8; 32]>::try_from(r.get_ref(4)?.as_blob()?) {
        hash = *stored;
    }
    Ok(KeyRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        owner: r.get(2)?,
        prefix: r.get(3)?,
        hash,
        created_at: r.get(5)?,
        expires_at: r.get(6)?,
        revoked_at: r.get(7)?,
    })
}

impl SqliteStore {
    /// Every row `query` selects, each read by `read`.
    fn all<T>(&self, query: &str, read: fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>) -> Result<Vec<T>> {
        let conn = self.conn.lock();
        let mut stmt = conn.prepare(query)?;
        let rows = stmt.query_map([], read)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

impl WorkspaceStore for SqliteStore {
    fn describe(&self) -> String {
        format!("SQLite {}", self.path.display())
    }

    fn insert_key(&self, k: &KeyRecord) -> Result<()> {
        self.conn.lock().execute(
            "INSERT INTO api_keys (id, name, owner, prefix, hash, created_at, expires_at, revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![k.id, k.name, k.owner, k.prefix, k.hash.as_slice(), k.created_at, k.expires_at, k.revoked_at],
        )?;
        Ok(())
    }

    fn list_keys(&self) -> Result<Vec<KeyRecord>> {
        self.all(select_keys!("api_keys", "ORDER BY created_at, id"), key_from_row)
    }

    fn index_keys(&self) -> Result<Vec<KeyRecord>> {
        self.all(select_keys!("api_keys"), key_from_row)
    }

    fn find_key(&self, hash: &[u8; 32]) -> Result<Option<KeyRecord>> {
        let conn = self.conn.lock();
        Ok(conn
            .query_row(select_keys!("api_keys", "WHERE hash = ?1"), [&hash[..]], key_from_row)
            .optional()?)
    }

    fn revoke_key(&self, id_or_name: &str, now: i64) -> Result<KeyRecord> {
        let conn = self.conn.lock();
        let by_id: Option<KeyRecord> = conn
            .query_row(select_keys!("api_keys", "WHERE id = ?1"), [id_or_name], key_from_row)
            .optional()?;
        let record = match by_id {
            Some(r) => r,
            None => {
                let mut stmt = conn.prepare(select_keys!("api_keys", "WHERE name = ?1 AND revoked_at IS NULL"))?;
                let matches: Vec<KeyRecord> = stmt
                    .query_map([id_or_name], key_from_row)?
                    .collect::<rusqlite::Result<_>>()?;
                match matches.len() {
                    0 => {
                        return Err(StoreError(format!(
                            "no active key has the id or name `{id_or_name}` (see `svc keys list`)"
                        )));
                    }
                    1 => matches.into_iter().next().expect("one"),
                    n => {
                        return Err(StoreError(format!(
                            "{n} active keys are named `{id_or_name}`; revoke one by id (see `svc keys list`)"
                        )));
                    }
                }
            }
        };
        if record.revoked_at.is_some() {
            return Err(StoreError(format!("key `{}` is already revoked", record.id)));
        }
        conn.execute(
            "UPDATE api_keys SET revoked_at = ?1 WHERE id = ?2",
            params![now, record.id],
        )?;
        Ok(KeyRecord {
            revoked_at: Some(now),
            ..record
        })
    }

    fn set_key_expiry(&self, id: &str, expires_at: i64) -> Result<()> {
        let n = self.conn.lock().execute(
            "UPDATE api_keys SET expires_at = ?1 WHERE id = ?2",
            params![expires_at, id],
        )?;
        if n == 0 {
            return Err(StoreError(format!("no key has the id `{id}`")));
        }
        Ok(())
    }

    fn keys_revision(&self) -> Result<i64> {
        Ok(self
            .conn
            .lock()
            .query_row("SELECT value FROM revisions WHERE what = 'keys'", [], |r| r.get(0))?)
    }

    fn set_secret(&self, name: &str, sealed: &[u8], updated_at: i64) -> Result<()> {
        self.conn.lock().execute(
            "INSERT INTO secrets (name, sealed, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT(name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at",
            params![name, sealed, updated_at],
        )?;
        Ok(())
    }

    fn set_secret_if_absent(&self, name: &str, sealed: &[u8], updated_at: i64) -> Result<bool> {
        let inserted = self.conn.lock().execute(
            "INSERT INTO secrets (name, sealed, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT(name) DO NOTHING",
            params![name, sealed, updated_at],
        )?;
        Ok(inserted == 1)
    }

    fn secret(&self, name: &str) -> Result<Option<Vec<u8>>> {
        Ok(self
            .conn
            .lock()
            .query_row("SELECT sealed FROM secrets WHERE name = ?1", [name], |r| r.get(0))
            .optional()?)
    }

    fn reseal_secrets(&self, sealed: &[(String, Vec<u8>)]) -> Result<()> {
        let mut conn = self.conn.lock();
        let tx = conn.transaction()?;
        for (name, value) in sealed {
            tx.execute("UPDATE secrets SET sealed = ?1 WHERE name = ?2", params![value, name])?;
        }
        tx.commit()?;
        Ok(())
    }

    fn plaintext_secrets(&self) -> Result<Vec<(String, String, i64)>> {
        let conn = self.conn.lock();
        let mut stmt = conn.prepare("SELECT name, value, updated_at FROM plaintext_secrets ORDER BY name")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn forget_plaintext_secrets(&self) -> Result<()> {
        // The rows go, and so do the pages that held them: VACUUM rewrites the file.
        let conn = self.conn.lock();
        let n = conn.execute("DELETE FROM plaintext_secrets", [])?;
        if n > 0 {
            conn.execute_batch("VACUUM")?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        }
        Ok(())
    }

    fn list_secrets(&self) -> Result<Vec<SecretInfo>> {
        self.all("SELECT name, updated_at FROM secrets ORDER BY name", |r| {
            Ok(SecretInfo {
                name: r.get(0)?,
                updated_at: r.get(1)?,
            })
        })
    }

    fn unset_secret(&self, name: &str) -> Result<bool> {
        Ok(self
            .conn
            .lock()
            .execute("DELETE FROM secrets WHERE name = ?1", [name])?
            > 0)
    }

    fn list_assets(&self) -> Result<Vec<StoredAsset>> {
        self.all("SELECT kind, name, json FROM assets ORDER BY kind, name", |r| {
            Ok(StoredAsset {
                kind: r.get(0)?,
                name: r.get(1)?,
                json: r.get(2)?,
            })
        })
    }

    fn replace_assets(&self, assets: &[StoredAsset], now: i64) -> Result<()> {
        let mut conn = self.conn.lock();
        let tx = conn.transaction()?;
        tx.execute("DELETE FROM assets", [])?;
        for a in assets {
            tx.execute(
                "INSERT INTO assets (kind, name, json, updated_at) VALUES (?1, ?2, ?3, ?4)",
                params![a.kind, a.name, a.json, now],
            )?;
        }
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apikey::format;

    fn key(name: &str) -> (String, KeyRecord) {
        let k = format::generate();
        let r = KeyRecord {
            id: format!("key_{name}"),
            name: name.into(),
            owner: "alice".into(),
            prefix: format::display_prefix(&k),
            hash: format::hash(&k),
            created_at: 1,
            expires_at: None,
            revoked_at: None,
        };
        (k, r)
    }

    #[cfg(unix)]
    #[test]
    fn a_journal_file_planted_as_a_link_is_refused_and_nothing_is_written_through_it() {
        let dir = std::env::temp_dir().join(format!("svc-sqlite-planted-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("bashrc");
        std::fs::write(&victim, "keep me").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("workspace.db-wal")).unwrap();
        let e = SqliteStore::open(&dir.join("workspace.db")).err().unwrap();
        assert!(e.0.contains("workspace.db-wal` is a symbolic link"), "{}", e.0);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn persists_across_opens_and_migrates_once() {
        let dir = std::env::temp_dir().join(format!("svc-store-{}", std::process::id()));
        let path = dir.join("w.db");
        let _ = std::fs::remove_dir_all(&dir);
        {
            let s = SqliteStore::open(&path).unwrap();
            assert_eq!(s.schema_version().unwrap(), 2);
            s.insert_key(&key("ci").1).unwrap();
            s.set_secret("API_TOKEN", b"sealed-v1", 5).unwrap();
        }
        let s = SqliteStore::open(&path).unwrap();
        assert_eq!(s.list_keys().unwrap().len(), 1);
        assert_eq!(s.secret("API_TOKEN").unwrap().as_deref(), Some(&b"sealed-v1"[..]));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn keys_revision_moves_on_every_change() {
        let s = SqliteStore::in_memory().unwrap();
        let r0 = s.keys_revision().unwrap();
        s.insert_key(&key("a").1).unwrap();
        let r1 = s.keys_revision().unwrap();
        assert!(r1 > r0);
        s.revoke_key("a", 10).unwrap();
        assert!(s.keys_revision().unwrap() > r1);
        assert!(
            s.revoke_key("a", 11).is_err(),
            "already revoked (by name: no active key)"
        );
        assert!(s.revoke_key("key_a", 11).unwrap_err().0.contains("already revoked"));
    }

    #[test]
    fn secrets_and_assets() {
        let s = SqliteStore::in_memory().unwrap();
        s.set_secret("B", b"1", 1).unwrap();
        s.set_secret("A", b"2", 1).unwrap();
        s.set_secret("A", b"3", 2).unwrap();
        assert_eq!(
            s.list_secrets()
                .unwrap()
                .iter()
                .map(|i| i.name.as_str())
                .collect::<Vec<_>>(),
            ["A", "B"]
        );
        assert_eq!(s.secret("A").unwrap().as_deref(), Some(&b"3"[..]));
        s.reseal_secrets(&[("A".into(), b"4".to_vec())]).unwrap();
        assert_eq!(s.secret("A").unwrap().as_deref(), Some(&b"4"[..]));
        assert!(s.unset_secret("A").unwrap());
        assert!(!s.unset_secret("A").unwrap());
        let assets = vec![StoredAsset {
            kind: "enum".into(),
            name: "Color".into(),
            json: "{}".into(),
        }];
        s.replace_assets(&assets, 1).unwrap();
        assert_eq!(s.list_assets().unwrap(), assets);
        s.replace_assets(&[], 2).unwrap();
        assert!(s.list_assets().unwrap().is_empty());
    }

    #[test]
    fn a_schema_1_store_keeps_its_clear_values_aside_until_they_are_sealed() {
        let dir = std::env::temp_dir().join(format!("svc-store-v1-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("w.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(MIGRATIONS[0]).unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
            conn.execute(
                "INSERT INTO secrets (name, value, updated_at) VALUES ('TOKEN', 'clear-value-1', 7)",
                [],
            )
            .unwrap();
        }
        let s = SqliteStore::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), 2);
        assert_eq!(s.secret("TOKEN").unwrap(), None, "not readable as a sealed value");
        assert_eq!(
            s.plaintext_secrets().unwrap(),
            vec![("TOKEN".to_string(), "clear-value-1".to_string(), 7)]
        );
        s.forget_plaintext_secrets().unwrap();
        assert!(s.plaintext_secrets().unwrap().is_empty());
        drop(s);
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !bytes.windows(13).any(|w| w == b"clear-value-1"),
            "the clear value is gone from the file"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
