//! The in-memory store: one process's limiter state, sharded to keep locks short.
//!
//! Each key is hashed (foldhash with a random per-process seed, so clients cannot aim at
//! collisions)
//! to 64 bits; the state is a 64-bit TAT. An entry therefore costs 16 bytes plus the hash
//! table's overhead: measured at about 32 bytes per key on average (see the memory test
//! and docs/performance.md).
//!
//! **Bounded memory.** A key whose TAT has passed is indistinguishable from a new key (see
//! `gcra`), so removing it changes nothing: each shard drops such idle entries at most once
//! a second, and the whole store does when it is full. An entry is idle at most one window
//! after its last passed request. A hard cap bounds the number of keys tracked at once
//! (default 1,000,000 per Rate Limit node): when the store is full of active keys, a
//! *new* key is rejected (429 with `Retry-After: 1`) rather than let through untracked, so
//! a flood of distinct keys cannot switch rate limiting off. Keys already tracked are
//! unaffected.

use super::gcra::{self, Decision, Quota};
use super::{LimitKey, RateLimitStore, StoreError};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

const SHARDS: usize = 64;
const SWEEP_EVERY_NS: u64 = 1_000_000_000;

/// Keys are already uniformly distributed 64-bit hashes; hashing them again is waste.
#[derive(Default)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Table = HashMap<u64, u64, BuildHasherDefault<IdentityHasher>>;

/// Keeps each shard's lock on its own cache line.
#[repr(align(64))]
struct Shard {
    inner: Mutex<ShardState>,
}

struct ShardState {
    table: Table,
    next_sweep: u64,
}

/// The in-memory limiter state of one Rate Limit node.
pub struct MemoryStore {
    shards: Box<[Shard]>,
    /// Keys tracked at most (exceeded at most by the number of concurrent inserts).
    max_keys: usize,
    /// Keys tracked now: touched only when a key is added or evicted, not on hits.
    tracked: AtomicUsize,
    /// When the whole store may next be swept because it is full.
    next_full_sweep: AtomicU64,
    hasher: foldhash::fast::RandomState,
}

/// The default cap: keys tracked at once per Rate Limit node.
pub const DEFAULT_MAX_KEYS: usize = 1_000_000;

impl Default for MemoryStore {
    fn default() -> Self {
        Self::with_max_keys(DEFAULT_MAX_KEYS)
    }
}

impl MemoryStore {
    pub fn with_max_keys(max_keys: usize) -> Self {
        let shards = (0..SHARDS)
            .map(|_| Shard {
                inner: Mutex::new(ShardState {
                    table: Table::default(),
                    next_sweep: 0,
                }),
            })
            .collect();
        MemoryStore {
            shards,
            max_keys: max_keys.max(1),
            tracked: AtomicUsize::new(0),
            next_full_sweep: AtomicU64::new(0),
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    /// The 64-bit hash of a key.
    pub fn hash(&self, key: &LimitKey<'_>) -> u64 {
        self.hasher.hash_one(key)
    }

    /// One check, synchronously (the store never waits).
    pub fn check_now(&self, key_hash: u64, quota: &Quota, now: u64) -> Decision {
        let shard = &self.shards[(key_hash >> 58) as usize % SHARDS];
        let mut state = shard.inner.lock();
        if now >= state.next_sweep {
            self.sweep_shard(&mut state.table, now);
            state.next_sweep = now + SWEEP_EVERY_NS;
        }
        // A tracked key (the common case) is found and updated in one probe.
        if let Some(tat) = state.table.get_mut(&key_hash) {
            let (decision, new_tat) = gcra::step(Some(*tat), now, quota);
            if let Some(new_tat) = new_tat {
                *tat = new_tat;
            }
            return decision;
        }
        if self.tracked.load(Ordering::Relaxed) >= self.max_keys {
            // Full: drop idle keys everywhere (at most once a second), then decide.
            drop(state);
            if self.next_full_sweep.fetch_max(now + SWEEP_EVERY_NS, Ordering::Relaxed) <= now {
                self.sweep_all(now);
            }
            if self.tracked.load(Ordering::Relaxed) >= self.max_keys {
                return Decision {
                    allowed: false,
                    remaining: 0,
                    reset: Duration::from_secs(1),
                    retry_after: Duration::from_secs(1),
                };
            }
            state = shard.inner.lock();
            let existing = state.table.get(&key_hash).copied();
            return self.apply(&mut state.table, key_hash, existing, quota, now);
        }
        self.apply(&mut state.table, key_hash, None, quota, now)
    }

    fn apply(&self, table: &mut Table, key_hash: u64, existing: Option<u64>, quota: &Quota, now: u64) -> Decision {
        let (decision, new_tat) = gcra::step(existing, now, quota);
        if let Some(tat) = new_tat
            && table.insert(key_hash, tat).is_none()
        {
            self.tracked.fetch_add(1, Ordering::Relaxed);
        }
        decision
    }

    fn sweep_shard(&self, table: &mut Table, now: u64) {
        let before = table.len();
        sweep(table, now);
        self.tracked.fetch_sub(before - table.len(), Ordering::Relaxed);
    }

    /// Keys currently tracked.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.inner.lock().table.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops idle entries everywhere (also done automatically).
    pub fn sweep_all(&self, now: u64) {
        for s in self.shards.iter() {
            self.sweep_shard(&mut s.inner.lock().table, now);
        }
    }
}

fn sweep(table: &mut Table, now: u64) {
    table.retain(|_, tat| *tat > now);
    if table.capacity() > 64 && table.capacity() > table.len() * 4 {
        table.shrink_to_fit();
    }
}

impl RateLimitStore for MemoryStore {
    async fn check(&self, key: &LimitKey<'_>, quota: &Quota, now: u64) -> Result<Decision, StoreError> {
        Ok(self.check_now(self.hash(key), quota, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_keys_are_evicted_exactly() {
        let store = MemoryStore::default();
        let q = Quota::per(2, Duration::from_secs(1));
        for i in 0..1000u32 {
            store.check_now(store.hash(&LimitKey::Text(&i.to_string())), &q, 0);
        }
        assert_eq!(store.len(), 1000);
        store.sweep_all(2_000_000_000);
        assert_eq!(store.len(), 0);
    }

    #[test]
    fn the_cap_rejects_new_keys_but_not_known_ones() {
        let store = MemoryStore::with_max_keys(256);
        let q = Quota::per(1000, Duration::from_secs(3600));
        let mut rejected = 0;
        for i in 0..10_000u32 {
            if !store
                .check_now(store.hash(&LimitKey::Text(&i.to_string())), &q, 10)
                .allowed
            {
                rejected += 1;
            }
        }
        assert_eq!(store.len(), 256);
        assert_eq!(rejected, 10_000 - 256);
        // A tracked key keeps its quota.
        let known = (0..10_000u32)
            .map(|i| store.hash(&LimitKey::Text(&i.to_string())))
            .find(|h| {
                let s = &store.shards[(*h >> 58) as usize % SHARDS];
                s.inner.lock().table.contains_key(h)
            });
        assert!(store.check_now(known.unwrap(), &q, 11).allowed);
    }
}
