//! The API key format:
//!
//! ```text
//! svck_ 2Zb8qV0XyJ5mPc1sN4tRw7eLh3Ku9F  0kqW7z
//! └─┬─┘ └──────────── 30 random ───────┘ └ 6 ┘
//! prefix      base62, 178 bits            CRC32 of prefix and random part, base62
//! ```
//!
//! The prefix makes keys recognizable, so secret scanners (and people) can find leaked
//! ones; the checksum lets the server reject typos and garbage without a lookup. Only a
//! SHA-256 hash of the whole key is stored; with 178 random bits a fast hash is the right
//! choice (a slow password hash protects low-entropy secrets, and would make every
//! request pay for it).

use sha2::{Digest, Sha256};

pub const PREFIX: &str = "svck_";
const RANDOM_LEN: usize = 30;
const CHECKSUM_LEN: usize = 6;
pub const KEY_LEN: usize = PREFIX.len() + RANDOM_LEN + CHECKSUM_LEN;
const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn base62_fixed<const N: usize>(mut n: u64) -> [u8; N] {
    let mut out = [b'0'; N];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(n % 62) as usize];
        n /= 62;
    }
    out
}

/// Uniform random base62 characters (rejection sampling keeps every character equally likely).
fn random_base62(len: usize) -> String {
    let mut out = String::with_capacity(len);
    while out.len() < len {
        let mut bytes = [0u8; 64];
        getrandom::fill(&mut bytes).expect("the operating system provides randomness");
        for b in bytes {
            if b < 248 && out.len() < len {
                out.push(ALPHABET[(b % 62) as usize] as char);
            }
        }
    }
    out
}

/// A public key id, `key_` and 10 random characters: what `svc keys` shows and revokes by.
pub fn new_id() -> String {
    format!("key_{}", random_base62(10))
}

fn checksum(body: &[u8]) -> [u8; CHECKSUM_LEN] {
    base62_fixed(u64::from(crc32fast::hash(body)))
}

/// A new random key.
pub fn generate() -> String {
    let mut key = format!("{PREFIX}{}", random_base62(RANDOM_LEN));
    let sum = checksum(key.as_bytes());
    key.push_str(std::str::from_utf8(&sum).expect("base62 is ASCII"));
    key
}

/// Whether `key` has the format and a correct checksum.
///
/// Keys are checked as bytes: what a request presents need not be text, and whatever is
/// not a well-formed key is refused here.
pub fn is_well_formed(key: impl AsRef<[u8]>) -> bool {
    let key = key.as_ref();
    key.len() == KEY_LEN
        && key.starts_with(PREFIX.as_bytes())
        && key[PREFIX.len()..].iter().all(|b| b.is_ascii_alphanumeric())
        && checksum(&key[..KEY_LEN - CHECKSUM_LEN]) == key[KEY_LEN - CHECKSUM_LEN..]
}

/// The stored form of a key.
pub fn hash(key: impl AsRef<[u8]>) -> [u8; 32] {
    Sha256::digest(key.as_ref()).into()
}

/// What is shown to identify a key without revealing it: `svck_2Zb8…`.
pub fn display_prefix(key: &str) -> String {
    format!("{}…", &key[..PREFIX.len() + 4])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_well_formed_and_distinct() {
        let a = generate();
        let b = generate();
        assert_ne!(a, b);
        assert_eq!(a.len(), KEY_LEN);
        assert!(is_well_formed(&a), "{a}");
        assert!(a.starts_with("svck_"));
        assert_ne!(new_id(), new_id());
        assert_eq!(new_id().len(), 14);
    }

    #[test]
    fn typos_fail_the_checksum() {
        let k = generate();
        let mut chars: Vec<char> = k.chars().collect();
        let i = 10;
        chars[i] = if chars[i] == 'a' { 'b' } else { 'a' };
        let typo: String = chars.into_iter().collect();
        assert!(!is_well_formed(&typo));
        assert!(!is_well_formed(&k[..k.len() - 1]));
        assert!(!is_well_formed(format!("{k}x")));
        assert!(!is_well_formed(k.replacen("svck_", "svcx_", 1)));
        assert!(!is_well_formed(""));
        assert!(!is_well_formed("svck_ééééééééééééééééééééééééééééééééééééé"));
    }

    #[test]
    fn hashes_and_prefixes() {
        let k = generate();
        assert_eq!(hash(&k), hash(&k));
        assert_ne!(hash(&k), hash(generate()));
        assert_eq!(display_prefix(&k).chars().count(), 10);
    }
}
