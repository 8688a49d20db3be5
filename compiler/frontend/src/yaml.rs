//! YAML with a span on every node.
//!
//! serde-saphyr parses the text (YAML 1.2 booleans only, duplicate keys rejected, depth
//! and alias budgets on) into a generic tree of [`Node`]s that each carry a [`Span`].
//! The config and flow loaders then decode that tree by hand with [`MapReader`], so that
//! every problem — an unknown key, a missing field, a value of the wrong kind — is
//! reported at its exact place with a hint, and all of them are reported at once.

use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::{FileId, Span};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// A YAML value with its place.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// A short name of the value's kind, for messages: "a string", "a list", …
    pub fn kind(&self) -> &'static str {
        match &self.value {
            Value::Null => "nothing (null)",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::String(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// The value as JSON (for inline literals and defaults). Map keys become strings.
    pub fn to_json(&self) -> serde_json::Value {
        match &self.value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => (*b).into(),
            Value::Int(i) => (*i).into(),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::String(s) => s.clone().into(),
            Value::Seq(items) => items.iter().map(Node::to_json).collect(),
            Value::Map(entries) => entries
                .iter()
                .map(|(k, v)| (k.scalar_text(), v.to_json()))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }

    /// A scalar's text (for keys written as numbers or booleans).
    pub fn scalar_text(&self) -> String {
        match &self.value {
            Value::String(s) => s.clone(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Null => "null".into(),
            Value::Seq(_) | Value::Map(_) => String::new(),
        }
    }

    /// "expected X, found Y" at this node.
    pub fn wrong_shape(&self, expected: &str, help: impl Into<String>) -> Diagnostic {
        Diagnostic::new(
            Code::WrongShape,
            self.span,
            format!("expected {expected}, found {}", self.kind()),
        )
        .label(format!("expected {expected}"))
        .help(help)
    }
}

/// Parses YAML text. A syntax error is reported as one diagnostic at its place.
pub fn parse(file: FileId, text: &str) -> Result<Node, Diagnostic> {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.with_snippet = false;
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    if text.trim().is_empty() {
        return Ok(Node {
            value: Value::Null,
            span: Span::file_start(file),
        });
    }
    match serde_saphyr::from_str_with_options::<Spanned<Raw>>(text, options) {
        Ok(raw) => Ok(convert(file, raw)),
        Err(e) => {
            let (line, column) = e
                .location()
                .map(|l| (l.line().max(1) as u32, l.column().max(1) as u32))
                .unwrap_or((1, 1));
            let message = clean_error_message(&e.to_string());
            let (help, code) = if message.contains("duplicate") {
                (
                    "each key may appear once in a mapping; remove or rename the repeated key",
                    Code::YamlSyntax,
                )
            } else if message.contains("budget") || message.contains("depth") || message.contains("alias") {
                (
                    "the file is nested too deeply or expands too many aliases; flatten it",
                    Code::YamlSyntax,
                )
            } else {
                (
                    "fix the YAML syntax at this place (check indentation, `:` and quotes)",
                    Code::YamlSyntax,
                )
            };
            Err(Diagnostic::new(
                code,
                Span::new(file, line, column, 1),
                format!("invalid YAML: {message}"),
            )
            .label("here")
            .help(help))
        }
    }
}

/// serde-saphyr prefixes messages with "error: line L column C: "; we print the place
/// ourselves.
fn clean_error_message(message: &str) -> String {
    let first_line = message.lines().next().unwrap_or(message);
    let mut m = first_line.trim_start_matches("error: ").to_string();
    if let Some(idx) = m.find(" at line ") {
        m.truncate(idx);
    }
    if m.starts_with("line ") {
        if let Some(idx) = m.find(": ") {
            m = m[idx + 2..].to_string();
        }
    }
    m
}

/// The tree as serde-saphyr gives it (spans without a file).
#[derive(Debug)]
enum Raw {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<Raw>, Spanned<Raw>)>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RawVisitor;
        impl<'de> Visitor<'de> for RawVisitor {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_unit<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_none<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
                Raw::deserialize(d)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Raw, E> {
                Ok(Raw::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Raw, E> {
                Ok(Raw::Int(n))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Raw, E> {
                Ok(i64::try_from(n).map(Raw::Int).unwrap_or(Raw::Float(n as f64)))
            }
            fn visit_i128<E>(self, n: i128) -> Result<Raw, E> {
                Ok(i64::try_from(n).map(Raw::Int).unwrap_or(Raw::Float(n as f64)))
            }
            fn visit_u128<E>(self, n: u128) -> Result<Raw, E> {
                Ok(i64::try_from(n).map(Raw::Int).unwrap_or(Raw::Float(n as f64)))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Raw, E> {
                Ok(Raw::Float(n))
            }
            fn visit_str<E>(self, s: &str) -> Result<Raw, E> {
                Ok(Raw::String(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<Raw, E> {
                Ok(Raw::String(s))
            }
            fn visit_bytes<E: serde::de::Error>(self, b: &[u8]) -> Result<Raw, E> {
                Ok(Raw::String(String::from_utf8_lossy(b).into_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = a.next_element::<Spanned<Raw>>()? {
                    items.push(item);
                }
                Ok(Raw::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = a.next_entry::<Spanned<Raw>, Spanned<Raw>>()? {
                    entries.push(entry);
                }
                Ok(Raw::Map(entries))
            }
        }
        d.deserialize_any(RawVisitor)
    }
}

fn convert(file: FileId, raw: Spanned<Raw>) -> Node {
    let loc = raw.referenced;
    let span = Span::new(
        file,
        loc.line().max(1) as u32,
        loc.column().max(1) as u32,
        loc.span().len() as u32,
    );
    let value = match raw.value {
        Raw::Null => Value::Null,
        Raw::Bool(b) => Value::Bool(b),
        Raw::Int(i) => Value::Int(i),
        Raw::Float(f) => Value::Float(f),
        Raw::String(s) => Value::String(s),
        Raw::Seq(items) => Value::Seq(items.into_iter().map(|i| convert(file, i)).collect()),
        Raw::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (convert(file, k), convert(file, v)))
                .collect(),
        ),
    };
    Node { value, span }
}

/// Reads the keys of one YAML mapping, remembering which were used, so that the keys
/// left over can be reported as unknown (with a "did you mean").
pub struct MapReader<'a> {
    node: &'a Node,
    entries: &'a [(Node, Node)],
    used: Vec<bool>,
    /// What this mapping is, for messages: "the check-origin node `origin`".
    what: String,
}

impl<'a> MapReader<'a> {
    /// Starts reading `node`, which must be a mapping (an empty/null value reads as an
    /// empty mapping, so that a missing field is reported rather than a shape error).
    pub fn new(node: &'a Node, what: impl Into<String>, diags: &mut Diagnostics) -> Option<Self> {
        let what = what.into();
        let entries: &'a [(Node, Node)] = match &node.value {
            Value::Map(m) => m,
            Value::Null => &[],
            _ => {
                diags.push(node.wrong_shape("a mapping", format!("{what} is written as `key: value` lines")));
                return None;
            }
        };
        for (k, _) in entries {
            if k.as_str().is_none() {
                diags.push(k.wrong_shape(
                    "a string key",
                    "keys in this file are names; quote the key if it is a number",
                ));
            }
        }
        Some(MapReader {
            node,
            entries,
            used: vec![false; entries.len()],
            what,
        })
    }

    pub fn span(&self) -> Span {
        self.node.span
    }

    pub fn what(&self) -> &str {
        &self.what
    }

    /// The value of `key`, marking it used.
    pub fn get(&mut self, key: &str) -> Option<&'a Node> {
        let idx = self.entries.iter().position(|(k, _)| k.as_str() == Some(key))?;
        self.used[idx] = true;
        Some(&self.entries[idx].1)
    }

    /// The key node of `key` (for pointing at the key rather than the value).
    pub fn key_span(&self, key: &str) -> Option<Span> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(k, _)| k.span)
    }

    /// The value of a required `key`; reports it missing otherwise.
    pub fn required(&mut self, key: &str, help: &str, diags: &mut Diagnostics) -> Option<&'a Node> {
        let v = self.get(key);
        if v.is_none() {
            diags.push(
                Diagnostic::new(
                    Code::MissingField,
                    self.node.span,
                    format!("{} has no `{key}`", self.what),
                )
                .label(format!("`{key}` is missing here"))
                .help(help.to_string()),
            );
        }
        v
    }

    /// Every entry not read yet, marking them used (for maps of user-chosen keys).
    pub fn rest(&mut self) -> Vec<(&'a Node, &'a Node)> {
        let mut out = Vec::new();
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if !self.used[i] {
                self.used[i] = true;
                out.push((k, v));
            }
        }
        out
    }

    /// Reports every key that was not read as unknown, suggesting the closest known key.
    pub fn finish(self, known: &[&str], diags: &mut Diagnostics) {
        for (i, (k, _)) in self.entries.iter().enumerate() {
            if self.used[i] {
                continue;
            }
            let Some(name) = k.as_str() else { continue };
            let help = match svc_types::assets::closest(name, known.iter().copied()) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!(
                    "{} accepts: {}",
                    self.what,
                    known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
            };
            diags.push(
                Diagnostic::new(
                    Code::UnknownField,
                    k.span,
                    format!("unknown key `{name}` in {}", self.what),
                )
                .label("not recognized")
                .help(help),
            );
        }
    }
}

/// Reads a string, or reports the shape.
pub fn expect_str<'a>(node: &'a Node, help: &str, diags: &mut Diagnostics) -> Option<&'a str> {
    match &node.value {
        Value::String(s) => Some(s),
        _ => {
            diags.push(node.wrong_shape("a string", help.to_string()));
            None
        }
    }
}

/// Reads a list of strings, or reports the shape of each bad item.
pub fn expect_str_list<'a>(node: &'a Node, help: &str, diags: &mut Diagnostics) -> Option<Vec<(&'a str, Span)>> {
    let items = match &node.value {
        Value::Seq(items) => items,
        // A single string is accepted where a list of one is meant.
        Value::String(s) => return Some(vec![(s.as_str(), node.span)]),
        _ => {
            diags.push(node.wrong_shape("a list of strings", help.to_string()));
            return None;
        }
    };
    let mut out = Vec::new();
    for item in items {
        if let Some(s) = expect_str(item, help, diags) {
            out.push((s, item.span));
        }
    }
    Some(out)
}

/// Reads a non-negative integer, or reports the shape.
pub fn expect_u64(node: &Node, help: &str, diags: &mut Diagnostics) -> Option<u64> {
    match &node.value {
        Value::Int(i) if *i >= 0 => Some(*i as u64),
        _ => {
            diags.push(node.wrong_shape("a whole number of at least 0", help.to_string()));
            None
        }
    }
}

/// Reads a boolean, or reports the shape.
pub fn expect_bool(node: &Node, help: &str, diags: &mut Diagnostics) -> Option<bool> {
    match &node.value {
        Value::Bool(b) => Some(*b),
        _ => {
            diags.push(node.wrong_shape("`true` or `false`", help.to_string()));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Node {
        parse(FileId(0), text).unwrap()
    }

    #[test]
    fn every_node_has_a_place() {
        let n = p("route: orders\nmethods: [POST, GET]\nlimit: 100\n");
        let m = n.as_map().unwrap();
        assert_eq!((m[0].0.span.line, m[0].0.span.column, m[0].0.span.len), (1, 1, 5));
        assert_eq!((m[0].1.span.line, m[0].1.span.column, m[0].1.span.len), (1, 8, 6));
        let methods = m[1].1.as_seq().unwrap();
        assert_eq!((methods[1].span.line, methods[1].span.column), (2, 17));
        assert_eq!(m[2].1.value, Value::Int(100));
    }

    #[test]
    fn yaml_1_1_booleans_stay_strings() {
        let n = p("on: yes\nno: off\nt: true\n");
        let m = n.as_map().unwrap();
        assert_eq!(m[0].0.as_str(), Some("on"));
        assert_eq!(m[0].1.as_str(), Some("yes"));
        assert_eq!(m[2].1.value, Value::Bool(true));
    }

    #[test]
    fn syntax_and_duplicate_errors_have_places() {
        let e = parse(FileId(0), "a: [1, 2\nb: c\n").unwrap_err();
        assert_eq!(e.code, Code::YamlSyntax);
        assert_eq!(e.primary.span.line, 2);
        let e = parse(FileId(0), "a: 1\na: 2\n").unwrap_err();
        assert!(e.message.contains("duplicate"), "{}", e.message);
        assert_eq!(e.primary.span.line, 2);
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = "[".repeat(100_000);
        assert!(parse(FileId(0), &text).is_err());
        let text = format!("a: {}", "- ".repeat(10_000));
        let _ = parse(FileId(0), &text);
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        assert!(parse(FileId(0), &text).is_err());
    }

    #[test]
    fn map_reader_reports_missing_and_unknown_keys() {
        let n = p("type: check-origin\nallowed_origin: [x]\n");
        let mut d = Diagnostics::new();
        let mut r = MapReader::new(&n, "the node `origin`", &mut d).unwrap();
        assert!(r.get("type").is_some());
        assert!(r.required("allowed_origins", "list them", &mut d).is_none());
        r.finish(&["type", "allowed_origins"], &mut d);
        let codes: Vec<_> = d.iter().map(|d| (d.code, d.help.clone())).collect();
        assert_eq!(codes[0].0, Code::MissingField);
        assert_eq!(codes[1].0, Code::UnknownField);
        assert!(codes[1].1.contains("allowed_origins"));
    }
}
