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

/// Headers whose values are never shown (as in the server's own logs): these, and any
/// whose name says it carries a credential ([`names_a_credential`]).
const CREDENTIAL_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
];

/// Whether a header's name says it carries a credential (`X-Auth-Token`,
/// `X-Session-Id`, `X-Hub-Signature`, `Api-Key`): a session or a key other than the one
/// the flows read is a credential too.
fn names_a_credential(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "auth", "token", "secret", "session", "cookie", "password", "api-key", "apikey", "signature", "csrf", "xsrf",
    ];
    CREDENTIAL_HEADERS.contains(&name) || WORDS.iter().any(|w| name.contains(w))
}

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
            if names_a_credential(&name) || places.headers.iter().any(|h| h.eq_ignore_ascii_case(&name)) {
                *value = REDACTED.into();
            }
        }
    }
    if let Some(query) = shown.get("query").and_then(Value::as_str) {
        // Names are compared as the server reads them: percent-decoded (`%6Bey` is `key`).
        let cleaned: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if places.query.iter().any(|q| *q == form_decoded(name)) => {
                    format!("{name}={REDACTED}")
                }
                _ => pair.to_string(),
            })
            .collect();
        shown["query"] = cleaned.join("&").into();
    }
    // Keys wired into a node, echoed in a body or logged: whatever looks like one, in
    // whatever encoding the server would decode it from.
    without_keys_anywhere(&mut shown);
    // And in names (an object's keys), as written.
    serde_json::from_str(&without_keys(&shown.to_string())).unwrap_or(Value::Null)
}

/// Every string in `value` with key-shaped runs redacted, as written or once decoded
/// (percent-encoded, or JSON text with `\u` escapes): `%73vck_…` is a key too.
fn without_keys_anywhere(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Some(clean) = text_without_keys(text) {
                *text = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(without_keys_anywhere),
        Value::Object(fields) => fields.values_mut().for_each(without_keys_anywhere),
        _ => {}
    }
}

/// `text` without keys, or `None` when it holds none in any form.
fn text_without_keys(text: &str) -> Option<String> {
    let plain = without_keys(text);
    if plain != text {
        return Some(without_keys_anywhere_decoded(&plain).unwrap_or(plain));
    }
    without_keys_anywhere_decoded(text)
}

/// The decoded forms of `text` that hold a key, redacted; `None` when none does.
fn without_keys_anywhere_decoded(text: &str) -> Option<String> {
    if text.contains('%') {
        let decoded = form_decoded(text);
        let clean = without_keys(&decoded);
        if clean != decoded {
            return Some(clean);
        }
    }
    if text.contains("\\u")
        && let Ok(mut parsed) = serde_json::from_str::<Value>(text)
    {
        let before = parsed.clone();
        without_keys_anywhere(&mut parsed);
        if parsed != before {
            return Some(parsed.to_string());
        }
    }
    None
}

/// A query or form component as a server decodes it: `+` is a space, `%XX` a byte.
fn form_decoded(text: &str) -> String {
    let spaced = text.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
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

    /// Encoded forms are decoded before matching, as the server decodes them: a query
    /// name or value, a form body, a JSON body with escapes; and session headers are
    /// redacted whatever their scheme.
    #[test]
    fn credentials_in_any_encoding_never_reach_the_browser() {
        let key = svc_runtime::apikey::format::generate();
        let encoded = format!("%73{}", &key[1..]);
        let escaped = format!("\\u0073{}", &key[1..]);
        let raw = json!({
            "query": format!("%6Bey=abc&other={encoded}&k%65y=def&page=2"),
            "headers": [["X-Auth-Token", "session-1"], ["Authorization", "Basic dTpw"], ["X-Session-Id", "s-2"],
                        ["Cookie", "sid=3"], ["accept", "*/*"]],
            "body": { "text": format!("{{\"k\": \"{escaped}\"}}") },
            "steps": [{ "logs": [format!("form: key={encoded}")] }],
        });
        let places = KeyPlaces {
            headers: vec![],
            query: vec!["key".into()],
        };
        let traces = Traces::default();
        traces.add(raw, &places);
        let shown = traces.since(None).remove(0);
        let text = shown.to_string();
        for secret in ["abc", "def", "session-1", "dTpw", "s-2", "sid=3", &key[5..], &encoded, &escaped] {
            assert!(!text.contains(secret), "`{secret}` in {text}");
        }
        assert!(shown["query"].as_str().unwrap().ends_with("page=2"), "{text}");
        assert!(text.contains("*/*"), "{text}");
    }

    #[test]
    fn only_key_shaped_runs_are_redacted() {
        assert_eq!(without_keys("svck_ab"), "svck_ab");
        assert_eq!(without_keys("a svck_0123456789abcdef b"), format!("a {REDACTED} b"));
    }
}
