//! The shared store: one PostgreSQL database for N server instances and the CLI.
//!
//! - **Same behaviour as SQLite**: the same operations with the same answers (the tests
//!   of `tests/stores.rs` run against both).
//! - **Migrations safe under concurrency**: each start runs the pending migrations in one
//!   transaction that first takes a transaction-level advisory lock, so N instances
//!   starting at once apply each migration exactly once (DDL is transactional in
//!   PostgreSQL). Tables are prefixed `svc_`, so the store can share a database.
//! - **Key changes pushed**: a statement trigger on `svc_api_keys` bumps a revision and
//!   sends `NOTIFY svc_keys` (delivered on commit). A listener connection per server turns
//!   it into [`KeyChanges`]; when that connection drops it reconnects (every second) and
//!   asks for a full reload, so changes made while it was away are not missed. The
//!   server's reloader also polls the revision, as a backstop.
//! - **A synchronous face**: [`WorkspaceStore`] is synchronous (the CLI and SQLite are),
//!   so this store runs its own small tokio runtime (one thread) and each call waits for
//!   its query there, with a deadline. Servers call it off the request path only.
//! - **TLS, verified, by default beyond loopback** ([`TlsPolicy`]): TLS with rustls,
//!   verifying the server's certificate and name against the Mozilla roots, or against
//!   the CAs of `sslrootcert=PATH` ([`crate::tls_roots`]). libpq's default, `prefer`,
//!   falls back to plaintext when the server (or a man in the middle) declines TLS, which
//!   gives away the password and lets the attacker write key rows; svc takes it only
//!   when the URL says so, with a start-up warning.

use super::{KeyChanges, Result, SecretInfo, StoreError, StoredAsset, WorkspaceStore};
use crate::apikey::KeyRecord;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio_postgres::{AsyncMessage, Row};

/// The deadline of one store operation (a query, or a migration run).
const OPERATION_TIMEOUT: Duration = Duration::from_secs(10);
/// The deadline of one connection attempt, unless the URL sets `connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// The channel of key-change notifications.
pub const KEYS_CHANNEL: &str = "svc_keys";
/// The advisory lock taken by migrations (an arbitrary constant: "svc" in ASCII).
const MIGRATION_LOCK: i64 = 0x0073_7663;

/// Migrations, applied in order; never edit one that has shipped, add a new one.
const MIGRATIONS: &[&str] = &[
    // 1: keys, sealed secrets, assets, the key revision and its notification.
    r#"
    CREATE TABLE svc_api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        owner TEXT NOT NULL,
        prefix TEXT NOT NULL,
        hash BYTEA NOT NULL UNIQUE,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        revoked_at BIGINT
    );
    CREATE TABLE svc_secrets (
        name TEXT PRIMARY KEY,
        sealed BYTEA NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE TABLE svc_assets (
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        json TEXT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (kind, name)
    );
    CREATE TABLE svc_revisions (
        what TEXT PRIMARY KEY,
        value BIGINT NOT NULL
    );
    INSERT INTO svc_revisions (what, value) VALUES ('keys', 0);
    CREATE FUNCTION svc_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE revision BIGINT;
    BEGIN
        UPDATE svc_revisions SET value = value + 1 WHERE what = 'keys' RETURNING value INTO revision;
        PERFORM pg_notify('svc_keys', revision::text);
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER svc_keys_changed AFTER INSERT OR UPDATE OR DELETE ON svc_api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION svc_keys_changed();
    "#,
];

type Tls = tokio_postgres_rustls::MakeRustlsConnect;

pub struct PostgresStore {
    /// Its own runtime (taken out on drop, so that dropping the store inside another
    /// runtime does not panic).
    runtime: Option<tokio::runtime::Runtime>,
    pool: Pool,
    display: String,
    changes: Arc<KeyChanges>,
    /// What start-up should say about this connection (a TLS mode that allows plaintext).
    warnings: Vec<String>,
}

impl PostgresStore {
    /// Connects, applies pending migrations, and starts listening for key changes.
    pub fn connect(url: &str) -> Result<PostgresStore> {
        let display = format!("PostgreSQL {}", crate::url_redaction::redact_url(url));
        let (url, root_cert) =
            crate::tls_roots::take_root_cert(url).map_err(|e| StoreError(format!("{display}: {e}")))?;
        // tokio-postgres knows three of libpq's six modes: svc reads the parameter itself.
        let (url, sslmode) = crate::tls_roots::take_param(&url, "sslmode");
        let mut config = tokio_postgres::Config::from_str(&url)
            .map_err(|e| StoreError(format!("{display}: not a PostgreSQL URL: {e}")))?;
        let policy = TlsPolicy::choose(sslmode.as_deref(), root_cert.is_some(), only_loopback(&config))
            .map_err(|e| StoreError(format!("{display}: {e}")))?;
        config.ssl_mode(policy.ssl_mode());
        let warnings: Vec<String> = policy
            .warning()
            .map(|w| format!("{display}: {w}"))
            .into_iter()
            .collect();
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("svc");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("svc-postgres")
            .enable_all()
            .build()
            .map_err(|e| StoreError(format!("cannot start the PostgreSQL client: {e}")))?;
        let tls = tls_connector(root_cert.as_ref())?;
        let manager = Manager::from_config(
            config.clone(),
            tls.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(4)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(OPERATION_TIMEOUT))
            .create_timeout(Some(OPERATION_TIMEOUT))
            .build()
            .map_err(|e| StoreError(format!("{display}: {e}")))?;
        let store = PostgresStore {
            runtime: Some(runtime),
            pool,
            display,
            changes: Arc::new(KeyChanges::default()),
            warnings,
        };
        store.run(|pool| async move { migrate(&pool).await })?;
        let changes = store.changes.clone();
        let display = store.display.clone();
        store.handle().spawn(listen(config, tls, changes, display));
        Ok(store)
    }

    fn handle(&self) -> &tokio::runtime::Handle {
        self.runtime
            .as_ref()
            .expect("the runtime lives as long as the store")
            .handle()
    }

    /// Runs `op` on the store's runtime and waits for it, within [`OPERATION_TIMEOUT`].
    /// Works from any thread, inside another runtime or not.
    fn run<T, F, Fut>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Pool) -> Fut,
        Fut: Future<Output = std::result::Result<T, PgError>> + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let future = op(self.pool.clone());
        self.handle().spawn(async move {
            let outcome = match tokio::time::timeout(OPERATION_TIMEOUT, future).await {
                Ok(r) => r,
                Err(_) => Err(PgError::Message(format!(
                    "no answer within {} s",
                    OPERATION_TIMEOUT.as_secs()
                ))),
            };
            let _ = tx.send(outcome);
        });
        match rx.recv() {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(PgError::Message(m))) => Err(StoreError(format!("{}: {m}", self.display))),
            Ok(Err(PgError::Plain(m))) => Err(StoreError(m)),
            Err(_) => Err(StoreError(format!("{}: the client stopped", self.display))),
        }
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// An error inside the store's runtime: from PostgreSQL or the pool (prefixed with the
/// store when reported), or a message for the user as it is.
enum PgError {
    Message(String),
    Plain(String),
}

impl From<tokio_postgres::Error> for PgError {
    fn from(e: tokio_postgres::Error) -> Self {
        // `Display` of a server error is only "db error"; the detail is in its source.
        // Nor does a failed handshake say why ("invalid peer certificate: UnknownIssuer"
        // is the source's): the chain of sources is written out.
        let detail = match e.as_db_error() {
            Some(db) => db.message().to_string(),
            None => crate::error::with_causes(e.to_string(), &e),
        };
        PgError::Message(detail)
    }
}

impl From<deadpool_postgres::PoolError> for PgError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        PgError::Message(match e {
            deadpool_postgres::PoolError::Backend(e) => return e.into(),
            other => other.to_string(),
        })
    }
}

/// TLS with the Mozilla roots, or with only the CAs of `sslrootcert` (as libpq does).
/// What a connection does about TLS, from the URL's `sslmode` (libpq's names) and where it
/// goes. Whenever TLS is used it is verified: certificate chain and host name, always.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsPolicy {
    /// TLS, verified, or no connection: `require`, `verify-ca`, `verify-full`, a
    /// `sslrootcert`, and the default beyond loopback.
    Verified,
    /// TLS when the server offers it, else plaintext: the default on loopback (where no
    /// one is in the middle), or `prefer` / `allow` asked for by name elsewhere.
    Opportunistic { asked: bool },
    /// Plaintext: `sslmode=disable`.
    Plaintext,
}

impl TlsPolicy {
    pub fn choose(sslmode: Option<&str>, root_cert: bool, loopback: bool) -> std::result::Result<TlsPolicy, String> {
        Ok(match sslmode {
            None if root_cert || !loopback => TlsPolicy::Verified,
            None => TlsPolicy::Opportunistic { asked: false },
            Some("require" | "verify-ca" | "verify-full") => TlsPolicy::Verified,
            // A CA to verify against means TLS: never fall back to a plain connection.
            Some("prefer" | "allow") if root_cert => TlsPolicy::Verified,
            // On loopback nobody is in the middle: nothing to warn about.
            Some("prefer" | "allow") => TlsPolicy::Opportunistic { asked: !loopback },
            Some("disable") if root_cert => return Err("sslmode=disable with sslrootcert: choose one".into()),
            Some("disable") => TlsPolicy::Plaintext,
            Some(other) => {
                return Err(format!(
                    "sslmode=`{other}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
                ));
            }
        })
    }

    fn ssl_mode(self) -> tokio_postgres::config::SslMode {
        use tokio_postgres::config::SslMode;
        match self {
            TlsPolicy::Verified => SslMode::Require,
            TlsPolicy::Opportunistic { .. } => SslMode::Prefer,
            TlsPolicy::Plaintext => SslMode::Disable,
        }
    }

    /// The start-up warning for a mode that lets the password cross the network in clear.
    pub fn warning(self) -> Option<&'static str> {
        match self {
            TlsPolicy::Opportunistic { asked: true } => Some(
                "sslmode=prefer falls back to plaintext when the server (or a man in the middle) declines TLS; remove it to require verified TLS",
            ),
            TlsPolicy::Plaintext => {
                Some("sslmode=disable sends the password and every key in plaintext; remove it to require verified TLS")
            }
            _ => None,
        }
    }
}

/// Whether every host of the URL is this machine: a Unix socket, `localhost`, or a
/// loopback address. A `hostaddr` does not count: TLS verifies the host's name.
fn only_loopback(config: &tokio_postgres::Config) -> bool {
    use tokio_postgres::config::Host;
    let hosts = config.get_hosts();
    !hosts.is_empty()
        && hosts.iter().all(|host| match host {
            Host::Tcp(name) => {
                let name = name.trim_start_matches('[').trim_end_matches(']');
                name.eq_ignore_ascii_case("localhost")
                    || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
            }
            #[cfg(unix)]
            Host::Unix(_) => true,
        })
}

fn tls_connector(root_cert: Option<&crate::tls_roots::RootCert>) -> Result<Tls> {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    match root_cert {
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Some(ca) => {
            let bad = |e: &dyn std::fmt::Display| StoreError(format!("sslrootcert `{}`: {e}", ca.path));
            for cert in CertificateDer::pem_slice_iter(&ca.pem) {
                roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
            }
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError(format!("TLS for PostgreSQL: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

async fn migrate(pool: &Pool) -> std::result::Result<(), PgError> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    // Serialises concurrent starts; released when the transaction ends.
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS svc_schema (version INTEGER NOT NULL)")
        .await?;
    let current: i32 = match tx.query_opt("SELECT version FROM svc_schema", &[]).await? {
        Some(row) => row.get(0),
        None => {
            tx.execute("INSERT INTO svc_schema (version) VALUES (0)", &[]).await?;
            0
        }
    };
    if current as usize > MIGRATIONS.len() {
        return Err(PgError::Message(format!(
            "the workspace store has schema version {current}, newer than this svc understands ({}); upgrade svc",
            MIGRATIONS.len()
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        tx.batch_execute(sql).await?;
        tx.execute("UPDATE svc_schema SET version = $1", &[&((i + 1) as i32)])
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Listens for key changes on a connection of its own, for the life of the store.
async fn listen(config: tokio_postgres::Config, tls: Tls, changes: Arc<KeyChanges>, store_name: String) {
    let mut was_down = false;
    loop {
        match config.connect(tls.clone()).await {
            Ok((client, mut connection)) => {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                let driver = tokio::spawn(async move {
                    loop {
                        match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                            Some(Ok(AsyncMessage::Notification(_))) => {
                                if tx.send(()).is_err() {
                                    return;
                                }
                            }
                            Some(Ok(_)) => {}
                            Some(Err(_)) | None => return,
                        }
                    }
                });
                if client.batch_execute(&format!("LISTEN {KEYS_CHANNEL}")).await.is_ok() {
                    if was_down {
                        tracing::info!(store = %store_name, "listening for key changes again");
                    }
                    was_down = false;
                    // Whatever changed while we were not listening: reload everything.
                    changes.reload_all();
                    while rx.recv().await.is_some() {
                        changes.changed();
                    }
                }
                driver.abort();
                if !was_down {
                    tracing::warn!(store = %store_name, "lost the connection that listens for key changes; reconnecting");
                }
            }
            Err(e) => {
                if !was_down {
                    tracing::warn!(store = %store_name, error = %e, "cannot listen for key changes; retrying every second");
                }
            }
        }
        was_down = true;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Reads a row of `select_keys!("svc_api_keys", …)`, by position. A column of another
/// type (a schema changed by hand) is an error, not a panic.
fn key_from_row(r: &Row) -> std::result::Result<KeyRecord, tokio_postgres::Error> {
    let mut hash = [0u8; 32];
    if let Ok(stored) = <&[u8; 32]>::try_from(r.try_get::<_, &[u8]>(4)?) {
        hash = *stored;
    }
    Ok(KeyRecord {
        id: r.try_get(0)?,
        name: r.try_get(1)?,
        owner: r.try_get(2)?,
        prefix: r.try_get(3)?,
        hash,
        created_at: r.try_get(5)?,
        expires_at: r.try_get(6)?,
        revoked_at: r.try_get(7)?,
    })
}

impl PostgresStore {
    /// Every row `query` selects, each read by `read`.
    fn all<T: Send + 'static>(
        &self,
        query: &'static str,
        read: fn(&Row) -> std::result::Result<T, tokio_postgres::Error>,
    ) -> Result<Vec<T>> {
        self.run(|pool| async move {
            let client = pool.get().await?;
            let rows = client.query(query, &[]).await?;
            Ok(rows.iter().map(read).collect::<std::result::Result<_, _>>()?)
        })
    }
}

impl WorkspaceStore for PostgresStore {
    fn describe(&self) -> String {
        self.display.clone()
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn insert_key(&self, k: &KeyRecord) -> Result<()> {
        let k = k.clone();
        self.run(|pool| async move {
            let client = pool.get().await?;
            client
                .execute(
                    "INSERT INTO svc_api_keys (id, name, owner, prefix, hash, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    &[&k.id, &k.name, &k.owner, &k.prefix, &k.hash.as_slice(), &k.created_at, &k.expires_at, &k.revoked_at],
                )
                .await?;
            Ok(())
        })
    }

    fn list_keys(&self) -> Result<Vec<KeyRecord>> {
        self.all(select_keys!("svc_api_keys", "ORDER BY created_at, id"), key_from_row)
    }

    fn index_keys(&self) -> Result<Vec<KeyRecord>> {
        self.all(select_keys!("svc_api_keys"), key_from_row)
    }

    fn find_key(&self, hash: &[u8; 32]) -> Result<Option<KeyRecord>> {
        let hash = hash.to_vec();
        self.run(|pool| async move {
            let client = pool.get().await?;
            let row = client
                .query_opt(select_keys!("svc_api_keys", "WHERE hash = $1"), &[&hash])
                .await?;
            Ok(row.as_ref().map(key_from_row).transpose()?)
        })
    }

    fn revoke_key(&self, id_or_name: &str, now: i64) -> Result<KeyRecord> {
        let id_or_name = id_or_name.to_string();
        self.run(|pool| async move {
            let mut client = pool.get().await?;
            let tx = client.transaction().await?;
            let by_id = tx
                .query_opt(select_keys!("svc_api_keys", "WHERE id = $1 FOR UPDATE"), &[&id_or_name])
                .await?;
            let record = match by_id {
                Some(row) => key_from_row(&row)?,
                None => {
                    let rows = tx
                        .query(
                            select_keys!("svc_api_keys", "WHERE name = $1 AND revoked_at IS NULL FOR UPDATE"),
                            &[&id_or_name],
                        )
                        .await?;
                    match rows.len() {
                        0 => {
                            return Err(PgError::Plain(format!(
                                "no active key has the id or name `{id_or_name}` (see `svc keys list`)"
                            )));
                        }
                        1 => key_from_row(&rows[0])?,
                        n => {
                            return Err(PgError::Plain(format!(
                                "{n} active keys are named `{id_or_name}`; revoke one by id (see `svc keys list`)"
                            )));
                        }
                    }
                }
            };
            if record.revoked_at.is_some() {
                return Err(PgError::Plain(format!("key `{}` is already revoked", record.id)));
            }
            tx.execute(
                "UPDATE svc_api_keys SET revoked_at = $1 WHERE id = $2",
                &[&now, &record.id],
            )
            .await?;
            tx.commit().await?;
            Ok(KeyRecord {
                revoked_at: Some(now),
                ..record
            })
        })
    }

    fn set_key_expiry(&self, id: &str, expires_at: i64) -> Result<()> {
        let id = id.to_string();
        self.run(|pool| async move {
            let client = pool.get().await?;
            let n = client
                .execute(
                    "UPDATE svc_api_keys SET expires_at = $1 WHERE id = $2",
                    &[&expires_at, &id],
                )
                .await?;
            if n == 0 {
                return Err(PgError::Plain(format!("no key has the id `{id}`")));
            }
            Ok(())
        })
    }

    fn keys_revision(&self) -> Result<i64> {
        self.run(|pool| async move {
            let client = pool.get().await?;
            let row = client
                .query_one("SELECT value FROM svc_revisions WHERE what = 'keys'", &[])
                .await?;
            Ok(row.get(0))
        })
    }

    fn set_secret(&self, name: &str, sealed: &[u8], updated_at: i64) -> Result<()> {
        let (name, sealed) = (name.to_string(), sealed.to_vec());
        self.run(|pool| async move {
            let client = pool.get().await?;
            client
                .execute(
                    "INSERT INTO svc_secrets (name, sealed, updated_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at",
                    &[&name, &sealed, &updated_at],
                )
                .await?;
            Ok(())
        })
    }

    fn set_secret_if_absent(&self, name: &str, sealed: &[u8], updated_at: i64) -> Result<bool> {
        let (name, sealed) = (name.to_string(), sealed.to_vec());
        self.run(|pool| async move {
            let client = pool.get().await?;
            let inserted = client
                .execute(
                    "INSERT INTO svc_secrets (name, sealed, updated_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
                    &[&name, &sealed, &updated_at],
                )
                .await?;
            Ok(inserted == 1)
        })
    }

    fn secret(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let name = name.to_string();
        self.run(|pool| async move {
            let client = pool.get().await?;
            let row = client
                .query_opt("SELECT sealed FROM svc_secrets WHERE name = $1", &[&name])
                .await?;
            Ok(row.map(|r| r.get(0)))
        })
    }

    fn list_secrets(&self) -> Result<Vec<SecretInfo>> {
        self.all("SELECT name, updated_at FROM svc_secrets ORDER BY name", |r| {
            Ok(SecretInfo {
                name: r.try_get(0)?,
                updated_at: r.try_get(1)?,
            })
        })
    }

    fn unset_secret(&self, name: &str) -> Result<bool> {
        let name = name.to_string();
        self.run(|pool| async move {
            let client = pool.get().await?;
            Ok(client
                .execute("DELETE FROM svc_secrets WHERE name = $1", &[&name])
                .await?
                > 0)
        })
    }

    fn reseal_secrets(&self, sealed: &[(String, Vec<u8>)]) -> Result<()> {
        let sealed = sealed.to_vec();
        self.run(|pool| async move {
            let mut client = pool.get().await?;
            let tx = client.transaction().await?;
            for (name, value) in &sealed {
                tx.execute("UPDATE svc_secrets SET sealed = $1 WHERE name = $2", &[value, name])
                    .await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }

    fn list_assets(&self) -> Result<Vec<StoredAsset>> {
        self.all("SELECT kind, name, json FROM svc_assets ORDER BY kind, name", |r| {
            Ok(StoredAsset {
                kind: r.try_get(0)?,
                name: r.try_get(1)?,
                json: r.try_get(2)?,
            })
        })
    }

    fn replace_assets(&self, assets: &[StoredAsset], now: i64) -> Result<()> {
        let assets = assets.to_vec();
        self.run(|pool| async move {
            let mut client = pool.get().await?;
            let tx = client.transaction().await?;
            tx.execute("DELETE FROM svc_assets", &[]).await?;
            for a in &assets {
                tx.execute(
                    "INSERT INTO svc_assets (kind, name, json, updated_at) VALUES ($1, $2, $3, $4)",
                    &[&a.kind, &a.name, &a.json, &now],
                )
                .await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }

    fn key_changes(&self) -> Option<Arc<KeyChanges>> {
        Some(self.changes.clone())
    }
}
