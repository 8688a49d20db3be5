//! The requests `svc dev`'s server answered, as the Builder shows them: each one's route,
//! status and duration, the way each node went, its inputs, outputs and logs.
//!
//! The dev server posts every trace here (`runtime/server/src/dev_traces.rs`). They are
//! kept in a bounded ring (the oldest dropped first; memory stays flat under a flood of
//! requests) in `svc dev`'s own process, so they outlive every rebuild of the server.
//! What the browser gets has no credentials: the headers that can carry a key or a
//! session, the query parameters and headers the flows read keys from, and anything
//! shaped like an API key are redacted. The request as received is kept here only, to
//! replay it.

use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Mutex;

/// At most this many traces, and this many bytes of them, are kept.
const MAX_TRACES: usize = 200;
const MAX_BYTES: usize = 4 * 1024 * 1024;

/// Headers whose values are never shown (as in the server's own logs).
const CREDENTIAL_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
];

pub const REDACTED: &str = "[redacted]";

struct Entry {
    seq: u64,
    /// As the dev server sent it: for replay.
    raw: Value,
    /// As the browser may see it.
    shown: Value,
    bytes: usize,
}

#[derive(Default)]
pub struct Traces {
    ring: Mutex<Ring>,
    arrived: tokio::sync::Notify,
}

#[derive(Default)]
struct Ring {
    entries: VecDeque<Entry>,
    bytes: usize,
    next: u64,
}

/// Where keys come from in a project's flows, to redact them in traces.
#[derive(Default, Clone)]
pub struct KeyPlaces {
    pub headers: Vec<String>,
    pub query: Vec<String>,
}

impl Traces {
    /// Keeps a trace the dev server sent; returns its number.
    pub fn add(&self, raw: Value, places: &KeyPlaces) -> u64 {
        let mut ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        let seq = ring.next;
        ring.next += 1;
        let mut shown = redacted(&raw, places);
        shown["seq"] = seq.into();
        let bytes = raw.to_string().len() + shown.to_string().len();
        ring.bytes += bytes;
        ring.entries.push_back(Entry { seq, raw, shown, bytes });
        while ring.entries.len() > MAX_TRACES || (ring.bytes > MAX_BYTES && ring.entries.len() > 1) {
            if let Some(old) = ring.entries.pop_front() {
                ring.bytes -= old.bytes;
            }
        }
        drop(ring);
        self.arrived.notify_waiters();
        seq
    }

    /// The traces after `after` (all kept ones for `None`), as the browser may see them.
    pub fn since(&self, after: Option<u64>) -> Vec<Value> {
        let ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        ring.entries
            .iter()
            .filter(|e| after.is_none_or(|a| e.seq > a))
            .map(|e| e.shown.clone())
            .collect()
    }

    /// The trace as received, to replay it.
    pub fn raw(&self, seq: u64) -> Option<Value> {
        let ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        ring.entries.iter().find(|e| e.seq == seq).map(|e| e.raw.clone())
    }

    /// Notified when a trace arrives.
    pub fn arrivals(&self) -> &tokio::sync::Notify {
        &self.arrived
    }

    /// How many are kept, and their size (for tests of the bound).
    #[cfg(test)]
    fn kept(&self) -> (usize, usize) {
        let ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        (ring.entries.len(), ring.bytes)
    }
}

/// A trace without credentials: the headers and query parameters that carry them, and
/// anything shaped like an API key anywhere in it.
fn redacted(raw: &Value, places: &KeyPlaces) -> Value {
    let mut shown = raw.clone();
    if let Some(headers) = shown.get_mut("headers").and_then(Value::as_array_mut) {
        for pair in headers.iter_mut() {
            let Some([name, value]) = pair.as_array_mut().map(|p| p.as_mut_slice()) else {
                continue;
            };
            let name = name.as_str().unwrap_or_default().to_ascii_lowercase();
            if CREDENTIAL_HEADERS.contains(&name.as_str())
                || places.headers.iter().any(|h| h.eq_ignore_ascii_case(&name))
            {
                *value = REDACTED.into();
            }
        }
    }
    if let Some(query) = shown.get("query").and_then(Value::as_str) {
        let cleaned: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if places.query.iter().any(|q| q == name) => format!("{name}={REDACTED}"),
                _ => pair.to_string(),
            })
            .collect();
        shown["query"] = cleaned.join("&").into();
    }
    // Keys wired into a node, echoed in a body or logged: whatever looks like one.
    serde_json::from_str(&without_keys(&shown.to_string())).unwrap_or(Value::Null)
}

/// `text` with every API-key-shaped run (`svck_` and what follows of base62) redacted.
pub fn without_keys(text: &str) -> String {
    let prefix = svc_runtime::apikey::format::PREFIX;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        out.push_str(&rest[..at]);
        let after = &rest[at + prefix.len()..];
        let run = after.bytes().take_while(u8::is_ascii_alphanumeric).count();
        if run >= 8 {
            out.push_str(REDACTED);
        } else {
            out.push_str(&rest[at..at + prefix.len() + run]);
        }
        rest = &after[run..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credentials_never_reach_the_browser() {
        let key = svc_runtime::apikey::format::generate();
        let raw = json!({
            "method": "POST", "path": "/a/b/orders", "query": format!("page=2&key={key}"),
            "headers": [["x-api-key", key], ["X-Partner-Key", "partner-secret"], ["accept", "*/*"], ["cookie", "s=1"]],
            "body": { "text": format!("{{\"echo\": \"{key}\"}}") },
            "steps": [{ "node": "n", "outcome": "next", "inputs": { "k": key } }],
        });
        let places = KeyPlaces {
            headers: vec!["x-partner-key".into()],
            query: vec!["key".into()],
        };
        let traces = Traces::default();
        traces.add(raw.clone(), &places);
        let shown = traces.since(None).remove(0).to_string();
        assert!(!shown.contains(&key), "{shown}");
        assert!(!shown.contains("partner-secret"), "{shown}");
        assert!(!shown.contains("s=1"), "{shown}");
        assert!(shown.contains("page=2"), "{shown}");
        assert!(shown.contains("*/*"), "{shown}");
        // The request as received stays here, for replay.
        assert_eq!(traces.raw(0).unwrap(), raw);
    }

    #[test]
    fn the_ring_is_bounded_in_count_and_bytes() {
        let traces = Traces::default();
        for i in 0..(MAX_TRACES + 50) {
            traces.add(json!({ "n": i }), &KeyPlaces::default());
        }
        assert_eq!(traces.kept().0, MAX_TRACES);
        assert_eq!(traces.since(None)[0]["n"], 50, "the oldest went first");
        assert_eq!(traces.since(Some(MAX_TRACES as u64 + 48)).len(), 1);
        let big = "x".repeat(MAX_BYTES / 4);
        for _ in 0..10 {
            traces.add(json!({ "big": big }), &KeyPlaces::default());
        }
        assert!(traces.kept().1 <= MAX_BYTES + 2 * big.len() + 100);
    }

    #[test]
    fn only_key_shaped_runs_are_redacted() {
        assert_eq!(without_keys("svck_ab"), "svck_ab");
        assert_eq!(without_keys("a svck_0123456789abcdef b"), format!("a {REDACTED} b"));
    }
}
