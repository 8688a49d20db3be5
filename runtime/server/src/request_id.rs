//! Request ids: taken from a well-formed incoming `X-Request-Id` (so a caller or a proxy
//! in front can correlate), otherwise generated. Echoed on every response.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

pub const HEADER: &str = "x-request-id";

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn prefix() -> u64 {
    static PREFIX: OnceLock<u64> = OnceLock::new();
    *PREFIX.get_or_init(|| {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).unwrap_or_default();
        u64::from_le_bytes(bytes) & 0x0000_ffff_ffff_ffff
    })
}

/// A new id: 12 hex digits random per process, then 12 of a counter. Unique within a
/// process, and across processes with overwhelming probability; no syscall per request.
pub fn generate() -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed) & 0x0000_ffff_ffff_ffff;
    format!("{:012x}{:012x}", prefix(), n)
}

/// The caller's id if it is 1–64 characters of `[A-Za-z0-9._-]`, else a new one. Anything
/// else is replaced so that ids are safe to log and to echo.
pub fn from_header(value: Option<&http::HeaderValue>) -> String {
    match value.and_then(|v| v.to_str().ok()) {
        Some(v)
            if !v.is_empty()
                && v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')) =>
        {
            v.to_string()
        }
        _ => generate(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        let a = generate();
        let b = generate();
        assert_ne!(a, b);
        assert_eq!(a.len(), 24);
        assert_eq!(from_header(Some(&http::HeaderValue::from_static("abc-123"))), "abc-123");
        assert_ne!(
            from_header(Some(&http::HeaderValue::from_static("bad id\"<>"))),
            "bad id\"<>"
        );
        assert_eq!(from_header(None).len(), 24);
    }
}
