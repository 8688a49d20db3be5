//! The in-memory store: one process's limiter state, sharded to keep locks short.
//!
//! Each key is hashed (foldhash with a random per-process seed, so clients cannot aim at
//! collisions)
//! to 64 bits; the state is a 64-bit TAT. An entry therefore costs 16 bytes plus the hash
//! table's overhead: measured at about 32 bytes per key on average (the memory test
//! `limiter_memory` measures it).
//!
//! **Bounded memory.** A key whose TAT has passed is indistinguishable from a new key (see
//! `gcra`), so removing it changes nothing: each shard drops such idle entries at most once
//! a second, and the whole store does when it is full. An entry is idle at most one window
//! after its last passed request. A hard cap bounds the number of keys tracked at once
//! (default 1,000,000 per Rate Limit node).
//!
//! **A full store makes room; it does not refuse.** Refusing new keys once the store is
//! full of active ones would let a flood of distinct keys (cheap with IPv6) lock every
//! new client out. Instead a new key evicts an entry of its shard: among the first
//! [`EVICTION_SAMPLE`] entries, every idle one (which changes nothing), or else the one
//! *closest to fully restored* (the smallest TAT). Forgetting an entry can only give its
//! client back what it had used, and the least-used entry is chosen: flood keys, each
//! seen once, hold one emission interval and go first, while a client that has used up
//! its burst holds a TAT a whole burst ahead and is evicted only if every sampled entry
//! is further from restored than it is, which costs a flooder a burst per flood key.

use super::gcra::{self, Decision, Quota};
use super::{LimitKey, RateLimitStore, StoreError};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const SHARDS: usize = 64;
const SWEEP_EVERY_NS: u64 = 1_000_000_000;
/// Entries of a full shard looked at to choose which one a new key evicts.
pub const EVICTION_SAMPLE: usize = 32;

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
            // Full: drop idle keys everywhere (at most once a second); if that was not
            // enough, make room in this shard.
            drop(state);
            if self.next_full_sweep.fetch_max(now + SWEEP_EVERY_NS, Ordering::Relaxed) <= now {
                self.sweep_all(now);
            }
            state = shard.inner.lock();
            if self.tracked.load(Ordering::Relaxed) >= self.max_keys {
                self.evict_for_new_key(&mut state.table, now);
            }
            let existing = state.table.get(&key_hash).copied();
            return self.apply(&mut state.table, key_hash, existing, quota, now);
        }
        self.apply(&mut state.table, key_hash, None, quota, now)
    }

    /// Makes room in a full store's `table`: among its first [`EVICTION_SAMPLE`] entries,
    /// removes every idle one, or if none is idle the one closest to fully restored.
    ///
    /// Which entries come first is decided by the table's layout, that is by the keyed
    /// hash of each key with this process's random seed: clients cannot choose it.
    fn evict_for_new_key(&self, table: &mut Table, now: u64) {
        let mut idle = [0u64; EVICTION_SAMPLE];
        let mut idle_count = 0;
        let mut closest: Option<(u64, u64)> = None;
        for (&key, &tat) in table.iter().take(EVICTION_SAMPLE) {
            if tat <= now {
                idle[idle_count] = key;
                idle_count += 1;
            } else if closest.is_none_or(|(_, t)| tat < t) {
                closest = Some((key, tat));
            }
        }
        let evicted = if idle_count > 0 {
            for key in &idle[..idle_count] {
                table.remove(key);
            }
            idle_count
        } else if let Some((key, _)) = closest {
            table.remove(&key);
            1
        } else {
            0
        };
        self.tracked.fetch_sub(evicted, Ordering::Relaxed);
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
    use std::time::Duration;

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
    fn a_flood_of_twice_the_cap_locks_out_no_one_and_frees_no_abuser() {
        let cap = 64 * 16;
        let store = MemoryStore::with_max_keys(cap);
        let q = Quota::per(10, Duration::from_secs(60)); // T = 6 s, burst 10
        let key = |name: &str| store.hash(&LimitKey::Text(name));
        let ms = 1_000_000u64;
        // Before the flood: an abuser spends its whole burst and is refused.
        for _ in 0..10 {
            assert!(store.check_now(key("abuser"), &q, ms).allowed);
        }
        assert!(!store.check_now(key("abuser"), &q, ms).allowed);
        // The flood: 2 × the cap of distinct keys, one request each, over 2 seconds, while a
        // well-behaved client asks once every 400 flood keys (6 times: inside its quota).
        let flood = 2 * cap;
        let mut now = ms;
        for i in 0..flood {
            now = ms + (i as u64 * 2_000 * ms) / flood as u64;
            assert!(
                store
                    .check_now(store.hash(&LimitKey::Text(&format!("flood-{i}"))), &q, now)
                    .allowed,
                "flood key {i} is a new client and gets its burst"
            );
            if i % 400 == 0 {
                assert!(
                    store.check_now(key("client"), &q, now).allowed,
                    "the well-behaved client at {i}"
                );
            }
            assert!(store.len() <= cap + 1, "{} keys tracked, cap {cap}", store.len());
        }
        // The abuser was never evicted: it is still refused (its TAT is a burst ahead of
        // every flood key's), and a new client after the flood is served at once.
        assert!(
            !store.check_now(key("abuser"), &q, now).allowed,
            "the flood did not reset the abuser"
        );
        assert!(store.check_now(key("newcomer"), &q, now).allowed);
    }

    #[test]
    fn eviction_takes_idle_entries_first_then_the_one_closest_to_restored() {
        let store = MemoryStore::with_max_keys(10);
        let now = 1_000;
        // Three idle entries (TAT passed) among active ones: only the idle ones go.
        let mut table: Table = (1..=10u64)
            .map(|k| (k, if k <= 3 { now - k } else { now + 100 * k }))
            .collect();
        store.tracked.store(10, Ordering::Relaxed);
        store.evict_for_new_key(&mut table, now);
        let mut left: Vec<u64> = table.keys().copied().collect();
        left.sort();
        assert_eq!(left, (4..=10).collect::<Vec<_>>());
        assert_eq!(store.tracked.load(Ordering::Relaxed), 7);
        // All active: the smallest TAT (the least used) goes, one entry only.
        store.evict_for_new_key(&mut table, now);
        let mut left: Vec<u64> = table.keys().copied().collect();
        left.sort();
        assert_eq!(left, (5..=10).collect::<Vec<_>>());
        assert_eq!(store.tracked.load(Ordering::Relaxed), 6);
    }
}
