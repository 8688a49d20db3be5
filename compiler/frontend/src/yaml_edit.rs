//! Format-preserving edits of YAML files: what the Builder's saves are made of.
//!
//! A flow file is reviewed in git, so an edit made in the Builder must read as the edit
//! a careful person would make by hand: changing one value changes one line, adding an
//! entry adds its lines, and every comment, blank line, quoting style and key order
//! outside the edit stays byte for byte. So edits never re-serialize the document; each
//! one replaces, inserts or removes a byte range of the text, found on a tree of byte
//! ranges ([`YamlDoc`]) read with the same parser as `svc_syntax::yaml`.
//!
//! Every edit is checked before it is kept: the new text is parsed again with the loader's
//! own parser and must mean exactly the old document with the edit applied (compared as
//! JSON). An edit this layer cannot make faithfully (an anchor, a block scalar key, …) is
//! refused with a reason rather than written wrong.
//!
//! The operations: [`YamlDoc::set`] (replace a value, or add a missing key),
//! [`YamlDoc::insert`] (add a key at a chosen place), [`YamlDoc::remove`] (a key or a
//! list item, with the comment lines directly above it), [`YamlDoc::rename`] (a key), and
//! [`YamlDoc::push`] (append to a list).

use serde_json::Value as Json;
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};
use std::ops::Range;

/// One step of a path into a document: a mapping key or a list index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// A [`Seg`] that owns its key: a path kept beyond the text it was read from (the
/// Builder's edits, JSON `["nodes", "limit", 0]`: list indexes are numbers).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(untagged)]
pub enum Step {
    Key(String),
    Index(usize),
}

impl Step {
    pub fn seg(&self) -> Seg<'_> {
        match self {
            Step::Key(k) => Seg::Key(k),
            Step::Index(i) => Seg::Index(*i),
        }
    }
}

/// The [`Seg`]s of an owned path.
pub fn segs(path: &[Step]) -> Vec<Seg<'_>> {
    path.iter().map(Step::seg).collect()
}

/// Why an edit was not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError(pub String);

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EditError {}

fn err<T>(message: impl Into<String>) -> Result<T, EditError> {
    Err(EditError(message.into()))
}

/// A node of the document and the bytes it covers. A block collection covers its first
/// child's start to its last descendant's end; a flow collection its brackets.
#[derive(Debug, Clone)]
struct Item {
    kind: Kind,
    range: Range<usize>,
}

#[derive(Debug, Clone)]
enum Kind {
    Scalar { style: ScalarStyle },
    Map { flow: bool, entries: Vec<(Item, Item)> },
    Seq { flow: bool, items: Vec<Item> },
}

/// A YAML document held as its text, with the byte range of every node.
#[derive(Debug, Clone)]
pub struct YamlDoc {
    text: String,
    root: Item,
    /// What the loader reads the text as.
    json: Json,
}

impl YamlDoc {
    /// Reads `text`; fails on invalid YAML, aliases and anchors (an edit under an alias
    /// would change every place that uses it) and on more than one document.
    pub fn parse(text: &str) -> Result<YamlDoc, EditError> {
        enum Frame {
            Map(bool, usize, Vec<(Item, Item)>, Option<Item>),
            Seq(bool, usize, Vec<Item>),
        }
        let mut stack: Vec<Frame> = Vec::new();
        let mut root: Option<Item> = None;
        for event in Parser::new_from_str(text) {
            let (event, span) = event.map_err(|e| EditError(format!("the file is not valid YAML: {}", e.info())))?;
            let range = span
                .byte_range()
                .ok_or_else(|| EditError("the YAML parser gave no byte offsets".into()))?;
            let done: Option<Item> = match event {
                Event::Alias(_) => return err("the file uses YAML aliases (`*name`); edit it in a text editor"),
                Event::Scalar(_, style, anchor, _) => {
                    if anchor != 0 {
                        return err("the file uses YAML anchors (`&name`); edit it in a text editor");
                    }
                    Some(Item {
                        kind: Kind::Scalar { style },
                        range,
                    })
                }
                Event::MappingStart(style, anchor, _) | Event::SequenceStart(style, anchor, _) if anchor != 0 => {
                    let _ = style;
                    return err("the file uses YAML anchors (`&name`); edit it in a text editor");
                }
                Event::MappingStart(style, ..) => {
                    let flow = matches!(style, serde_saphyr::granit_parser::StructureStyle::Flow);
                    stack.push(Frame::Map(flow, range.start, Vec::new(), None));
                    None
                }
                Event::SequenceStart(style, ..) => {
                    let flow = matches!(style, serde_saphyr::granit_parser::StructureStyle::Flow);
                    stack.push(Frame::Seq(flow, range.start, Vec::new()));
                    None
                }
                Event::MappingEnd => match stack.pop() {
                    Some(Frame::Map(flow, start, entries, _)) => {
                        let end = if flow {
                            range.end
                        } else {
                            entries.last().map_or(start, |(_, v)| v.range.end)
                        };
                        Some(Item {
                            kind: Kind::Map { flow, entries },
                            range: start..end,
                        })
                    }
                    _ => return err("unbalanced mapping"),
                },
                Event::SequenceEnd => match stack.pop() {
                    Some(Frame::Seq(flow, start, items)) => {
                        let end = if flow {
                            range.end
                        } else {
                            items.last().map_or(start, |i| i.range.end)
                        };
                        Some(Item {
                            kind: Kind::Seq { flow, items },
                            range: start..end,
                        })
                    }
                    _ => return err("unbalanced list"),
                },
                Event::DocumentStart(..) if root.is_some() => {
                    return err("the file holds more than one YAML document");
                }
                _ => None,
            };
            let Some(item) = done else { continue };
            match stack.last_mut() {
                Some(Frame::Map(_, _, entries, pending)) => match pending.take() {
                    None => {
                        if !matches!(item.kind, Kind::Scalar { .. }) {
                            return err("the file has a mapping key that is not a plain value");
                        }
                        *pending = Some(item);
                    }
                    Some(key) => entries.push((key, item)),
                },
                Some(Frame::Seq(_, _, items)) => items.push(item),
                None => root = Some(item),
            }
        }
        let root = root.ok_or_else(|| EditError("the file is empty".into()))?;
        // What svc would refuse to load (a merge key, a duplicate key, …) is not edited.
        let json = meaning(text).map_err(|e| EditError(format!("the file does not load: {e}")))?;
        Ok(YamlDoc {
            text: text.to_string(),
            root,
            json,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn into_text(self) -> String {
        self.text
    }

    /// The document's meaning, as the loader reads it.
    pub fn to_json(&self) -> Json {
        self.json.clone()
    }

    /// Sets the value at `path` to `value`: the value's bytes are replaced (a scalar
    /// keeps its quoting where it can), or, when the last key is missing from its
    /// mapping, the key is added at the mapping's end.
    pub fn set(&mut self, path: &[Seg], value: &Json) -> Result<(), EditError> {
        let (parent_path, last) = split(path)?;
        // Mappings on the way that are missing are made, as `mkdir -p` makes directories:
        // `nodes.price.inputs.max_lines` on a node without `inputs` adds `inputs:`.
        if self.find(parent_path).is_err() {
            let existing = (0..parent_path.len())
                .rev()
                .find(|&n| self.find(&parent_path[..n]).is_ok())
                .unwrap_or(0);
            let Seg::Key(first) = parent_path[existing] else {
                return err(format!("`{}` is not there", show(&parent_path[..=existing])));
            };
            let mut nested = value.clone();
            for seg in path[existing + 1..].iter().rev() {
                let Seg::Key(k) = seg else {
                    return err(format!("`{}` is not there", show(path)));
                };
                nested = Json::Object([(k.to_string(), nested)].into_iter().collect());
            }
            return self.insert(&parent_path[..existing], first, &nested, None);
        }
        let parent = self.find(parent_path)?;
        let target = match (&parent.kind, last) {
            (Kind::Map { entries, .. }, Seg::Key(k)) => match entries.iter().find(|(key, _)| self.key(key) == k) {
                Some((key, v)) => Some((key.clone(), v.clone())),
                None => return self.insert(parent_path, k, value, None),
            },
            (Kind::Seq { items, .. }, Seg::Index(i)) => match items.get(i) {
                Some(item) => Some((item.clone(), item.clone())),
                None => return err(format!("the list has no item {i}")),
            },
            _ => return err(format!("`{}` is not there", show(path))),
        };
        let Some((key, old)) = target else {
            return err(format!("`{}` is not there", show(path)));
        };
        let mut expected = self.to_json();
        *json_at(&mut expected, path).ok_or_else(|| EditError(format!("`{}` is not there", show(path))))? =
            value.clone();
        let new_text = match (&old.kind, value) {
            (Kind::Scalar { style }, v) if is_scalar(v) => {
                let replaced = old_scalar_range(&self.text, &old, *style);
                let in_flow = self.inside_flow(parent_path)?;
                splice(&self.text, replaced, &scalar(v, Some(*style), in_flow))
            }
            _ => {
                let inline = flow(value);
                let in_flow = self.inside_flow(parent_path)?;
                let is_key_of_block_map = matches!(parent.kind, Kind::Map { flow: false, .. });
                if in_flow || inline.len() + column(&self.text, key.range.start) + 10 <= 100 || !is_key_of_block_map {
                    let replaced = value_region(&self.text, &old);
                    splice(&self.text, replaced, &inline)
                } else {
                    // `key:` then the value in block style on the lines below.
                    let colon = colon_after(&self.text, key.range.end)?;
                    let indent = column(&self.text, key.range.start) + 2;
                    let block = block(value, indent);
                    let end = value_region(&self.text, &old).end;
                    splice(
                        &self.text,
                        colon + 1..end,
                        &format!("\n{}", block.trim_end_matches('\n')),
                    )
                }
            }
        };
        self.commit(new_text, &expected)
    }

    /// Adds `key: value` to the mapping at `map_path`, after the entry `after` (else at
    /// the end). A block mapping gets new lines at its keys' indentation, the value in
    /// block style where it is a mapping of more than one short line; a flow mapping gets
    /// `, key: value`.
    pub fn insert(&mut self, map_path: &[Seg], key: &str, value: &Json, after: Option<&str>) -> Result<(), EditError> {
        let map = self.find(map_path)?;
        let Kind::Map { flow: is_flow, entries } = &map.kind else {
            return err(format!("`{}` is not a mapping", show(map_path)));
        };
        if entries.iter().any(|(k, _)| self.key(k) == key) {
            return err(format!("`{key}` is already in `{}`", show(map_path)));
        }
        let anchor = match after {
            Some(a) => Some(
                entries
                    .iter()
                    .position(|(k, _)| self.key(k) == a)
                    .ok_or_else(|| EditError(format!("`{}` has no `{a}`", show(map_path))))?,
            ),
            None => entries.len().checked_sub(1),
        };
        let mut expected = self.to_json();
        match json_at(&mut expected, map_path) {
            Some(Json::Object(m)) => {
                m.insert(key.to_string(), value.clone());
            }
            _ => return err(format!("`{}` is not a mapping", show(map_path))),
        }
        let rendered_key = scalar(&Json::String(key.to_string()), None, true);
        let new_text = if *is_flow || entries.is_empty() {
            let in_flow = *is_flow;
            let entry = format!("{rendered_key}: {}", flow(value));
            match anchor {
                Some(i) if in_flow => {
                    let end = entries[i].1.range.end;
                    splice(&self.text, end..end, &format!(", {entry}"))
                }
                // An empty mapping: `{}` (or an empty value) becomes `{ key: value }`.
                _ => splice(&self.text, map.range.clone(), &format!("{{ {entry} }}")),
            }
        } else {
            let i = anchor.expect("a block mapping has entries");
            let indent = column(&self.text, entries[0].0.range.start);
            let entry_end = entries[i].1.range.end.max(entries[i].0.range.end);
            insert_lines_after(&self.text, entry_end, &block_entry(&rendered_key, value, indent))
        };
        self.commit(new_text, &expected)
    }

    /// Appends `value` to the list at `list_path`.
    pub fn push(&mut self, list_path: &[Seg], value: &Json) -> Result<(), EditError> {
        let list = self.find(list_path)?;
        let Kind::Seq { flow: is_flow, items } = &list.kind else {
            return err(format!("`{}` is not a list", show(list_path)));
        };
        let mut expected = self.to_json();
        match json_at(&mut expected, list_path) {
            Some(Json::Array(a)) => a.push(value.clone()),
            _ => return err(format!("`{}` is not a list", show(list_path))),
        }
        let new_text = match items.last() {
            None => splice(&self.text, list.range.clone(), &format!("[{}]", flow(value))),
            Some(last) if *is_flow => splice(
                &self.text,
                last.range.end..last.range.end,
                &format!(", {}", flow(value)),
            ),
            Some(last) => {
                let first = &items[0];
                let dash = self.text[..first.range.start]
                    .rfind('-')
                    .ok_or_else(|| EditError("a block list item without `-`".into()))?;
                let indent = column(&self.text, dash);
                let line = format!("{}- {}\n", " ".repeat(indent), flow(value));
                insert_lines_after(&self.text, last.range.end, &line)
            }
        };
        self.commit(new_text, &expected)
    }

    /// Removes the entry or list item at `path`, with the comment lines directly above a
    /// block entry (they describe it). Removing the last entry of a block collection
    /// leaves `{}` or `[]`.
    pub fn remove(&mut self, path: &[Seg]) -> Result<(), EditError> {
        let (parent_path, last) = split(path)?;
        let parent = self.find(parent_path)?;
        let mut expected = self.to_json();
        match (json_at(&mut expected, parent_path), last) {
            (Some(Json::Object(m)), Seg::Key(k)) if m.contains_key(k) => {
                m.remove(k);
            }
            (Some(Json::Array(a)), Seg::Index(i)) if i < a.len() => {
                a.remove(i);
            }
            _ => return err(format!("`{}` is not there", show(path))),
        }
        // The bytes of each member (an entry: key to value end), and which one goes.
        let (members, flow, index): (Vec<Range<usize>>, bool, usize) = match (&parent.kind, last) {
            (Kind::Map { flow, entries }, Seg::Key(k)) => {
                let Some(index) = entries.iter().position(|(key, _)| self.key(key) == k) else {
                    return err(format!("`{}` is not there", show(path)));
                };
                let members = entries
                    .iter()
                    .map(|(k, v)| k.range.start..v.range.end.max(k.range.end))
                    .collect();
                (members, *flow, index)
            }
            (Kind::Seq { flow, items }, Seg::Index(i)) => (items.iter().map(|i| i.range.clone()).collect(), *flow, i),
            _ => unreachable!("checked against the JSON"),
        };
        let new_text = if members.len() == 1 && !flow {
            // The collection becomes empty: write it as `{}` or `[]` after its key.
            let empty = if matches!(parent.kind, Kind::Map { .. }) {
                "{}"
            } else {
                "[]"
            };
            let region = match parent_path.split_last() {
                Some(_) => {
                    let grand = self.find(&parent_path[..parent_path.len() - 1])?;
                    let key_end = match (&grand.kind, parent_path.last()) {
                        (Kind::Map { entries, .. }, Some(Seg::Key(k))) => entries
                            .iter()
                            .find(|(key, _)| self.key(key) == *k)
                            .map(|(key, _)| key.range.end),
                        _ => None,
                    };
                    match key_end {
                        Some(end) => colon_after(&self.text, end)? + 1..line_end(&self.text, members[0].end),
                        None => return err("remove the list item from a text editor: it is its list's only one"),
                    }
                }
                None => 0..line_end(&self.text, members[0].end),
            };
            splice(&self.text, region, &format!(" {empty}"))
        } else if flow {
            let m = &members[index];
            let region = if index + 1 < members.len() {
                m.start..members[index + 1].start
            } else if index > 0 {
                members[index - 1].end..m.end
            } else {
                m.clone()
            };
            splice(&self.text, region, "")
        } else {
            let m = &members[index];
            // From the first comment line directly above (same indentation) to the end
            // of the member's last line.
            let start = comments_above(&self.text, line_start(&self.text, m.start));
            let end = (line_end(&self.text, m.end) + 1).min(self.text.len());
            splice(&self.text, start..end, "")
        };
        self.commit(new_text, &expected)
    }

    /// Renames the key at `path` to `new_key`, in place.
    pub fn rename(&mut self, path: &[Seg], new_key: &str) -> Result<(), EditError> {
        let (parent_path, last) = split(path)?;
        let Seg::Key(old) = last else {
            return err("only a mapping key can be renamed");
        };
        let parent = self.find(parent_path)?;
        let Kind::Map { entries, .. } = &parent.kind else {
            return err(format!("`{}` is not a mapping", show(parent_path)));
        };
        if entries.iter().any(|(k, _)| self.key(k) == new_key) {
            return err(format!("`{new_key}` is already in `{}`", show(parent_path)));
        }
        let Some((key, _)) = entries.iter().find(|(k, _)| self.key(k) == old) else {
            return err(format!("`{}` is not there", show(path)));
        };
        let mut expected = self.to_json();
        if let Some(Json::Object(m)) = json_at(&mut expected, parent_path) {
            // Keys compare as a set: the position is the text's, kept below.
            if let Some(v) = m.remove(old) {
                m.insert(new_key.to_string(), v);
            }
        }
        let Kind::Scalar { style } = key.kind else {
            unreachable!("keys are scalars")
        };
        let new_text = splice(
            &self.text,
            key.range.clone(),
            &scalar(&Json::String(new_key.to_string()), Some(style), true),
        );
        self.commit(new_text, &expected)
    }

    /// Keeps `new_text` if it means `expected`.
    fn commit(&mut self, new_text: String, expected: &Json) -> Result<(), EditError> {
        let meant = meaning(&new_text).map_err(|e| EditError(format!("the edit would not be valid YAML: {e}")))?;
        if &meant != expected {
            return err("the edit cannot be written faithfully in this file's layout; make it in a text editor");
        }
        *self = YamlDoc::parse(&new_text)?;
        Ok(())
    }

    fn key(&self, key: &Item) -> String {
        scalar_value(&self.text, key)
    }

    fn find(&self, path: &[Seg]) -> Result<&Item, EditError> {
        let mut item = &self.root;
        for (depth, seg) in path.iter().enumerate() {
            item = match (&item.kind, seg) {
                (Kind::Map { entries, .. }, Seg::Key(k)) => {
                    entries.iter().find(|(key, _)| self.key(key) == *k).map(|(_, v)| v)
                }
                (Kind::Seq { items, .. }, Seg::Index(i)) => items.get(*i),
                _ => None,
            }
            .ok_or_else(|| EditError(format!("`{}` is not there", show(&path[..=depth]))))?;
        }
        Ok(item)
    }

    /// Whether the node at `path` sits inside a flow collection (so edits stay on one line).
    fn inside_flow(&self, path: &[Seg]) -> Result<bool, EditError> {
        for depth in 0..=path.len() {
            if let Kind::Map { flow: true, .. } | Kind::Seq { flow: true, .. } = self.find(&path[..depth])?.kind {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// What the loader reads `text` as, as JSON.
fn meaning(text: &str) -> Result<Json, String> {
    svc_syntax::yaml::parse(svc_syntax::FileId(0), text)
        .map(|n| n.to_json())
        .map_err(|d| d.message)
}

fn split<'p, 'a>(path: &'p [Seg<'a>]) -> Result<(&'p [Seg<'a>], Seg<'a>), EditError> {
    match path.split_last() {
        Some((last, parent)) => Ok((parent, *last)),
        None => err("an edit needs a path into the document"),
    }
}

fn show(path: &[Seg]) -> String {
    let parts: Vec<String> = path
        .iter()
        .map(|s| match s {
            Seg::Key(k) => k.to_string(),
            Seg::Index(i) => i.to_string(),
        })
        .collect();
    if parts.is_empty() {
        "the document".into()
    } else {
        parts.join(".")
    }
}

fn json_at<'j>(json: &'j mut Json, path: &[Seg]) -> Option<&'j mut Json> {
    let mut at = json;
    for seg in path {
        at = match (at, seg) {
            (Json::Object(m), Seg::Key(k)) => m.get_mut(*k)?,
            (Json::Array(a), Seg::Index(i)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(at)
}

fn splice(text: &str, range: Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..range.start]);
    out.push_str(with);
    out.push_str(&text[range.end..]);
    out
}

/// `text` with `lines` (each ending in a newline) inserted after the line that holds
/// `at`; at the end of a file without a final newline, the file keeps having none.
fn insert_lines_after(text: &str, at: usize, lines: &str) -> String {
    let end = line_end(text, at);
    if end == text.len() && !text.ends_with('\n') {
        splice(text, end..end, &format!("\n{}", lines.trim_end_matches('\n')))
    } else {
        let after = (end + 1).min(text.len());
        splice(text, after..after, lines)
    }
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The offset of the newline ending the line of `at` (or the text's end).
fn line_end(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    // A block scalar's range ends after its newline: that line is done.
    if at > 0 && text.as_bytes()[at - 1] == b'\n' {
        return at - 1;
    }
    text[at..].find('\n').map_or(text.len(), |i| at + i)
}

/// The column (in bytes) of `at` on its line.
fn column(text: &str, at: usize) -> usize {
    at - line_start(text, at)
}

/// The start of the run of comment lines directly above `line` at its indentation.
fn comments_above(text: &str, line: usize) -> usize {
    let indent = text[line..].len() - text[line..].trim_start_matches(' ').len();
    let mut start = line;
    while start > 0 {
        let prev = line_start(text, start - 1);
        let l = &text[prev..start - 1];
        let l_indent = l.len() - l.trim_start_matches(' ').len();
        if l.trim_start().starts_with('#') && l_indent == indent {
            start = prev;
        } else {
            break;
        }
    }
    start
}

/// The offset of the `:` after a key ending at `key_end`.
fn colon_after(text: &str, key_end: usize) -> Result<usize, EditError> {
    let rest = &text[key_end..];
    let skipped = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    if rest[skipped..].starts_with(':') {
        Ok(key_end + skipped)
    } else {
        err("a key written in a form this editor does not follow")
    }
}

/// The bytes a value occupies: for a block scalar, from its `|` or `>` indicator.
fn value_region(text: &str, item: &Item) -> Range<usize> {
    match item.kind {
        Kind::Scalar { style } => old_scalar_range(text, item, style),
        _ => item.range.clone(),
    }
}

fn old_scalar_range(text: &str, item: &Item, style: ScalarStyle) -> Range<usize> {
    match style {
        ScalarStyle::Literal | ScalarStyle::Folded => {
            let indicator = text[..item.range.start].rfind(['|', '>']).unwrap_or(item.range.start);
            // The replacement is one line: the block's last newline stays.
            let end = if text[..item.range.end].ends_with('\n') {
                item.range.end - 1
            } else {
                item.range.end
            };
            indicator..end
        }
        _ => item.range.clone(),
    }
}

fn scalar_value(text: &str, item: &Item) -> String {
    let raw = &text[item.range.clone()];
    match item.kind {
        Kind::Scalar {
            style: ScalarStyle::Plain,
        } => raw.to_string(),
        _ => match meaning(&format!("k: {raw}")) {
            Ok(Json::Object(m)) => m.get("k").and_then(Json::as_str).unwrap_or(raw).to_string(),
            _ => raw.to_string(),
        },
    }
}

fn is_scalar(v: &Json) -> bool {
    !matches!(v, Json::Array(_) | Json::Object(_))
}

/// A scalar as YAML: strings in the quotes they had (single quotes where possible),
/// else plain where that reads back as the same string (in a flow collection, where
/// `,` and brackets end a value, when `in_flow`), else double quotes.
fn scalar(v: &Json, old_style: Option<ScalarStyle>, in_flow: bool) -> String {
    match v {
        Json::String(s) => {
            let plain_ok = plain_reads_back(s, in_flow);
            match old_style {
                Some(ScalarStyle::SingleQuoted) if !s.contains('\n') => format!("'{}'", s.replace('\'', "''")),
                Some(ScalarStyle::DoubleQuoted) => double_quoted(s),
                _ if plain_ok => s.clone(),
                _ => double_quoted(s),
            }
        }
        other => other.to_string(),
    }
}

fn double_quoted(s: &str) -> String {
    // JSON's string syntax is a subset of YAML's double-quoted one.
    Json::String(s.to_string()).to_string()
}

/// Whether `s` written plain reads back as the string `s`.
fn plain_reads_back(s: &str, in_flow: bool) -> bool {
    // A quote or `#` inside a plain scalar is text (`the agent's queue`, `a#b`): only at
    // the start, or `#` after a space, does YAML read them otherwise.
    if s.is_empty()
        || s != s.trim()
        || s.contains(['\n', '\t'])
        || s.contains(" #")
        || s.starts_with(['#', '"', '\''])
        || (in_flow && s.contains(['{', '}', '[', ']', ',']))
        || s.starts_with(['{', '['])
        || s.contains(": ")
        || s.ends_with(':')
        || s.starts_with(['-', '?', ':', '!', '&', '*', '|', '>', '%', '@', '`'])
    {
        return false;
    }
    matches!(meaning(&format!("k: {s}")), Ok(Json::Object(m)) if m.get("k") == Some(&Json::String(s.to_string())))
}

/// A value on one line: scalars as [`scalar`], collections in flow style
/// (`{ from: request.body }`, `[GET, POST]`).
fn flow(v: &Json) -> String {
    match v {
        Json::Array(items) => format!("[{}]", items.iter().map(flow).collect::<Vec<_>>().join(", ")),
        Json::Object(m) if m.is_empty() => "{}".into(),
        Json::Object(m) => format!(
            "{{ {} }}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", scalar(&Json::String(k.clone()), None, true), flow(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => scalar(other, None, true),
    }
}

/// `key: value` lines at `indent`: a mapping whose flow form would make a long line, or
/// that holds mappings of its own, in block style below its key.
fn block_entry(key: &str, v: &Json, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let inline = flow(v);
    // A mapping of mappings (a node's `inputs`) is written a line per entry; a mapping of
    // scalars (`{ from: request.body }`) on one line.
    let nested = matches!(v, Json::Object(m) if m.values().any(|x| matches!(x, Json::Object(o) if !o.is_empty())) || m.len() > 3);
    if matches!(v, Json::Object(m) if !m.is_empty()) && (nested || indent + key.len() + inline.len() > 90) {
        format!("{pad}{key}:\n{}", block(v, indent + 2))
    } else if is_scalar(v) {
        format!("{pad}{key}: {}\n", scalar(v, None, false))
    } else {
        format!("{pad}{key}: {inline}\n")
    }
}

/// A mapping's entries as block lines at `indent` (other values as one flow line).
fn block(v: &Json, indent: usize) -> String {
    match v {
        Json::Object(m) if !m.is_empty() => m
            .iter()
            .map(|(k, x)| block_entry(&scalar(&Json::String(k.clone()), None, false), x, indent))
            .collect(),
        other => format!("{}{}\n", " ".repeat(indent), flow(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FLOW: &str = "# POST /orders\nroute: orders\nmethods: [POST]\nstart: limit\nnodes:\n  # Stops floods.\n  limit:\n    type: rate-limit\n    limit: 100 # a minute\n    window: 1m\n\n  ok: { type: return-json, status: 200 }\n  origins:\n    - 'https://a.example'\n    - \"https://b.example\"\n";

    fn doc() -> YamlDoc {
        YamlDoc::parse(FLOW).unwrap()
    }

    #[test]
    fn a_quote_or_hash_inside_text_stays_plain() {
        let plain = |s: &str| scalar(&json!(s), None, false);
        assert_eq!(plain("The agent's queue"), "The agent's queue");
        assert_eq!(plain("size#2"), "size#2");
        assert_eq!(plain("say \"hi\" twice"), "say \"hi\" twice");
        // Where YAML reads them otherwise: quoted.
        assert_eq!(plain("a #comment"), "\"a #comment\"");
        assert_eq!(plain("#tag"), "\"#tag\"");
        assert_eq!(plain("'quoted'"), "\"'quoted'\"");
        assert_eq!(plain("\"x\""), "\"\\\"x\\\"\"");
    }

    fn changed_lines(a: &str, b: &str) -> Vec<String> {
        let old: Vec<&str> = a.lines().collect();
        b.lines().filter(|l| !old.contains(l)).map(str::to_string).collect()
    }

    #[test]
    fn setting_a_value_changes_one_line_and_keeps_its_comment() {
        let mut d = doc();
        d.set(&[Seg::Key("nodes"), Seg::Key("limit"), Seg::Key("limit")], &json!(50))
            .unwrap();
        assert_eq!(d.text(), FLOW.replace("limit: 100 # a minute", "limit: 50 # a minute"));
        d.set(&[Seg::Key("nodes"), Seg::Key("ok"), Seg::Key("status")], &json!(201))
            .unwrap();
        assert!(d.text().contains("ok: { type: return-json, status: 201 }"));
    }

    #[test]
    fn a_string_keeps_its_quotes_and_is_quoted_when_plain_would_change_it() {
        let mut d = doc();
        d.set(
            &[Seg::Key("nodes"), Seg::Key("origins"), Seg::Index(0)],
            &json!("https://c.example"),
        )
        .unwrap();
        assert!(d.text().contains("    - 'https://c.example'\n"));
        d.set(&[Seg::Key("start")], &json!("true")).unwrap();
        assert!(d.text().contains("start: \"true\"\n"));
        d.set(&[Seg::Key("start")], &json!("a: b")).unwrap();
        assert!(d.text().contains("start: \"a: b\"\n"));
        // Once quoted, a value keeps its quotes; a plain one stays plain where it can.
        d.set(&[Seg::Key("start")], &json!("ok")).unwrap();
        assert!(d.text().contains("start: \"ok\"\n"), "{}", d.text());
        d.set(&[Seg::Key("route")], &json!("orders/{id}")).unwrap();
        // Braces inside a plain value are text in block context, not in a flow one.
        assert!(d.text().contains("route: orders/{id}\n"), "{}", d.text());
        d.set(&[Seg::Key("nodes"), Seg::Key("ok"), Seg::Key("type")], &json!("a, b"))
            .unwrap();
        assert!(d.text().contains("ok: { type: \"a, b\", status: 200 }"), "{}", d.text());
        d.set(&[Seg::Key("route")], &json!("orders")).unwrap();
    }

    #[test]
    fn adding_a_node_adds_its_block_after_the_one_named() {
        let mut d = doc();
        let node = json!({ "type": "code", "node": "shop.price", "inputs": { "order": { "from": "request.body" } }, "next": "ok" });
        d.insert(&[Seg::Key("nodes")], "price", &node, Some("limit")).unwrap();
        let added = changed_lines(FLOW, d.text());
        assert_eq!(
            added,
            [
                "  price:",
                "    type: code",
                "    node: shop.price",
                "    inputs:",
                "      order: { from: request.body }",
                "    next: ok"
            ]
        );
        assert!(d.text().contains("    window: 1m\n  price:\n"));
        // Every old line is still there, in order.
        let kept: Vec<&str> = d.text().lines().filter(|l| FLOW.lines().any(|o| o == *l)).collect();
        assert_eq!(kept, FLOW.lines().collect::<Vec<_>>());
    }

    #[test]
    fn flow_mappings_and_lists_grow_in_place() {
        let mut d = doc();
        d.insert(&[Seg::Key("nodes"), Seg::Key("ok")], "body", &json!({ "id": 1 }), None)
            .unwrap();
        assert!(
            d.text()
                .contains("ok: { type: return-json, status: 200, body: { id: 1 } }")
        );
        d.push(&[Seg::Key("methods")], &json!("PUT")).unwrap();
        assert!(d.text().contains("methods: [POST, PUT]\n"));
        d.push(&[Seg::Key("nodes"), Seg::Key("origins")], &json!("https://d.example"))
            .unwrap();
        assert!(
            d.text()
                .contains("    - \"https://b.example\"\n    - https://d.example\n")
        );
    }

    #[test]
    fn removing_takes_the_comment_above_and_nothing_else() {
        let mut d = doc();
        d.remove(&[Seg::Key("nodes"), Seg::Key("limit")]).unwrap();
        assert_eq!(
            d.text(),
            "# POST /orders\nroute: orders\nmethods: [POST]\nstart: limit\nnodes:\n\n  ok: { type: return-json, status: 200 }\n  origins:\n    - 'https://a.example'\n    - \"https://b.example\"\n"
        );
        d.remove(&[Seg::Key("nodes"), Seg::Key("ok"), Seg::Key("type")])
            .unwrap();
        assert!(d.text().contains("  ok: { status: 200 }\n"));
        d.remove(&[Seg::Key("nodes"), Seg::Key("origins"), Seg::Index(1)])
            .unwrap();
        d.remove(&[Seg::Key("nodes"), Seg::Key("origins"), Seg::Index(0)])
            .unwrap();
        assert!(d.text().ends_with("  origins: []\n"), "{}", d.text());
    }

    #[test]
    fn renaming_a_key_keeps_its_place() {
        let mut d = doc();
        d.rename(&[Seg::Key("nodes"), Seg::Key("limit")], "throttle").unwrap();
        assert_eq!(d.text(), FLOW.replace("  limit:\n", "  throttle:\n"));
        assert!(d.rename(&[Seg::Key("nodes"), Seg::Key("ok")], "throttle").is_err());
    }

    #[test]
    fn what_cannot_be_edited_faithfully_is_refused() {
        assert!(YamlDoc::parse("a: &x 1\nb: *x\n").is_err());
        let mut d = YamlDoc::parse("a: |\n  two\n  lines\nb: 1\n").unwrap();
        d.set(&[Seg::Key("a")], &json!("one")).unwrap();
        assert_eq!(d.text(), "a: one\nb: 1\n");
        assert!(
            d.set(&[Seg::Key("b"), Seg::Key("y")], &json!(1)).is_err(),
            "into a number"
        );
        // Missing mappings on the way are made.
        d.set(&[Seg::Key("c"), Seg::Key("d"), Seg::Key("e")], &json!(3))
            .unwrap();
        assert!(d.text().ends_with("b: 1\nc:\n  d: { e: 3 }\n"), "{}", d.text());
        d.remove(&[Seg::Key("c")]).unwrap();
        // Paths that are not there are errors, never panics.
        for path in [
            &[Seg::Key("zz")][..],
            &[Seg::Index(3)],
            &[Seg::Key("a"), Seg::Key("x")],
            &[],
        ] {
            assert!(d.remove(path).is_err(), "remove {path:?}");
            assert!(d.rename(path, "q").is_err(), "rename {path:?}");
            assert!(
                d.insert(path, "q", &json!(1), None).is_err() || path.is_empty(),
                "insert {path:?}"
            );
            assert!(d.push(path, &json!(1)).is_err(), "push {path:?}");
        }
        assert!(d.insert(&[], "b", &json!(2), None).is_err(), "a key that is there");
        assert!(d.insert(&[], "c", &json!(2), Some("nope")).is_err());
    }
}
