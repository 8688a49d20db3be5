//! Signing helpers shared by the nodes: pure computation, allowed in node code.

use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = hmac::Hmac<Sha256>;

/// Hex-encoded HMAC-SHA256 of `timestamp.payload`.
pub fn sign(key: &str, timestamp: u64, payload: &str) -> String {
    let mut mac = HmacSha256::new_from_slice(key.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(payload.as_bytes());
    hex(&mac.finalize().into_bytes())
}

/// Constant-time comparison of a hex signature against the expected one.
pub fn verify(key: &str, timestamp: u64, payload: &str, signature: &str) -> bool {
    let mut mac = HmacSha256::new_from_slice(key.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(payload.as_bytes());
    match unhex(signature) {
        Some(bytes) => mac.verify_slice(&bytes).is_ok(),
        None => false,
    }
}

/// A public fingerprint of a key: the first 8 bytes of its SHA-256, in hex.
pub fn key_id(key: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    hex(&digest[..8])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_then_verify() {
        let s = sign("k", 10, "{}");
        assert!(verify("k", 10, "{}", &s));
        assert!(!verify("other", 10, "{}", &s));
        assert!(!verify("k", 11, "{}", &s));
        assert!(!verify("k", 10, "{}", "zz"));
        assert_eq!(key_id("k").len(), 16);
    }
}
