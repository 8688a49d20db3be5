//! YAML with a span on every node.
//!
//! The text is parsed (YAML 1.2 core schema, duplicate keys rejected, depth, size and
//! alias limits on) into a generic tree of [`Node`]s that each carry a [`Span`].
//! The config and flow loaders then decode that tree by hand with [`MapReader`], so that
//! every problem — an unknown key, a missing field, a value of the wrong kind — is
//! reported at its exact place with a hint, and all of them are reported at once.

use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::{FileId, Span};

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

    /// The value as JSON text, keeping the key order as written (unlike a
    /// `serde_json::Value`, whose maps are sorted).
    pub fn to_json_text(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match &self.value {
            Value::Map(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::String(k.scalar_text()).to_string());
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
            Value::Seq(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push(']');
            }
            _ => out.push_str(&self.to_json().to_string()),
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

/// Limits that keep hostile input from exhausting the stack or memory.
const MAX_DEPTH: usize = 64;
const MAX_NODES: usize = 1_000_000;
/// Nodes that aliases may copy in, in total (an "alias bomb" expands exponentially).
const MAX_ALIAS_NODES: usize = 100_000;
const SYNTAX_HELP: &str = "fix the YAML syntax at this place (check indentation, `:` and quotes)";

/// Parses a document the caller reads on: a syntax error goes to `diags` and gives `None`.
pub fn parse_reporting(file: FileId, text: &str, diags: &mut Diagnostics) -> Option<Node> {
    parse(file, text).map_err(|d| diags.push(d)).ok()
}

/// Parses YAML text. A syntax error is reported as one diagnostic at its place.
///
/// The tree is built from the event parser under serde-saphyr (`granit_parser`): every
/// event carries its source span, which is all we need, and skipping the serde layer
/// (whose `Spanned<T>` is decoded as a map of location fields per node) halves the
/// time of `svc check` on large projects. Scalars are resolved with the YAML 1.2 core
/// schema: `yes`/`no`/`on`/`off` stay strings. Duplicate keys, more than one document,
/// nesting deeper than 64 levels and alias expansion beyond 100,000 nodes are errors.
pub fn parse(file: FileId, text: &str) -> Result<Node, Diagnostic> {
    use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};

    enum Frame {
        Seq(Vec<Node>, Span, usize),
        /// Entries, span, anchor, the key waiting for its value, and the scalar keys seen
        /// (so that a duplicate is found in constant time, not by scanning the entries).
        Map(Vec<(Node, Node)>, Span, usize, Option<Node>, ScalarKeys),
    }
    let error = |line: usize, col: usize, message: String, help: &str| {
        Diagnostic::new(
            Code::YamlSyntax,
            Span::new(file, line.max(1) as u32, col as u32 + 1, 1),
            format!("invalid YAML: {message}"),
        )
        .label("here")
        .help(help.to_string())
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: std::collections::HashMap<usize, Node> = std::collections::HashMap::new();
    let mut root: Option<Node> = None;
    let mut nodes = 0usize;
    let mut alias_nodes = 0usize;
    let mut documents = 0usize;

    for event in Parser::new_from_str(text) {
        let (event, span) = match event {
            Ok(e) => e,
            Err(e) => {
                let m = e.marker();
                return Err(error(m.line(), m.col(), e.info().to_string(), SYNTAX_HELP));
            }
        };
        let start = span.start;
        let one_line_len = if span.end.line() == start.line() {
            span.end.col().saturating_sub(start.col())
        } else {
            1
        };
        let here = |len: usize| Span::new(file, start.line().max(1) as u32, start.col() as u32 + 1, len as u32);
        let error_here = |message: String, help: &str| error(start.line(), start.col(), message, help);
        let complete: Option<(Node, usize)> = match event {
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return Err(error_here(
                        "a second YAML document".into(),
                        "a file holds one YAML document; remove the `---` and what follows, or move it to its own file",
                    ));
                }
                None
            }
            Event::Scalar(value, style, anchor, tag) => {
                let is_str_tag = tag.as_ref().is_some_and(|t| t.is_yaml_core_schema_tag("str"));
                let plain = style == ScalarStyle::Plain && !is_str_tag;
                let is_key = matches!(stack.last(), Some(Frame::Map(_, _, _, None, _)));
                if plain && is_key && value == "<<" {
                    return Err(Diagnostic::new(
                        Code::YamlSyntax,
                        here(2),
                        "YAML merge keys (`<<: *anchor`) are not supported",
                        )
                        .label("merge key")
                        .help("merge keys were a YAML 1.1 extension and YAML 1.2 has none; write the keys out in this mapping (an alias `*name` may still stand for a whole value)"));
                }
                let resolved = if plain {
                    resolve_plain(&value)
                } else {
                    Value::String(value.clone().into_owned())
                };
                if let Value::Float(f) = resolved
                    && !f.is_finite()
                {
                    // `.inf`, `.nan`, and numerals too large for a double (`1e999`).
                    return Err(Diagnostic::new(
                        Code::InvalidValue,
                        here(one_line_len),
                        format!(
                            "`{value}` is not a number JSON can carry: JSON numbers are finite, with no infinity or NaN"
                        ),
                    )
                    .label("not a finite number")
                    .help("write a finite number, or quote it (`\"…\"`) to make it a string"));
                }
                Some((
                    Node {
                        value: resolved,
                        span: here(one_line_len),
                    },
                    anchor,
                ))
            }
            Event::SequenceStart(_, anchor, _) | Event::MappingStart(_, anchor, _) if stack.len() >= MAX_DEPTH => {
                let _ = anchor;
                return Err(error_here(
                    format!("nested more than {MAX_DEPTH} levels deep"),
                    "flatten the file",
                ));
            }
            Event::SequenceStart(_, anchor, _) => {
                stack.push(Frame::Seq(Vec::new(), here(1), anchor));
                None
            }
            Event::MappingStart(_, anchor, _) => {
                stack.push(Frame::Map(Vec::new(), here(1), anchor, None, ScalarKeys::default()));
                None
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let ends_sequence = matches!(event, Event::SequenceEnd);
                let (value, span, anchor) = match stack.pop() {
                    Some(Frame::Seq(items, span, anchor)) if ends_sequence => (Value::Seq(items), span, anchor),
                    Some(Frame::Map(entries, span, anchor, _, _)) if !ends_sequence => {
                        (Value::Map(entries), span, anchor)
                    }
                    _ => {
                        let what = if ends_sequence { "sequence" } else { "mapping" };
                        return Err(error_here(format!("unbalanced {what}"), SYNTAX_HELP));
                    }
                };
                Some((Node { value, span }, anchor))
            }
            Event::Alias(id) => {
                let Some(target) = anchors.get(&id) else {
                    return Err(error_here(
                        "an alias to an unknown anchor".into(),
                        "define the anchor (`&name`) before using it (`*name`)",
                    ));
                };
                alias_nodes += count_nodes(target);
                if alias_nodes > MAX_ALIAS_NODES {
                    return Err(error_here(
                        format!("aliases expand to more than {MAX_ALIAS_NODES} nodes"),
                        "the file expands too many aliases; write the values out",
                    ));
                }
                let mut copy = target.clone();
                copy.span = here(one_line_len);
                Some((copy, 0))
            }
            _ => None,
        };
        let Some((node, anchor)) = complete else { continue };
        nodes += 1;
        if nodes > MAX_NODES {
            return Err(error_here(format!("more than {MAX_NODES} nodes"), "split the file"));
        }
        if anchor != 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq(items, ..)) => items.push(node),
            Some(Frame::Map(entries, _, _, pending, seen)) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => {
                    if let Some(first) = seen.first_of(&key, entries) {
                        return Err(Diagnostic::new(
                            Code::YamlSyntax,
                            key.span,
                            format!("invalid YAML: duplicate key `{}`", key.scalar_text()),
                        )
                        .label("repeated key")
                        .with_secondary(first.span, "first used here")
                        .help("each key may appear once in a mapping; remove or rename one of them"));
                    }
                    entries.push((key, node));
                }
            },
        }
    }
    Ok(root.unwrap_or(Node {
        value: Value::Null,
        span: Span::file_start(file),
    }))
}

/// The scalar keys of one mapping, for finding a repeated key in constant time: a Return
/// JSON body with 140,000 keys took minutes when each key was compared with every other.
#[derive(Default)]
struct ScalarKeys(std::collections::HashMap<ScalarKey, usize>);

/// A scalar key as the equality of [`Value`] sees it (`1` and `"1"` are different keys).
#[derive(PartialEq, Eq, Hash)]
enum ScalarKey {
    Null,
    Bool(bool),
    Int(i64),
    Float(u64),
    String(String),
}

impl ScalarKeys {
    /// The first entry with a key equal to `key`, if any; otherwise remembers `key` as the
    /// next entry's. Keys that are lists or mappings (rare) are compared one by one.
    fn first_of<'e>(&mut self, key: &Node, entries: &'e [(Node, Node)]) -> Option<&'e Node> {
        let scalar = match &key.value {
            Value::Null => ScalarKey::Null,
            Value::Bool(b) => ScalarKey::Bool(*b),
            Value::Int(i) => ScalarKey::Int(*i),
            Value::Float(f) => ScalarKey::Float(f.to_bits()),
            Value::String(s) => ScalarKey::String(s.clone()),
            Value::Seq(_) | Value::Map(_) => {
                return entries.iter().find(|(k, _)| k.value == key.value).map(|(k, _)| k);
            }
        };
        match self.0.entry(scalar) {
            std::collections::hash_map::Entry::Occupied(first) => Some(&entries[*first.get()].0),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(entries.len());
                None
            }
        }
    }
}

/// Plain scalars under the YAML 1.2 core schema.
fn resolve_plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Value::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Value::Float(f64::NAN),
        _ => {}
    }
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return match s.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::Float(s.parse().unwrap_or(f64::NAN)),
        };
    }
    if let Some(i) = s.strip_prefix("0x").and_then(|h| i64::from_str_radix(h, 16).ok()) {
        return Value::Int(i);
    }
    if let Some(i) = s.strip_prefix("0o").and_then(|o| i64::from_str_radix(o, 8).ok()) {
        return Value::Int(i);
    }
    let numeric = digits.bytes().next().is_some_and(|b| b.is_ascii_digit() || b == b'.')
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    if numeric && let Ok(f) = s.parse::<f64>() {
        return Value::Float(f);
    }
    Value::String(s.to_string())
}

fn count_nodes(node: &Node) -> usize {
    match &node.value {
        Value::Seq(items) => 1 + items.iter().map(count_nodes).sum::<usize>(),
        Value::Map(entries) => {
            1 + entries
                .iter()
                .map(|(k, v)| count_nodes(k) + count_nodes(v))
                .sum::<usize>()
        }
        _ => 1,
    }
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
            let help = svc_types::assets::nearest_or_all(name, known, format_args!("{} accepts", self.what));
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
    fn numbers_json_cannot_carry_are_refused_where_they_stand() {
        for (text, column) in [
            ("a: .inf\n", 4),
            ("a: [1, -.Inf]\n", 8),
            ("a:\n  b: .nan\n", 6),
            ("a: 1e999\n", 4),
        ] {
            let e = parse(FileId(0), text).unwrap_err();
            assert_eq!(e.code, Code::InvalidValue, "{text}");
            assert_eq!(e.primary.span.column, column, "{text}");
            assert!(e.message.contains("not a number JSON can carry"), "{}", e.message);
        }
        let huge = format!("a: {}\n", "9".repeat(400));
        assert!(parse(FileId(0), &huge).is_err(), "400 digits overflow a double");
        // Quoted, they are strings.
        assert_eq!(p("a: '.nan'\n").as_map().unwrap()[0].1.as_str(), Some(".nan"));
    }

    #[test]
    fn merge_keys_are_refused_at_the_merge_key() {
        let e = parse(FileId(0), "base: &b {x: 1}\nnode:\n  <<: *b\n  y: 2\n").unwrap_err();
        assert!(e.message.contains("merge keys"), "{}", e.message);
        assert_eq!((e.primary.span.line, e.primary.span.column), (3, 3));
        // A quoted `<<` is an ordinary key, and `<<` as a value is a string.
        assert!(parse(FileId(0), "'<<': 1\nx: <<\n").is_ok());
    }

    #[test]
    fn many_keys_are_checked_for_duplicates_in_linear_time() {
        let mut text = String::new();
        for i in 0..200_000 {
            text.push_str(&format!("k{i}: {i}\n"));
        }
        assert_eq!(p(&text).as_map().unwrap().len(), 200_000);
        text.push_str("k7: again\n");
        let e = parse(FileId(0), &text).unwrap_err();
        assert!(e.message.contains("duplicate key `k7`"), "{}", e.message);
        assert_eq!(e.secondary[0].span.line, 8);
        // `1` and `"1"` are different keys; 1 and 1 are not.
        assert!(parse(FileId(0), "1: a\n'1': b\n").is_ok());
        assert!(parse(FileId(0), "1: a\n1: b\n").is_err());
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
    fn scalars_follow_the_core_schema() {
        let n = p("a: 1\nb: -2.5\nc: 0x1F\nd: 1e3\ne: ~\nf: '1'\ng: !!str 2\nh: 1.2.3\ni: '.inf'\nj: 12abc\n");
        let v: Vec<&Value> = n.as_map().unwrap().iter().map(|(_, v)| &v.value).collect();
        assert_eq!(v[0], &Value::Int(1));
        assert_eq!(v[1], &Value::Float(-2.5));
        assert_eq!(v[2], &Value::Int(31));
        assert_eq!(v[3], &Value::Float(1000.0));
        assert_eq!(v[4], &Value::Null);
        assert_eq!(v[5], &Value::String("1".into()));
        assert_eq!(v[6], &Value::String("2".into()));
        assert_eq!(v[7], &Value::String("1.2.3".into()));
        assert_eq!(v[8], &Value::String(".inf".into()));
        assert_eq!(v[9], &Value::String("12abc".into()));
    }

    #[test]
    fn aliases_copy_with_the_alias_place() {
        let n = p("base: &b { type: return-json, status: 200 }\ncopy: *b\n");
        let m = n.as_map().unwrap();
        assert_eq!(m[1].1.as_map().unwrap().len(), 2);
        assert_eq!(m[1].1.span.line, 2);
        assert!(parse(FileId(0), "a: *nope\n").is_err());
    }

    #[test]
    fn one_document_per_file() {
        let e = parse(FileId(0), "a: 1\n---\nb: 2\n").unwrap_err();
        assert!(e.message.contains("second YAML document"), "{}", e.message);
        assert!(parse(FileId(0), "---\na: 1\n").is_ok());
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
