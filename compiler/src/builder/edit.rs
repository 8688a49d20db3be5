//! Edits of a flow file from the Builder: a batch of [`yaml_edit`] operations applied to
//! the file as the Builder last read it, or refused when the file has changed since.
//!
//! The Builder sends the version it read (the SHA-256 of the file's bytes, as
//! `GET /api/flows/<route>` gives it) with every batch. A batch whose base is not the
//! file on disk any more (a text editor saved it, `git checkout` replaced it, another
//! tab edited it) is a conflict: nothing is written, and the answer carries the file as
//! it is now, so the Builder can show both and the user re-apply the edit. A batch is
//! all or nothing: the first edit that cannot be made leaves the file untouched.
//!
//! [`yaml_edit`]: svc_frontend::yaml_edit

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;
pub use svc_frontend::yaml_edit::Step;
use svc_frontend::yaml_edit::{EditError, YamlDoc, segs};

/// One operation, as the Builder sends it (`{"op": "set", "path": ["nodes", "limit",
/// "limit"], "value": 50}`); list indexes in a path are numbers.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
pub enum Edit {
    Set {
        path: Vec<Step>,
        value: Value,
    },
    Insert {
        path: Vec<Step>,
        key: String,
        value: Value,
        #[serde(default)]
        after: Option<String>,
    },
    Push {
        path: Vec<Step>,
        value: Value,
    },
    Remove {
        path: Vec<Step>,
    },
    Rename {
        path: Vec<Step>,
        to: String,
    },
}


/// A file's version: the hex SHA-256 of its bytes.
pub fn version(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Why a batch was not written.
#[derive(Debug)]
pub enum Refused {
    /// The file is not the one the edits were made against: its text now.
    Conflict {
        current: String,
    },
    /// An edit cannot be made (which one, and why).
    Invalid(String),
    Io(String),
}

/// Applies `edits` to `file` if its version is still `base`, writing the result in one
/// rename; returns the text before and after (the Builder's undo puts the first back).
pub fn apply(file: &Path, base: &str, edits: &[Edit]) -> Result<(String, String), Refused> {
    apply_planned(file, base, |_| Ok(edits.iter().collect()))
}

/// Like [`apply`], with the edits worked out from the file's meaning by `plan` (a
/// node added, renamed or deleted: [`super::flow_ops`]).
pub fn apply_planned<E: std::borrow::Borrow<Edit>>(
    file: &Path,
    base: &str,
    plan: impl FnOnce(&Value) -> Result<Vec<E>, String>,
) -> Result<(String, String), Refused> {
    let current = read_at(file, base)?;
    let meaning = YamlDoc::parse(&current)
        .map_err(|e| Refused::Invalid(e.to_string()))?
        .to_json();
    let edits = plan(&meaning).map_err(Refused::Invalid)?;
    let text = edited(&current, &edits).map_err(Refused::Invalid)?;
    if text != current {
        write(file, &text)?;
    }
    Ok((current, text))
}

/// The text of `file`, if its version is still `base`.
fn read_at(file: &Path, base: &str) -> Result<String, Refused> {
    let shown = file.display().to_string();
    let current = match super::files::read_text(file, &shown) {
        Ok(Some(text)) => text,
        Ok(None) => return Err(Refused::Io(format!("cannot read `{shown}`: it is gone"))),
        Err(refused) => return Err(Refused::Io(refused.0)),
    };
    if version(current.as_bytes()) != base {
        return Err(Refused::Conflict { current });
    }
    Ok(current)
}

/// Writes `text` to `file` if its version is still `base` (undo and redo).
pub fn restore(file: &Path, base: &str, text: &str) -> Result<(), Refused> {
    read_at(file, base)?;
    write(file, text)
}

fn write(file: &Path, text: &str) -> Result<(), Refused> {
    super::files::replace(file, text.as_bytes())
        .map_err(|e| Refused::Io(format!("cannot write `{}`: {e}", file.display())))
}

/// `text` with `edits` made in order.
pub fn edited<E: std::borrow::Borrow<Edit>>(text: &str, edits: &[E]) -> Result<String, String> {
    let mut doc = YamlDoc::parse(text).map_err(|e| e.to_string())?;
    for (i, edit) in edits.iter().enumerate() {
        let made: Result<(), EditError> = match edit.borrow() {
            Edit::Set { path, value } => doc.set(&segs(path), value),
            Edit::Insert {
                path,
                key,
                value,
                after,
            } => doc.insert(&segs(path), key, value, after.as_deref()),
            Edit::Push { path, value } => doc.push(&segs(path), value),
            Edit::Remove { path } => doc.remove(&segs(path)),
            Edit::Rename { path, to } => doc.rename(&segs(path), to),
        };
        made.map_err(|e| format!("edit {} of {}: {e}", i + 1, edits.len()))?;
    }
    Ok(doc.into_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits(json: &str) -> Vec<Edit> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_batch_is_made_in_order_or_not_at_all() {
        let text = "nodes:\n  # Stops floods.\n  limit: { type: rate-limit, limit: 100 }\n";
        let out = edited(
            text,
            &edits(r#"[{"op":"set","path":["nodes","limit","limit"],"value":50},{"op":"rename","path":["nodes","limit"],"to":"throttle"}]"#),
        )
        .unwrap();
        assert_eq!(
            out,
            "nodes:\n  # Stops floods.\n  throttle: { type: rate-limit, limit: 50 }\n"
        );
        let refused = edited(
            text,
            &edits(
                r#"[{"op":"set","path":["nodes","limit","limit"],"value":50},{"op":"remove","path":["nodes","nope"]}]"#,
            ),
        )
        .unwrap_err();
        assert_eq!(refused, "edit 2 of 2: `nodes.nope` is not there");
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_not_overwritten() {
        let (before, after) = ("limit: 100\n", "limit: 50\n");
        let dir = std::env::temp_dir().join(format!("svc-edit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("flow.yaml");
        std::fs::write(&file, before).unwrap();
        let base = version(before.as_bytes());
        let set = edits(r#"[{"op":"set","path":["limit"],"value":50}]"#);
        assert_eq!(apply(&file, &base, &set).unwrap(), (before.to_string(), after.to_string()));
        // The same base again: the file is now another version.
        match apply(&file, &base, &set) {
            Err(Refused::Conflict { current }) => assert_eq!(current, after),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), after);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unknown_operations_are_refused_when_read() {
        assert!(serde_json::from_str::<Vec<Edit>>(r#"[{"op":"replace","path":[]}]"#).is_err());
        assert!(serde_json::from_str::<Vec<Edit>>(r#"[{"op":"set","path":["a"],"value":1,"extra":2}]"#).is_err());
    }
}
