//! Random edits on every example's flow files: each one is either refused with a reason
//! or leaves a file that means exactly the edited document (checked inside every edit)
//! and differs from the old text only where the edit is: setting a scalar changes one
//! line, adding an entry only adds lines, removing one only removes lines, and setting a
//! value back, or removing what was added, gives the original bytes.

use serde_json::{Value as Json, json};
use std::path::PathBuf;
use svc_frontend::yaml_edit::{Seg, Step, YamlDoc, segs};

/// xorshift64*: the same sequence on every machine, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn flow_files() -> Vec<PathBuf> {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files = Vec::new();
    for example in std::fs::read_dir(&examples).unwrap() {
        let flows = example.unwrap().path().join("flows");
        if let Ok(dir) = std::fs::read_dir(&flows) {
            for f in dir {
                let p = f.unwrap().path();
                if p.extension().is_some_and(|e| e == "yaml") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    assert!(files.len() >= 5, "the examples' flows: {files:?}");
    files
}

/// Every path in `v`, with the value there.
fn paths(v: &Json, at: Vec<Step>, out: &mut Vec<(Vec<Step>, Json)>) {
    match v {
        Json::Object(m) => {
            for (k, x) in m {
                let mut p = at.clone();
                p.push(Step::Key(k.clone()));
                out.push((p.clone(), x.clone()));
                paths(x, p, out);
            }
        }
        Json::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let mut p = at.clone();
                p.push(Step::Index(i));
                out.push((p.clone(), x.clone()));
                paths(x, p, out);
            }
        }
        _ => {}
    }
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

fn random_scalar(rng: &mut Rng) -> Json {
    match rng.below(6) {
        0 => json!(rng.below(1000)),
        1 => json!(rng.below(2) == 0),
        2 => json!("https://shop.example.com"),
        3 => json!("a: b # not a comment"),
        4 => json!("true"),
        _ => json!(format!("value-{}", rng.below(100))),
    }
}

#[test]
fn random_edits_of_every_example_flow_keep_everything_else() {
    let mut made = 0;
    for file in flow_files() {
        let original = std::fs::read_to_string(&file).unwrap();
        let doc = YamlDoc::parse(&original).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut all = Vec::new();
        paths(&doc.to_json(), Vec::new(), &mut all);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ original.len() as u64);
        for _ in 0..150 {
            let (path, old) = &all[rng.below(all.len())];
            let path = segs(path);
            let mut d = doc.clone();
            match rng.below(4) {
                // Set a scalar to another scalar: one line changes; setting it back gives
                // the original bytes.
                0 if !old.is_object() && !old.is_array() => {
                    let new = random_scalar(&mut rng);
                    d.set(&path, &new)
                        .unwrap_or_else(|e| panic!("{}: set {path:?}: {e}", file.display()));
                    let (a, b) = (lines(&original), lines(d.text()));
                    if !original.contains('|') {
                        assert_eq!(a.len(), b.len(), "{}: set {path:?}", file.display());
                        let differing = a.iter().zip(&b).filter(|(x, y)| x != y).count();
                        assert!(
                            differing <= 1,
                            "{}: set {path:?} changed {differing} lines",
                            file.display()
                        );
                    }
                    d.set(&path, old).unwrap();
                    // A string keeps its quotes through a string edit; a value that needed
                    // quotes keeps them, and a number in a quoted string's place drops
                    // them (as a person would). The Builder's undo restores the text it
                    // saved rather than making a new edit, so it always gets the bytes.
                    let same_quoting = new
                        .as_str()
                        .is_some_and(|s| s.starts_with("value-") || s.starts_with("https:"));
                    if same_quoting && !old.as_str().is_some_and(|s| s.contains('\n')) {
                        assert_eq!(d.text(), original, "{}: set {path:?} to {new} and back", file.display());
                    }
                }
                // Add a key to a mapping: only lines (or one line's end) added; removing it
                // gives the original bytes.
                1 if old.is_object() => {
                    let key = format!("added{}", rng.below(100));
                    let value = if rng.below(2) == 0 {
                        random_scalar(&mut rng)
                    } else {
                        json!({ "from": "request.body", "deep": { "a": 1, "b": [1, 2] } })
                    };
                    d.insert(&path, &key, &value, None)
                        .unwrap_or_else(|e| panic!("{}: insert into {path:?}: {e}", file.display()));
                    let kept: Vec<&str> = lines(d.text())
                        .into_iter()
                        .filter(|l| original.lines().any(|o| o == *l))
                        .collect();
                    let in_flow = !lines(&original).iter().all(|l| lines(d.text()).contains(l));
                    if !in_flow {
                        assert_eq!(kept, lines(&original), "{}: insert into {path:?}", file.display());
                    }
                    let mut added = path.clone();
                    added.push(Seg::Key(&key));
                    d.remove(&added).unwrap();
                    if !in_flow || !original.contains("{}") {
                        assert_eq!(
                            d.text(),
                            original,
                            "{}: insert into {path:?} and remove",
                            file.display()
                        );
                    }
                }
                // Remove an entry or item: nothing but its lines (and the comments above it)
                // go, unless it sits in a flow collection.
                2 => match d.remove(&path) {
                    Ok(()) => {
                        let now = lines(d.text());
                        let extra: Vec<&&str> = now.iter().filter(|l| !original.lines().any(|o| o == **l)).collect();
                        assert!(extra.len() <= 1, "{}: remove {path:?} wrote {extra:?}", file.display());
                    }
                    Err(e) => panic!("{}: remove {path:?}: {e}", file.display()),
                },
                // Rename a key: one line changes.
                3 if matches!(path.last(), Some(Seg::Key(_))) => {
                    let new = format!("renamed{}", rng.below(100));
                    if d.rename(&path, &new).is_ok() {
                        let differing = lines(&original)
                            .iter()
                            .zip(lines(d.text()))
                            .filter(|(x, y)| *x != y)
                            .count();
                        assert_eq!(differing, 1, "{}: rename {path:?}", file.display());
                    }
                }
                _ => continue,
            }
            made += 1;
        }
    }
    assert!(made > 200, "only {made} edits were made");
}

/// Sequences of edits on one document: every edit is made (these files are plain block
/// and flow YAML, which the layer edits in full) and each is verified against the
/// document's meaning as it is made.
#[test]
fn sequences_of_edits_are_all_made() {
    for file in flow_files() {
        let original = std::fs::read_to_string(&file).unwrap();
        let mut doc = YamlDoc::parse(&original).unwrap();
        let mut rng = Rng(0xD1B5_4A32_D192_ED03 ^ original.len() as u64);
        for step in 0..40 {
            let mut all = Vec::new();
            paths(&doc.to_json(), Vec::new(), &mut all);
            if all.is_empty() {
                break;
            }
            let (path, old) = all[rng.below(all.len())].clone();
            let path = segs(&path);
            let what = format!("{} step {step}: {path:?}", file.display());
            match rng.below(3) {
                0 if !old.is_object() && !old.is_array() => doc
                    .set(&path, &random_scalar(&mut rng))
                    .unwrap_or_else(|e| panic!("{what}: set: {e}")),
                1 if old.is_object() => doc
                    .insert(&path, &format!("k{step}"), &json!({ "from": "request.body" }), None)
                    .unwrap_or_else(|e| panic!("{what}: insert: {e}")),
                1 if old.is_array() => doc
                    .push(&path, &json!(step))
                    .unwrap_or_else(|e| panic!("{what}: push: {e}")),
                2 if path.len() > 1 => doc.remove(&path).unwrap_or_else(|e| panic!("{what}: remove: {e}")),
                _ => {}
            }
        }
    }
}

/// Every prefix of every example flow (most of them broken YAML, or YAML that means
/// something else) is either refused or edited; nothing panics.
#[test]
fn broken_and_odd_files_never_panic() {
    for file in flow_files() {
        let original = std::fs::read_to_string(&file).unwrap();
        let mut rng = Rng(0xA076_1D64_78BD_642F ^ original.len() as u64);
        for cut in (0..original.len()).step_by(5).filter(|&i| original.is_char_boundary(i)) {
            let Ok(mut doc) = YamlDoc::parse(&original[..cut]) else {
                continue;
            };
            let mut all = Vec::new();
            paths(&doc.to_json(), Vec::new(), &mut all);
            all.push((vec![Step::Key("missing".into())], Json::Null));
            all.push((vec![Step::Index(7)], Json::Null));
            for _ in 0..4 {
                let (path, _) = &all[rng.below(all.len())];
                let path = segs(path);
                let _ = match rng.below(5) {
                    0 => doc.set(&path, &random_scalar(&mut rng)),
                    1 => doc.insert(&path, "x", &json!({ "a": [1] }), Some("y")),
                    2 => doc.push(&path, &json!("z")),
                    3 => doc.rename(&path, "renamed"),
                    _ => doc.remove(&path),
                };
            }
        }
    }
}
