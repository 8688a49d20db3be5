//! Keys the index does not know yet, looked up in the workspace store before they are
//! refused, so that a key works the moment `svc keys create` returns, not at the next
//! reload (which still comes, and remains what revocations travel by).
//!
//! Only a presented key that is well formed and whose checksum is right gets here, and a
//! client can mint such keys at will, so the path is bounded twice: a digest found absent
//! is remembered for [`NEGATIVE_TTL`] (at most [`NEGATIVE_MAX`] of them), and the lookups
//! of a process share a token bucket of [`LOOKUPS_PER_SECOND`] (burst [`LOOKUP_BURST`]).
//! Over the budget a key is refused as unknown without a lookup: a flood of made-up keys
//! costs the store at most that rate, and a genuine new key is then accepted by the next
//! reload instead (within a second on PostgreSQL, which pushes changes).

use super::KeyRecord;
use crate::metrics::StoreMetrics;
use crate::store::WorkspaceStore;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Store lookups per second per process, on average.
pub const LOOKUPS_PER_SECOND: f64 = 20.0;
/// Store lookups a process may make at once after a quiet spell.
pub const LOOKUP_BURST: f64 = 20.0;
/// How long a digest found absent is refused without asking the store again. Keys are
/// random: one absent now is absent for good, unless it is being created this very
/// moment, and `svc keys create` prints a key only after it is stored.
pub const NEGATIVE_TTL: Duration = Duration::from_secs(30);
/// Absent digests remembered at most (32 bytes and an instant each).
pub const NEGATIVE_MAX: usize = 10_000;
/// The longest a request waits for the store.
pub const LOOKUP_TIMEOUT: Duration = Duration::from_millis(250);

/// The store behind a [`super::KeyIndex`], for keys it does not know.
pub struct MissLookup {
    store: Arc<dyn WorkspaceStore>,
    metrics: StoreMetrics,
    absent: Mutex<HashMap<[u8; 32], Instant>>,
    budget: Mutex<Bucket>,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl MissLookup {
    pub fn new(store: Arc<dyn WorkspaceStore>, metrics: StoreMetrics) -> MissLookup {
        MissLookup {
            store,
            metrics,
            absent: Mutex::new(HashMap::new()),
            budget: Mutex::new(Bucket {
                tokens: LOOKUP_BURST,
                at: Instant::now(),
            }),
        }
    }

    /// The stored key with SHA-256 `digest`, if the store has it and the bounds allow
    /// asking.
    pub async fn find(&self, digest: [u8; 32]) -> Option<KeyRecord> {
        let now = Instant::now();
        if self.absent.lock().get(&digest).is_some_and(|until| *until > now) {
            self.metrics.key_lookup("cached");
            return None;
        }
        if !self.take_token(now) {
            self.metrics.key_lookup("throttled");
            return None;
        }
        let store = self.store.clone();
        let lookup = tokio::task::spawn_blocking(move || store.find_key(&digest));
        match tokio::time::timeout(LOOKUP_TIMEOUT, lookup).await {
            Ok(Ok(Ok(Some(record)))) => {
                self.metrics.key_lookup("found");
                Some(record)
            }
            Ok(Ok(Ok(None))) => {
                self.metrics.key_lookup("absent");
                self.remember_absent(digest, now);
                None
            }
            Ok(Ok(Err(e))) => {
                self.metrics.key_lookup("error");
                tracing::debug!(error = %e, "looking up an unknown API key in the workspace store failed");
                None
            }
            Ok(Err(_)) | Err(_) => {
                self.metrics.key_lookup("error");
                None
            }
        }
    }

    fn take_token(&self, now: Instant) -> bool {
        let mut b = self.budget.lock();
        let refill = now.saturating_duration_since(b.at).as_secs_f64() * LOOKUPS_PER_SECOND;
        b.tokens = (b.tokens + refill).min(LOOKUP_BURST);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    fn remember_absent(&self, digest: [u8; 32], now: Instant) {
        let mut absent = self.absent.lock();
        if absent.len() >= NEGATIVE_MAX {
            absent.retain(|_, until| *until > now);
        }
        // Still full of fresh entries: the token bucket alone bounds the store's load.
        if absent.len() < NEGATIVE_MAX {
            absent.insert(digest, now + NEGATIVE_TTL);
        }
    }
}
