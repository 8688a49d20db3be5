//! Request ids: taken from a well-formed incoming `X-Request-Id` (so a caller or a proxy
//! in front can correlate), otherwise generated. Echoed on every response.
//!
//! The server's middleware settles the id once ([`RequestId::assign`]) and writes it into
//! the request's own `X-Request-Id` header, where everything after it (the route, the 404
//! and 405 answers, `ctx.request.headers` of nodes) reads it: one source of truth, and no
//! per-request allocation beyond the header value itself.

use http::{HeaderMap, HeaderName, HeaderValue};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

pub const HEADER: HeaderName = HeaderName::from_static("x-request-id");

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn prefix() -> u64 {
    static PREFIX: OnceLock<u64> = OnceLock::new();
    *PREFIX.get_or_init(|| {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).unwrap_or_default();
        u64::from_le_bytes(bytes) & 0x0000_ffff_ffff_ffff
    })
}

/// One request's id: at most 64 characters of `[A-Za-z0-9._-]`, so it is safe to log,
/// to echo in a header and to put in a JSON body. Cloning it does not allocate.
#[derive(Clone, PartialEq, Eq)]
pub struct RequestId(HeaderValue);

impl RequestId {
    /// A new id: 12 hex digits random per process, then 12 of a counter. Unique within a
    /// process, and across processes with overwhelming probability; no syscall per request.
    pub fn generate() -> RequestId {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let n = COUNTER.fetch_add(1, Ordering::Relaxed) & 0x0000_ffff_ffff_ffff;
        let mut text = [0u8; 24];
        for (i, word) in [prefix(), n].into_iter().enumerate() {
            for j in 0..12 {
                text[i * 12 + j] = HEX[((word >> (44 - 4 * j)) & 0xf) as usize];
            }
        }
        RequestId(HeaderValue::from_bytes(&text).expect("hex digits are a valid header value"))
    }

    /// The caller's id if it is well-formed, else a new one.
    pub fn from_header(value: Option<&HeaderValue>) -> RequestId {
        match value {
            Some(v) if well_formed(v.as_bytes()) => RequestId(v.clone()),
            _ => RequestId::generate(),
        }
    }

    /// Settles the id of a request and writes it into the request's `X-Request-Id`
    /// (replacing a malformed or repeated one).
    pub fn assign(headers: &mut HeaderMap) -> RequestId {
        let mut values = headers.get_all(HEADER).iter();
        if let (Some(v), None) = (values.next(), values.next())
            && well_formed(v.as_bytes())
        {
            return RequestId(v.clone());
        }
        let id = RequestId::generate();
        headers.insert(HEADER, id.0.clone());
        id
    }

    /// The id of a request that went through [`RequestId::assign`] (a new one otherwise).
    pub fn of(headers: &HeaderMap) -> RequestId {
        RequestId::from_header(headers.get(HEADER))
    }

    pub fn as_str(&self) -> &str {
        // Well-formed ids are ASCII by construction.
        self.0.to_str().unwrap_or_default()
    }

    /// The id as a header value.
    pub fn header_value(&self) -> HeaderValue {
        self.0.clone()
    }
}

fn well_formed(id: &[u8]) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RequestId({})", self.as_str())
    }
}

impl From<RequestId> for String {
    fn from(id: RequestId) -> String {
        id.as_str().to_string()
    }
}

impl From<&RequestId> for String {
    fn from(id: &RequestId) -> String {
        id.as_str().to_string()
    }
}

/// A new id, as text.
pub fn generate() -> String {
    RequestId::generate().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_unique_hex() {
        let a = RequestId::generate();
        let b = RequestId::generate();
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 24);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        // The counter half counts up (other tests running in parallel take ids from the
        // same counter, so only the order is certain, not the step).
        let n = |id: &RequestId| u64::from_str_radix(&id.as_str()[12..], 16).unwrap();
        assert!(n(&b) > n(&a));
        assert_eq!(&a.as_str()[..12], &b.as_str()[..12]);
    }

    #[test]
    fn well_formed_incoming_ids_are_kept() {
        let id = RequestId::from_header(Some(&HeaderValue::from_static("abc-123")));
        assert_eq!(id.as_str(), "abc-123");
        let bad = RequestId::from_header(Some(&HeaderValue::from_static("bad id\"<>")));
        assert_ne!(bad.as_str(), "bad id\"<>");
        assert_eq!(RequestId::from_header(None).as_str().len(), 24);
        let long = "a".repeat(65);
        assert_eq!(
            RequestId::from_header(Some(&HeaderValue::from_str(&long).unwrap()))
                .as_str()
                .len(),
            24
        );
    }

    #[test]
    fn assign_writes_the_id_into_the_request() {
        let mut headers = HeaderMap::new();
        let id = RequestId::assign(&mut headers);
        assert_eq!(headers.get(HEADER).unwrap(), id.as_str());
        assert_eq!(RequestId::of(&headers), id);

        let mut headers = HeaderMap::new();
        headers.insert(HEADER, HeaderValue::from_static("from-the-proxy"));
        assert_eq!(RequestId::assign(&mut headers).as_str(), "from-the-proxy");

        // Two ids: neither is trusted, one new id replaces both.
        let mut headers = HeaderMap::new();
        headers.append(HEADER, HeaderValue::from_static("one"));
        headers.append(HEADER, HeaderValue::from_static("two"));
        let id = RequestId::assign(&mut headers);
        assert_eq!(headers.get_all(HEADER).iter().count(), 1);
        assert_eq!(id.as_str().len(), 24);
    }
}
