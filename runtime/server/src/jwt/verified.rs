//! Tokens already verified, remembered until they expire: a client sends the same access
//! token with every request of its lifetime (minutes to an hour), and a signature check
//! costs ten to twenty times a whole route (docs/performance.md, "Check JWT"). Envoy's
//! `jwt_authn` keeps such a cache too (`jwt_cache_config`).
//!
//! What makes it safe: an entry is found only by a 128-bit MAC of the whole token, keyed
//! with a secret each server draws at start (no client can aim at an entry); only a token
//! that passed every check of its node is remembered, with what that node needs (subject,
//! the claims its structure reads) and its lifetime, which is checked again on each use;
//! it is used only while the key set it was verified with is still the one held (a key
//! rotation fetched, or the set refreshed, and it is verified again); HMAC tokens are not
//! remembered (their check is cheap, and the secret may change). The cache is bounded: a
//! full one is emptied, so a flood of distinct valid tokens costs verifications, never
//! memory.

use parking_lot::Mutex;
use std::collections::HashMap;

/// The most tokens one node remembers.
pub const CAPACITY: usize = 4096;

/// A verified token as its node needs it again.
#[derive(Clone)]
pub struct Remembered {
    pub subject: String,
    /// The claims the node's structure reads (only those).
    pub claims: serde_json::Map<String, serde_json::Value>,
    /// `exp` and `nbf`, checked again, with the node's leeway, on each use.
    pub expires: u64,
    pub not_before: Option<u64>,
    /// The key set it was verified with (its address while held).
    pub key_set: usize,
}

pub struct VerifiedTokens {
    mac: siphasher::sip128::SipHasher24,
    entries: Mutex<HashMap<u128, Remembered, foldhash::fast::FixedState>>,
}

impl Default for VerifiedTokens {
    fn default() -> Self {
        let mut key = [0u8; 16];
        getrandom::fill(&mut key).expect("the operating system provides randomness");
        VerifiedTokens {
            mac: siphasher::sip128::SipHasher24::new_with_key(&key),
            entries: Mutex::new(HashMap::with_hasher(foldhash::fast::FixedState::default())),
        }
    }
}

impl VerifiedTokens {
    pub fn mac(&self, token: &[u8]) -> u128 {
        self.mac.hash(token).as_u128()
    }

    /// The token remembered under `mac`, if it is still valid at `now` (seconds) with
    /// `leeway`, verified with `key_set`.
    pub fn get(&self, mac: u128, now: u64, leeway: u64, key_set: usize) -> Option<Remembered> {
        let entries = self.entries.lock();
        let found = entries.get(&mac)?;
        let live = now <= found.expires.saturating_add(leeway)
            && found.not_before.is_none_or(|nbf| now.saturating_add(leeway) >= nbf)
            && found.key_set == key_set;
        live.then(|| found.clone())
    }

    pub fn remember(&self, mac: u128, token: Remembered) {
        let mut entries = self.entries.lock();
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(mac, token);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remembered(expires: u64, key_set: usize) -> Remembered {
        Remembered {
            subject: "alice".into(),
            claims: Default::default(),
            expires,
            not_before: Some(100),
            key_set,
        }
    }

    #[test]
    fn a_token_is_used_only_while_alive_and_verified_with_the_keys_held() {
        let cache = VerifiedTokens::default();
        let mac = cache.mac(b"a.b.c");
        cache.remember(mac, remembered(200, 1));
        assert!(cache.get(mac, 150, 0, 1).is_some());
        assert!(cache.get(mac, 201, 0, 1).is_none(), "expired");
        assert!(cache.get(mac, 205, 10, 1).is_some(), "within the leeway");
        assert!(cache.get(mac, 95, 0, 1).is_none(), "not yet valid");
        assert!(cache.get(mac, 150, 0, 2).is_none(), "another key set");
        assert!(cache.get(cache.mac(b"a.b.d"), 150, 0, 1).is_none());
        // Another server's MAC key: another MAC.
        assert_ne!(VerifiedTokens::default().mac(b"a.b.c"), mac);
    }

    #[test]
    fn a_full_cache_is_emptied() {
        let cache = VerifiedTokens::default();
        for i in 0..CAPACITY as u128 + 1 {
            cache.remember(i, remembered(200, 1));
        }
        assert_eq!(cache.len(), 1);
    }
}
