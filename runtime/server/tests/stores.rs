//! The workspace store's two engines, SQLite and a real PostgreSQL, held to the same
//! behaviour; and what only the shared one does: migrations under concurrent starts, key
//! changes pushed to every listener, and surviving a restart of the database.

use std::sync::Arc;
use std::time::{Duration, Instant};
use svc_runtime::apikey::KeyRecord;
use svc_runtime::seal::SecretsKey;
use svc_runtime::store::{Location, PostgresStore, SqliteStore, StoredAsset, WorkspaceStore};
use svc_testkit::{Postgres, TempDir, TestCa};

/// The same script of operations and answers, whatever the engine.
fn behaves_like_a_workspace_store(store: &dyn WorkspaceStore) {
    // The first value stored under a name stays; a second is refused, not written.
    assert!(store.set_secret_if_absent("__SVC_FIRST", b"one", 1).unwrap());
    assert!(!store.set_secret_if_absent("__SVC_FIRST", b"two", 2).unwrap());
    assert_eq!(store.secret("__SVC_FIRST").unwrap().unwrap(), b"one");
    assert!(store.unset_secret("__SVC_FIRST").unwrap());
    let (_, a) = KeyRecord::issue("ci", "alice", 100, None);
    let (_, b) = KeyRecord::issue("ci", "bob", 101, Some(5_000));
    let r0 = store.keys_revision().unwrap();
    store.insert_key(&a).unwrap();
    store.insert_key(&b).unwrap();
    let r1 = store.keys_revision().unwrap();
    assert!(r1 > r0, "the revision moves when keys are added");
    assert!(store.insert_key(&a).is_err(), "ids and hashes are unique");

    assert_eq!(
        store.find_key(&a.hash).unwrap().as_ref(),
        Some(&a),
        "found by its digest"
    );
    assert_eq!(store.find_key(&[0; 32]).unwrap(), None);

    let listed = store.list_keys().unwrap();
    assert_eq!(
        listed,
        vec![a.clone(), b.clone()],
        "listed in creation order, every field kept"
    );
    let mut indexed = store.index_keys().unwrap();
    indexed.sort_by(|x, y| (x.created_at, &x.id).cmp(&(y.created_at, &y.id)));
    assert_eq!(indexed, listed, "a server indexes the same keys, in any order");

    let err = store.revoke_key("ci", 200).unwrap_err().to_string();
    assert!(err.contains("2 active keys are named `ci`"), "{err}");
    let revoked = store.revoke_key(&a.id, 200).unwrap();
    assert_eq!(revoked.revoked_at, Some(200));
    assert!(store.keys_revision().unwrap() > r1);
    let err = store.revoke_key(&a.id, 201).unwrap_err().to_string();
    assert!(err.contains("already revoked"), "{err}");
    // Now `ci` names one active key.
    assert_eq!(store.revoke_key("ci", 202).unwrap().id, b.id);
    let err = store.revoke_key("nope", 1).unwrap_err().to_string();
    assert!(err.contains("no active key has the id or name `nope`"), "{err}");

    let (_, c) = KeyRecord::issue("deploy", "carol", 300, None);
    store.insert_key(&c).unwrap();
    store.set_key_expiry(&c.id, 9_999).unwrap();
    assert_eq!(store.list_keys().unwrap()[2].expires_at, Some(9_999));
    assert!(store.set_key_expiry("key_missing", 1).is_err());

    let key = SecretsKey::generate();
    store.set_secret("B", &key.seal("B", "value-b"), 1).unwrap();
    store.set_secret("A", &key.seal("A", "value-a1"), 1).unwrap();
    store.set_secret("A", &key.seal("A", "value-a2"), 2).unwrap();
    let infos = store.list_secrets().unwrap();
    assert_eq!(
        infos
            .iter()
            .map(|i| (i.name.as_str(), i.updated_at))
            .collect::<Vec<_>>(),
        [("A", 2), ("B", 1)]
    );
    let sealed = store.secret("A").unwrap().unwrap();
    assert!(
        !sealed.windows(8).any(|w| w == b"value-a2"),
        "stored sealed, not in clear"
    );
    assert_eq!(key.open("A", &sealed).unwrap(), "value-a2");
    assert_eq!(store.secret("C").unwrap(), None);
    let new_key = SecretsKey::generate();
    store
        .reseal_secrets(&[("A".into(), new_key.seal("A", "value-a2"))])
        .unwrap();
    assert_eq!(
        new_key.open("A", &store.secret("A").unwrap().unwrap()).unwrap(),
        "value-a2"
    );
    assert!(store.unset_secret("A").unwrap());
    assert!(!store.unset_secret("A").unwrap());

    let assets = vec![
        StoredAsset {
            kind: "enum".into(),
            name: "Color".into(),
            json: r#"{"values":["red"]}"#.into(),
        },
        StoredAsset {
            kind: "structure".into(),
            name: "Order".into(),
            json: "{}".into(),
        },
    ];
    store.replace_assets(&assets, 1).unwrap();
    assert_eq!(store.list_assets().unwrap(), assets);
    store.replace_assets(&assets[1..], 2).unwrap();
    assert_eq!(store.list_assets().unwrap(), assets[1..]);
}

#[test]
fn sqlite_and_postgres_behave_alike() {
    let dir = TempDir::new("stores-sqlite");
    let sqlite = SqliteStore::open(&dir.path().join("w.db")).unwrap();
    behaves_like_a_workspace_store(&sqlite);

    let pg = Postgres::start();
    let store = PostgresStore::connect(&pg.url()).unwrap();
    behaves_like_a_workspace_store(&store);
    assert!(
        store.describe().starts_with("PostgreSQL postgres://***@127.0.0.1:"),
        "{}",
        store.describe()
    );
}

#[test]
fn postgres_over_tls_trusts_the_ca_of_sslrootcert_and_no_other() {
    let ca = TestCa::new();
    let pg = Postgres::start_tls(&ca);
    let trusted = format!("{}?sslmode=require&sslrootcert={}", pg.url(), ca.ca_pem().display());
    let store = PostgresStore::connect(&trusted).unwrap();
    let (_, k) = KeyRecord::issue("tls", "alice", 1, None);
    store.insert_key(&k).unwrap();
    assert_eq!(store.list_keys().unwrap().len(), 1);

    // With the Mozilla roots, the same server's certificate is refused: TLS is real and
    // verified, not merely negotiated.
    let refused = PostgresStore::connect(&format!("{}?sslmode=require", pg.url()))
        .err()
        .expect("an unknown CA");
    assert!(
        refused.0.to_lowercase().contains("certificate"),
        "the error names the certificate: {}",
        refused.0
    );
    // A CA to verify against and no TLS contradict each other.
    let contradiction = PostgresStore::connect(&format!(
        "{}?sslmode=disable&sslrootcert={}",
        pg.url(),
        ca.ca_pem().display()
    ))
    .err()
    .expect("sslrootcert with sslmode=disable");
    assert!(contradiction.0.contains("sslmode=disable"), "{}", contradiction.0);
}

/// Beyond loopback, TLS is required and verified unless the URL asks otherwise by name:
/// libpq's default (`prefer`) would drop to plaintext when a man in the middle declines
/// TLS. The host is a name that is not loopback (`db.svc.test`, in the test CA's
/// certificate), reached on 127.0.0.1 through `hostaddr`.
#[test]
fn postgres_beyond_loopback_requires_verified_tls_unless_the_url_says_otherwise() {
    let ca = TestCa::new();
    let remote =
        |pg: &Postgres, query: &str| format!("postgres://svc@db.svc.test:{}/svc?hostaddr=127.0.0.1{query}", pg.port());

    let plain = Postgres::start();
    // The server declines TLS: no connection, where the default used to be plaintext.
    let refused = PostgresStore::connect(&remote(&plain, ""))
        .err()
        .expect("plaintext refused");
    assert!(refused.0.to_lowercase().contains("tls"), "{}", refused.0);
    // Plaintext asked for by name: it connects, and says so at start-up.
    for mode in ["disable", "prefer", "allow"] {
        let store = PostgresStore::connect(&remote(&plain, &format!("&sslmode={mode}"))).unwrap();
        let warnings = store.warnings();
        assert_eq!(warnings.len(), 1, "{mode}: {warnings:?}");
        assert!(
            warnings[0].contains("plaintext") && warnings[0].contains("sslmode="),
            "{warnings:?}"
        );
        assert!(
            !warnings[0].contains("hostaddr"),
            "the URL's query is not shown: {warnings:?}"
        );
    }
    // On loopback, the default stays libpq's and nothing is said.
    assert!(PostgresStore::connect(&plain.url()).unwrap().warnings().is_empty());
    let unknown = PostgresStore::connect(&remote(&plain, "&sslmode=maybe"))
        .err()
        .expect("unknown mode");
    assert!(unknown.0.contains("verify-full"), "{}", unknown.0);

    let tls = Postgres::start_tls(&ca);
    // TLS by default, and verified: the test CA is not a Mozilla root.
    let unverified = PostgresStore::connect(&remote(&tls, "")).err().expect("an unknown CA");
    assert!(unverified.0.to_lowercase().contains("certificate"), "{}", unverified.0);
    // With the CA, verified (chain and name), and nothing to warn about.
    let ca_param = format!("&sslrootcert={}", ca.ca_pem().display());
    for mode in ["", "&sslmode=require", "&sslmode=verify-full", "&sslmode=prefer"] {
        let store = PostgresStore::connect(&remote(&tls, &format!("{mode}{ca_param}"))).unwrap();
        assert!(store.warnings().is_empty(), "{mode}");
        store.list_keys().unwrap();
    }
    // The certificate names db.svc.test and localhost, not another host.
    let wrong_name = format!(
        "postgres://svc@other.svc.test:{}/svc?hostaddr=127.0.0.1{ca_param}",
        tls.port()
    );
    let wrong = PostgresStore::connect(&wrong_name)
        .err()
        .expect("a name the certificate does not hold");
    assert!(wrong.0.to_lowercase().contains("certificate"), "{}", wrong.0);
}

/// The outside review: the shared limiter's Redis keys were MACed with a key derived from
/// the secrets key, so rotating it moved every count (old and new instances counted apart
/// during a rolling restart). The MAC key is kept in the store and survives a rotation.
#[test]
fn the_shared_limiters_key_survives_a_rotation_of_the_secrets_key() {
    use svc_runtime::secrets::{RATE_LIMIT_KEY_SECRET, rate_limit_mac_key};
    let store = SqliteStore::in_memory().unwrap();
    let old = SecretsKey::generate();
    let first = rate_limit_mac_key(&store, &old).unwrap();
    // What it was derived from until now: counts carry over the upgrade.
    assert_eq!(first, old.derive("rate-limit keys"));
    assert_eq!(
        rate_limit_mac_key(&store, &old).unwrap(),
        first,
        "read back, not made again"
    );
    // `svc secrets rotate-key`: every value re-sealed under the new key.
    let new = SecretsKey::generate();
    let value = old
        .open(
            RATE_LIMIT_KEY_SECRET,
            &store.secret(RATE_LIMIT_KEY_SECRET).unwrap().unwrap(),
        )
        .unwrap();
    store
        .reseal_secrets(&[(
            RATE_LIMIT_KEY_SECRET.to_string(),
            new.seal(RATE_LIMIT_KEY_SECRET, &value),
        )])
        .unwrap();
    assert_eq!(
        rate_limit_mac_key(&store, &new).unwrap(),
        first,
        "the same Redis keys after the rotation"
    );
    assert_ne!(new.derive("rate-limit keys"), first);
    // The old key no longer opens it: a server given the wrong key says so.
    assert!(rate_limit_mac_key(&store, &old).is_err());
}

#[test]
fn postgres_migrations_run_once_when_instances_start_together() {
    let pg = Postgres::start();
    let url = pg.url();
    let stores: Vec<PostgresStore> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8).map(|_| s.spawn(|| PostgresStore::connect(&url))).collect();
        handles.into_iter().map(|h| h.join().unwrap().unwrap()).collect()
    });
    // Every one of them works on the one schema.
    let (_, k) = KeyRecord::issue("ci", "alice", 1, None);
    stores[0].insert_key(&k).unwrap();
    for s in &stores {
        assert_eq!(s.list_keys().unwrap().len(), 1);
    }
    // And a later start finds nothing to do.
    drop(stores);
    PostgresStore::connect(&url).unwrap();
}

#[test]
fn postgres_pushes_key_changes_to_every_listener_and_reloads_after_a_restart() {
    let pg = Postgres::start();
    let writer = PostgresStore::connect(&pg.url()).unwrap();
    let readers: Vec<PostgresStore> = (0..3).map(|_| PostgresStore::connect(&pg.url()).unwrap()).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let changes: Vec<_> = readers.iter().map(|r| r.key_changes().unwrap()).collect();

    // The first signal is the full reload every listener asks for when it connects.
    for c in &changes {
        runtime
            .block_on(async { tokio::time::timeout(Duration::from_secs(10), c.wait()).await })
            .unwrap();
        assert!(c.take_reload_all(), "a new listener asks for a full reload");
    }
    let (_, k) = KeyRecord::issue("ci", "alice", 1, None);
    let start = Instant::now();
    writer.insert_key(&k).unwrap();
    for c in &changes {
        runtime
            .block_on(async { tokio::time::timeout(Duration::from_secs(2), c.wait()).await })
            .expect("a notification within 2 s");
        assert!(!c.take_reload_all(), "a notification, not a reconnect");
    }
    eprintln!("key change pushed to 3 listeners in {:?}", start.elapsed());

    // The database restarts: operations fail while it is down and work again after;
    // listeners reconnect and ask for a full reload.
    pg.stop();
    let err = readers[0].list_keys().unwrap_err().to_string();
    assert!(err.starts_with("PostgreSQL postgres://***@127.0.0.1"), "{err}");
    pg.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    for c in &changes {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            runtime
                .block_on(async { tokio::time::timeout(left, c.wait()).await })
                .expect("listeners reconnect after a restart");
            if c.take_reload_all() {
                break;
            }
        }
    }
    for r in &readers {
        assert_eq!(r.list_keys().unwrap().len(), 1, "pooled connections recover too");
    }
}

#[test]
fn a_workspace_moves_from_sqlite_to_postgres_sealed() {
    let dir = TempDir::new("stores-copy");
    let sqlite = SqliteStore::open(&dir.path().join("w.db")).unwrap();
    let key = SecretsKey::generate();
    let (_, k) = KeyRecord::issue("ci", "alice", 1, None);
    sqlite.insert_key(&k).unwrap();
    sqlite
        .set_secret("TOKEN", &key.seal("TOKEN", "t0ken-value"), 9)
        .unwrap();
    sqlite
        .replace_assets(
            &[StoredAsset {
                kind: "enum".into(),
                name: "E".into(),
                json: "{}".into(),
            }],
            1,
        )
        .unwrap();
    let pg = Postgres::start();
    let target: Arc<dyn WorkspaceStore> = Location::parse(&pg.url()).open().unwrap();
    let copied = svc_runtime::store::copy::copy(&sqlite, target.as_ref(), 10).unwrap();
    assert_eq!((copied.keys, copied.secrets, copied.assets), (1, 1, 1));
    assert_eq!(target.list_keys().unwrap(), vec![k]);
    assert_eq!(
        key.open("TOKEN", &target.secret("TOKEN").unwrap().unwrap()).unwrap(),
        "t0ken-value"
    );
    assert_eq!(target.list_secrets().unwrap()[0].updated_at, 9);
    let err = svc_runtime::store::copy::copy(&sqlite, target.as_ref(), 11)
        .unwrap_err()
        .to_string();
    assert!(err.contains("copy into an empty store"), "{err}");
}
