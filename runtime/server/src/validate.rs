//! Field constraints at the edge: what generated servers call to check a request's
//! body, query and headers (answering 400) and a code node's outputs (a node error)
//! against the constraints of `svc.config.yaml` and the flow.
//!
//! The generated code is straight-line: one call per constraint of each field, with the
//! limit written in the call (`out.minimum(v.quantity, 1.0, &at)`), in a `validate`
//! module of the server crate (docs/codegen.md). This module only words and collects
//! what is broken: where ([`At`], a JSON pointer built only when something is broken),
//! which constraint, its limit, and a message (the same words `svc check` uses, from
//! `svc_types::constraints::check`). It never repeats the offending value: a field may
//! carry a secret.

use crate::error::ApiError;
use http::StatusCode;
use serde::Serialize;
use std::collections::HashSet;
use std::sync::OnceLock;
pub use svc_types::constraints::Format;
use svc_types::constraints::{Broken, check};

/// At most this many violations are listed in one answer; `total` counts them all.
pub const MAX_LISTED: usize = 20;
/// A pointer longer than this is cut (a deep body cannot make the answer large).
const MAX_POINTER: usize = 256;

/// Where a value sits: the root of a part of the request (or of a node's output), then
/// fields and indexes. Built on the stack as the check descends; turned into a JSON
/// pointer only for a value that breaks a constraint.
#[derive(Clone, Copy)]
pub enum At<'a> {
    /// A part of the request (`body`, `query`, `header`) or a node output (`output`).
    Root(&'static str),
    /// A named member: a structure field, a query parameter, a header, an output pin.
    Field(&'a At<'a>, &'static str),
    Index(&'a At<'a>, usize),
}

impl<'a> At<'a> {
    pub const BODY: At<'static> = At::Root("body");
    pub const QUERY: At<'static> = At::Root("query");
    pub const HEADER: At<'static> = At::Root("header");
    pub const OUTPUT: At<'static> = At::Root("output");
    pub const INPUT: At<'static> = At::Root("input");

    pub fn field(&'a self, name: &'static str) -> At<'a> {
        At::Field(self, name)
    }

    pub fn index(&'a self, i: usize) -> At<'a> {
        At::Index(self, i)
    }

    fn root(&self) -> &'static str {
        match self {
            At::Root(r) => r,
            At::Field(parent, _) | At::Index(parent, _) => parent.root(),
        }
    }

    /// The RFC 6901 pointer below the root: `/lines/0/quantity`.
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        if out.len() > MAX_POINTER {
            let mut cut = MAX_POINTER;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push('…');
        }
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            At::Root(_) => {}
            At::Field(parent, name) => {
                parent.write(out);
                out.push('/');
                for c in name.chars() {
                    match c {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        c => out.push(c),
                    }
                }
            }
            At::Index(parent, i) => {
                parent.write(out);
                out.push('/');
                out.push_str(itoa::Buffer::new().format(*i));
            }
        }
    }
}

/// One broken constraint, as the answer lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// `body`, `query`, `header`, or `output`.
    #[serde(rename = "in")]
    pub in_: &'static str,
    /// The JSON pointer of the value within its part: `/lines/0/quantity`; for a query
    /// parameter or header, `/<name>`.
    pub pointer: String,
    /// The constraint's key: `minimum`, `format`, …
    pub constraint: &'static str,
    /// The constraint's limit: `1`, `"email"`, `true`.
    pub limit: serde_json::Value,
    /// What the constraint asks: `must be at least 1`.
    pub message: String,
}

/// The violations found in one request (or one node's outputs).
#[derive(Debug, Default)]
pub struct Violations {
    listed: Vec<Violation>,
    total: usize,
}

impl Violations {
    pub fn new() -> Self {
        Violations::default()
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn listed(&self) -> &[Violation] {
        &self.listed
    }

    #[cold]
    fn push(&mut self, at: &At<'_>, broken: Broken, limit: serde_json::Value) {
        self.total += 1;
        if self.listed.len() < MAX_LISTED {
            self.listed.push(Violation {
                in_: at.root(),
                pointer: at.pointer(),
                constraint: broken.constraint,
                limit,
                message: broken.message,
            });
        }
    }

    fn number(&mut self, broken: Option<Broken>, limit: f64, at: &At<'_>) {
        if let Some(b) = broken {
            self.push(at, b, number_value(limit));
        }
    }

    pub fn minimum(&mut self, v: f64, limit: f64, at: &At<'_>) {
        if v < limit {
            self.number(check::minimum(v, limit), limit, at);
        }
    }

    pub fn exclusive_minimum(&mut self, v: f64, limit: f64, at: &At<'_>) {
        if v <= limit {
            self.number(check::exclusive_minimum(v, limit), limit, at);
        }
    }

    pub fn maximum(&mut self, v: f64, limit: f64, at: &At<'_>) {
        if v > limit {
            self.number(check::maximum(v, limit), limit, at);
        }
    }

    pub fn exclusive_maximum(&mut self, v: f64, limit: f64, at: &At<'_>) {
        if v >= limit {
            self.number(check::exclusive_maximum(v, limit), limit, at);
        }
    }

    pub fn multiple_of(&mut self, v: f64, step: f64, at: &At<'_>) {
        self.number(check::multiple_of(v, step), step, at);
    }

    pub fn integer(&mut self, v: f64, at: &At<'_>) {
        if let Some(b) = check::integer(v) {
            self.push(at, b, serde_json::Value::Bool(true));
        }
    }

    pub fn min_length(&mut self, s: &str, n: u64, at: &At<'_>) {
        if let Some(b) = check::min_length(s, n) {
            self.push(at, b, n.into());
        }
    }

    pub fn max_length(&mut self, s: &str, n: u64, at: &At<'_>) {
        if let Some(b) = check::max_length(s, n) {
            self.push(at, b, n.into());
        }
    }

    pub fn pattern(&mut self, s: &str, pattern: &Pattern, at: &At<'_>) {
        if let Some(b) = check::pattern(pattern.is_match(s), pattern.source) {
            self.push(at, b, pattern.source.into());
        }
    }

    pub fn format(&mut self, s: &str, format: Format, at: &At<'_>) {
        if let Some(b) = check::format(s, format) {
            self.push(at, b, format.name().into());
        }
    }

    pub fn min_items(&mut self, len: usize, n: u64, at: &At<'_>) {
        if let Some(b) = check::min_items(len, n) {
            self.push(at, b, n.into());
        }
    }

    pub fn max_items(&mut self, len: usize, n: u64, at: &At<'_>) {
        if let Some(b) = check::max_items(len, n) {
            self.push(at, b, n.into());
        }
    }

    /// No two items alike, compared as JSON (so `1` and `1.0` are one number). Each item
    /// is written once and hashed: linear in the array, whatever its items.
    pub fn unique_items<T: Serialize>(&mut self, items: &[T], at: &At<'_>) {
        if items.len() < 2 {
            return;
        }
        let mut seen = HashSet::with_capacity(items.len());
        let distinct = items
            .iter()
            .all(|item| seen.insert(serde_json::to_string(item).unwrap_or_default()));
        if let Some(b) = check::unique_items(distinct) {
            self.push(at, b, serde_json::Value::Bool(true));
        }
    }

    /// The request's answer: `Ok` when nothing is broken, else 400 `invalid_request`
    /// listing the violations.
    pub fn into_result(self) -> Result<(), ApiError> {
        if self.is_empty() {
            return Ok(());
        }
        let message = match self.total {
            1 => format!("the request breaks a constraint: {}", self.listed[0].message),
            n => format!("the request breaks {n} constraints"),
        };
        Err(ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", message).violations(self.listed, self.total))
    }

    /// For a node's outputs: `None` when nothing is broken, else the message of the
    /// node error (`node_output_invalid`), naming where and what, not the value.
    pub fn into_output_problem(self) -> Option<String> {
        self.into_node_problem("output")
    }

    /// For a node's wired inputs, checked against its pins' constraints before it runs:
    /// `None` when nothing is broken, else the message of `node_input_invalid`.
    pub fn into_input_problem(self) -> Option<String> {
        self.into_node_problem("input")
    }

    fn into_node_problem(self, part: &str) -> Option<String> {
        let first = self.listed.first()?;
        let more = match self.total {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        Some(format!(
            "the node's {part} breaks a constraint: `{}` {} ({}){more}",
            first.pointer, first.message, first.constraint
        ))
    }
}

/// A number as JSON: whole numbers without a fraction (`1`, not `1.0`).
fn number_value(v: f64) -> serde_json::Value {
    if v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        serde_json::Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

/// A `pattern` constraint: compiled once, on first use, with the engine and limits `svc
/// check` compiled it with (so it cannot fail here), matching in time linear in the
/// input (the `regex` crate: finite automata, no backtracking).
pub struct Pattern {
    source: &'static str,
    compiled: OnceLock<regex::Regex>,
}

impl Pattern {
    pub const fn new(source: &'static str) -> Self {
        Pattern {
            source,
            compiled: OnceLock::new(),
        }
    }

    pub fn is_match(&self, s: &str) -> bool {
        self.compiled
            .get_or_init(|| {
                regex::RegexBuilder::new(self.source)
                    .size_limit(svc_types::constraints::PATTERN_SIZE_LIMIT)
                    .build()
                    .expect("svc check compiled this pattern with the same engine")
            })
            .is_match(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_and_nest() {
        let body = At::BODY;
        let lines = body.field("lines");
        let first = lines.index(0);
        let q = first.field("a/b~c");
        assert_eq!(q.pointer(), "/lines/0/a~1b~0c");
        assert_eq!(q.root(), "body");
        assert_eq!(At::QUERY.field("page").pointer(), "/page");
    }

    #[test]
    fn collects_every_violation_and_lists_at_most_twenty() {
        let mut v = Violations::new();
        for i in 0..25 {
            let lines = At::BODY.field("lines");
            v.minimum(0.0, 1.0, &lines.index(i).field("quantity"));
        }
        v.format("ada", Format::Email, &At::BODY.field("customerEmail"));
        let e = v.into_result().unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        let json: serde_json::Value = serde_json::from_slice(&e.to_json()).unwrap();
        let error = &json["error"];
        assert_eq!(error["code"], "invalid_request");
        assert_eq!(error["message"], "the request breaks 26 constraints");
        assert_eq!(error["violation_count"], 26);
        let listed = error["violations"].as_array().unwrap();
        assert_eq!(listed.len(), MAX_LISTED);
        assert_eq!(
            listed[0],
            serde_json::json!({"in": "body", "pointer": "/lines/0/quantity", "constraint": "minimum", "limit": 1, "message": "must be at least 1"})
        );
    }

    #[test]
    fn never_repeats_the_value() {
        let mut v = Violations::new();
        v.max_length("sk_live_secret_value", 4, &At::HEADER.field("x-token"));
        v.pattern(
            "sk_live_secret_value",
            &Pattern::new("^[0-9]+$"),
            &At::HEADER.field("x-token"),
        );
        let text = String::from_utf8(v.into_result().unwrap_err().to_json()).unwrap();
        assert!(!text.contains("sk_live"), "{text}");
    }

    #[test]
    fn unique_items_compares_as_json_in_linear_time() {
        let mut v = Violations::new();
        v.unique_items(&[1.0, 2.0, 3.0], &At::BODY);
        assert!(v.is_empty());
        v.unique_items(&["a", "b", "a"], &At::BODY);
        assert_eq!(v.listed()[0].constraint, "uniqueItems");
        let many: Vec<u64> = (0..200_000).collect();
        let mut v = Violations::new();
        v.unique_items(&many, &At::BODY);
        assert!(v.is_empty());
    }

    #[test]
    fn hostile_patterns_and_inputs_stay_linear() {
        // A pattern that backtracking engines take exponential time on.
        let p = Pattern::new("^(a+)+$");
        let input = format!("{}!", "a".repeat(100_000));
        assert!(!p.is_match(&input));
    }

    #[test]
    fn output_problems_name_the_place_and_the_rule() {
        let mut v = Violations::new();
        v.minimum(-1.0, 0.0, &At::OUTPUT.field("quote").field("total"));
        assert_eq!(
            v.into_output_problem().unwrap(),
            "the node's output breaks a constraint: `/quote/total` must be at least 0 (minimum)"
        );
    }
}
