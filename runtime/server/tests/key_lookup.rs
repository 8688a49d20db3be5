//! A key created after the server loaded its index works at once: the index asks the
//! store about a well-formed key it does not know, within bounds a flood of made-up keys
//! cannot get past.

use std::sync::Arc;
use svc_runtime::apikey::lookup::{LOOKUP_BURST, MissLookup};
use svc_runtime::apikey::{KeyIndex, KeyRecord, Rejection, format};
use svc_runtime::metrics::Metrics;
use svc_runtime::store::{SqliteStore, WorkspaceStore};
use svc_testkit::TempDir;

fn lookups(metrics: &Metrics, outcome: &str) -> u64 {
    let text = metrics.render();
    let prefix = format!("svc_api_key_store_lookups_total{{outcome=\"{outcome}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {prefix} in {text}"))
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_key_works_at_once_and_made_up_keys_stay_bounded() {
    let dir = TempDir::new("lookup");
    let store: Arc<dyn WorkspaceStore> = Arc::new(SqliteStore::open(&dir.path().join("w.db")).unwrap());
    let metrics = Metrics::default();
    let index = KeyIndex::new(store.list_keys().unwrap());
    index.look_up_misses_in(MissLookup::new(store.clone(), metrics.stores.clone()));

    // Created after the index was loaded, used with no reload in between.
    let (key, record) = KeyRecord::issue("ci", "alice", 100, None);
    store.insert_key(&record).unwrap();
    let identity = index.verify_or_look_up(Some(key.as_bytes())).await.unwrap();
    assert_eq!(&*identity.user, "alice");
    assert_eq!(index.len(), 1, "remembered: the next request needs no lookup");
    index.verify_or_look_up(Some(key.as_bytes())).await.unwrap();
    assert_eq!(lookups(&metrics, "found"), 1);

    // Malformed text never reaches the store; a made-up well-formed key does, once.
    assert_eq!(
        index.verify_or_look_up(Some(b"not a key".as_slice())).await,
        Err(Rejection::Malformed)
    );
    let made_up = format::generate();
    for _ in 0..5 {
        assert_eq!(
            index.verify_or_look_up(Some(made_up.as_bytes())).await,
            Err(Rejection::Unknown)
        );
    }
    assert_eq!(lookups(&metrics, "absent"), 1);
    assert_eq!(lookups(&metrics, "cached"), 4);

    // A flood of distinct made-up keys: the store sees at most the budget.
    let flood = 200;
    for _ in 0..flood {
        let k = format::generate();
        assert_eq!(
            index.verify_or_look_up(Some(k.as_bytes())).await,
            Err(Rejection::Unknown)
        );
    }
    let asked = lookups(&metrics, "absent") - 1;
    let throttled = lookups(&metrics, "throttled");
    assert_eq!(asked + throttled, flood);
    // The burst, plus what the bucket refilled (20/s) while the flood ran.
    assert!(
        asked as f64 <= LOOKUP_BURST + 5.0,
        "{asked} lookups reached the store during the flood"
    );

    // A revoked key found in the store is refused as revoked, not as unknown.
    let (key, mut record) = KeyRecord::issue("old", "bob", 100, None);
    record.revoked_at = Some(150);
    store.insert_key(&record).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await; // refill a token
    assert_eq!(
        index.verify_or_look_up(Some(key.as_bytes())).await,
        Err(Rejection::Revoked)
    );
}
