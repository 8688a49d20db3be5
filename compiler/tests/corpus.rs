//! The diagnostics corpus.
//!
//! Each file under `tests/corpus/invalid/` is a small project that must fail to check in
//! one specific way: its name starts with the diagnostic code it must produce
//! (`E0401-unknown-node-key.txt`), and the full rendered output is snapshotted, so the
//! code, the message, the location and the hint are all pinned. Files under
//! `tests/corpus/valid/` must check without errors, and `svc build` must turn each of them
//! into a server binary (rustc then proves the generated code sound: every type, every
//! move and borrow).
//!
//! A fixture lists files as `//- path` sections. `//- extends: base` first copies
//! `tests/corpus/base.txt`, a valid project, so a case only spells out what it changes;
//! `//- extends: base-ts` copies `base-ts.txt`, the same project with TypeScript nodes.
//!
//! Review snapshot changes with `cargo insta review` (or accept them with
//! `INSTA_UPDATE=always cargo test -p svc --test corpus`) and read the diff like code.

mod adversarial;
mod support;

use std::path::{Path, PathBuf};
use svc_compiler::check;
use svc_compiler::project::Project;
use svc_frontend::Diagnostics;
use svc_frontend::vfs::Memory;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Parses `//- path` sections into (path, text) pairs.
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("//- ") {
            out.push((rest.trim().to_string(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// The files of a fixture, `extends: base` applied.
fn files(text: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let parsed = sections(text);
    if let Some(base) = parsed.first().and_then(|(p, _)| p.strip_prefix("extends: ")) {
        files.extend(sections(
            &std::fs::read_to_string(corpus_dir().join(format!("{}.txt", base.trim()))).unwrap(),
        ));
    }
    for (path, body) in parsed {
        if path.starts_with("extends:") {
            continue;
        }
        if let Some(deleted) = path.strip_prefix("delete: ") {
            files.retain(|(p, _)| p != deleted.trim());
            continue;
        }
        files.retain(|(p, _)| *p != path);
        files.push((path, body));
    }
    files
}

fn fixture(text: &str) -> Memory {
    let root = Path::new("/project");
    let mut vfs = Memory::new();
    for (path, body) in files(text) {
        vfs = vfs.with(root.join(path), body);
    }
    vfs
}

fn run(text: &str) -> (String, Vec<String>, usize) {
    let vfs = fixture(text);
    let mut diags = Diagnostics::new();
    let mut project = Project::load_from(&vfs, Path::new("/project"), &mut diags);
    let _ = check::check(&project, &mut diags);
    // Test files (`tests/*.yaml`) are read and checked as `svc test` does.
    let _ = svc_compiler::flow_tests::suite::load_from(&vfs, &mut project, &mut diags);
    let errors = diags.error_count();
    let sorted = diags.sorted(&project.sources);
    let rendered: String = sorted.iter().map(|d| d.render(&project.sources) + "\n").collect();
    (
        rendered,
        sorted.iter().map(|d| d.code.as_str().to_string()).collect(),
        errors,
    )
}

fn cases(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

#[test]
fn invalid_projects_report_their_code() {
    let mut failures = Vec::new();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(corpus_dir().join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let _guard = settings.bind_to_scope();
    for path in cases("invalid") {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let code = name.split('-').next().unwrap().to_string();
        let (rendered, codes, _) = run(&std::fs::read_to_string(&path).unwrap());
        if !codes.contains(&code) {
            failures.push(format!("{name}: expected {code}, got {codes:?}\n{rendered}"));
        }
        insta::assert_snapshot!(name, rendered);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_code_has_a_case() {
    let names: Vec<String> = cases("invalid")
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    let missing: Vec<&str> = svc_frontend::Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| !names.iter().any(|n| n.starts_with(c)))
        .collect();
    assert!(missing.is_empty(), "codes without a corpus case: {missing:?}");
    assert!(names.len() >= 30);
}

/// The other way round: a code the docs name (once W0310 where svc said W0705) is one svc
/// reports, and docs/diagnostics.md files each code under the heading of its kind.
#[test]
fn every_code_the_docs_name_exists() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let known: Vec<&str> = svc_frontend::Code::ALL.iter().map(|c| c.as_str()).collect();
    let mut unknown = Vec::new();
    for entry in std::fs::read_dir(&docs).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let bytes = text.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let code = &bytes[i..(i + 5).min(bytes.len())];
            let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
            if boundary
                && matches!(b, b'E' | b'W')
                && code.len() == 5
                && code[1..].iter().all(u8::is_ascii_digit)
                && bytes.get(i + 5).is_none_or(|n| !n.is_ascii_alphanumeric())
            {
                let code = std::str::from_utf8(code).unwrap();
                // `E0xxx`/`W07xx` style ranges and rustc's own codes (E0599, …) aside.
                if !known.contains(&code)
                    && !text[i.saturating_sub(12)..i].contains("rustc")
                    && code.starts_with(['E', 'W'])
                {
                    unknown.push(format!("{}: {code}", path.file_name().unwrap().to_string_lossy()));
                }
            }
        }
    }
    support::assert_none_unknown(unknown, "codes");
    // Each code sits under the heading of its kind: warnings under Warnings, the test
    // file codes (E11xx) under theirs.
    let diagnostics = std::fs::read_to_string(docs.join("diagnostics.md")).unwrap();
    let warnings = diagnostics
        .split("## Warnings")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    for line in warnings
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Code"))
    {
        assert!(
            line.starts_with("| W"),
            "an error among the warnings of docs/diagnostics.md: {line}"
        );
    }
}

#[test]
fn every_code_is_documented() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/diagnostics.md")).unwrap();
    for code in svc_frontend::Code::ALL {
        let row = format!("| {} | {} |", code.as_str(), code.name());
        assert!(doc.contains(&row), "docs/diagnostics.md has no row `{row}`");
    }
}

#[test]
fn valid_projects_check_cleanly() {
    let base = std::fs::read_to_string(corpus_dir().join("base.txt")).unwrap();
    let (rendered, _, errors) = run(&base);
    assert_eq!(rendered, "", "the base project must be clean");
    assert_eq!(errors, 0);
    for path in cases("valid") {
        let (rendered, codes, errors) = run(&std::fs::read_to_string(&path).unwrap());
        assert!(
            errors == 0 && codes.iter().all(|c| c.starts_with('W')),
            "{}: {rendered}",
            path.display()
        );
    }
}

/// Writes a fixture to `dir` as a buildable project: its node crate depends on the SDK
/// through `.svc/source`, as a project made by `svc init` does.
fn write_project(text: &str, dir: &Path) {
    let _ = std::fs::remove_dir_all(dir.join("flows"));
    let _ = std::fs::remove_dir_all(dir.join("src"));
    for (path, mut body) in files(text) {
        if path == "Cargo.toml" {
            body.push_str("\n[dependencies]\nsvc-sdk = { path = \".svc/source/runtime/sdk\" }\n\n[workspace]\n");
        }
        let file = dir.join(&path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, body).unwrap();
    }
}

/// `svc build DIR` in the workspace's target directory (dependencies compiled already).
fn svc_build(dir: &Path) -> std::process::Output {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_svc"))
        .arg("build")
        .arg(dir)
        .env("CARGO_TARGET_DIR", repo.join("target"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn valid_projects_build() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    // A stable place under the shared target directory: rebuilds are incremental, and
    // the dependencies are the ones the other tests compiled.
    let root = repo.join("target/corpus-build");
    // Both bases: Rust nodes with svc.config.yaml, TypeScript nodes with svc.config.ts.
    let mut projects: Vec<(String, String)> = ["base", "base-ts"]
        .iter()
        .map(|b| {
            (
                b.to_string(),
                std::fs::read_to_string(corpus_dir().join(format!("{b}.txt"))).unwrap(),
            )
        })
        .collect();
    for path in cases("valid") {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        projects.push((name, std::fs::read_to_string(&path).unwrap()));
    }
    for (name, text) in &projects {
        let dir = root.join(name);
        write_project(text, &dir);
        let out = svc_build(&dir);
        assert!(
            out.status.success(),
            "svc build of corpus/valid/{name} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(dir.join("dist/corpus").exists(), "{name}: no binary");
    }

    // The moves the generated code makes (and those it must not make).
    let moves = std::fs::read_to_string(root.join("moves/.svc/server/src/routes/moves.rs")).unwrap();
    for expected in [
        "let held_req_body_owner = req.body.owner.as_ref().cloned();",
        "basket: req.body,",
        "let held_relay_basket_owner = out_relay.basket.owner.as_ref().cloned();",
        "basket: out_relay.basket,",
        "label: req.param_id,",
        "note: held_req_body_owner,",
    ] {
        assert!(moves.contains(expected), "moves.rs lacks `{expected}`:\n{moves}");
    }
    let merge = std::fs::read_to_string(root.join("moves/.svc/server/src/routes/merge.rs")).unwrap();
    for expected in ["basket: req.body.to_owned(),", "basket: out_relay.basket.to_owned(),"] {
        assert!(merge.contains(expected), "merge.rs lacks `{expected}`:\n{merge}");
    }
    serve_moves(&root.join("moves"));
}

/// The property of issue 15: every project `svc check` accepts builds, however its names
/// are chosen. Generates projects with adversarial names (`adversarial.rs`) from a seed,
/// checks them in memory until `SVC_ADVERSARIAL_PROJECTS` (default 2) have been accepted,
/// and builds each. The seed is printed; `SVC_ADVERSARIAL_SEED=N` replays a run.
#[test]
fn adversarial_names_that_check_also_build() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let wanted: usize = std::env::var("SVC_ADVERSARIAL_PROJECTS").map_or(2, |n| n.parse().unwrap());
    let seed: u64 = std::env::var("SVC_ADVERSARIAL_SEED").map_or_else(
        |_| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        },
        |s| s.parse().unwrap(),
    );
    eprintln!("adversarial names: SVC_ADVERSARIAL_SEED={seed}");
    let mut rng = adversarial::Rng::new(seed);
    let mut accepted = Vec::new();
    let mut refused: std::collections::BTreeMap<String, usize> = Default::default();
    let mut tried = 0;
    while accepted.len() < wanted && tried < 2000 {
        tried += 1;
        let text = adversarial::project(&mut rng);
        let (rendered, codes, errors) = run(&text);
        assert!(errors > 0 || codes.iter().all(|c| c.starts_with('W')), "{rendered}");
        if errors == 0 {
            accepted.push(text);
        } else {
            for code in codes.iter().filter(|c| c.starts_with('E')) {
                *refused.entry(code.clone()).or_default() += 1;
            }
        }
    }
    eprintln!(
        "{tried} projects generated, {} accepted; refusals by code: {refused:?}",
        accepted.len()
    );
    assert_eq!(
        accepted.len(),
        wanted,
        "the generator makes too few acceptable projects"
    );
    let root = repo.join("target/corpus-build");
    for (i, text) in accepted.iter().enumerate() {
        let dir = root.join(format!("adversarial-{i}"));
        write_project(text, &dir);
        let out = svc_build(&dir);
        assert!(
            out.status.success(),
            "SVC_ADVERSARIAL_SEED={seed}: a project svc check accepts does not build ({}):\n{}\n{text}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Runs the `moves` project's server and checks over HTTP that what was moved, held and
/// passed to a merge point arrives where the flows say.
fn serve_moves(dir: &Path) {
    use svc_runtime::apikey::{KeyRecord, unix_now};
    use svc_runtime::store::{SqliteStore, WorkspaceStore};
    let store_path = dir.join("workspace.db");
    let _ = std::fs::remove_file(&store_path);
    let key_file = dir.join(svc_runtime::seal::DEFAULT_KEY_FILE);
    let _ = std::fs::remove_file(&key_file);
    let key = {
        let store = SqliteStore::open(&store_path).unwrap();
        let sealing = svc_runtime::seal::create_key_file(&key_file).unwrap();
        store
            .set_secret("API_TOKEN", &sealing.seal("API_TOKEN", "token"), unix_now())
            .unwrap();
        let (key, record) = KeyRecord::issue("test", "tester", unix_now(), None);
        store.insert_key(&record).unwrap();
        key
    };
    let mut child = std::process::Command::new(dir.join("dist/corpus"))
        .args(["serve", "--port", "0", "--store"])
        .arg(&store_path)
        .env("SVC_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let base = support::listening_address(&mut child);
    let outcome = std::panic::catch_unwind(|| {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let c = reqwest::Client::builder().no_proxy().build().unwrap();
            let basket = serde_json::json!({"items": [{"sku": "A1", "color": "red"}], "owner": "ada"});
            // Moved body, held owner (for `paint` and the header), moved output, held part of it.
            let r = c
                .post(format!("{base}/ws/api/moves/xyz"))
                .header("x-api-key", &key)
                .json(&basket)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            assert_eq!(r.headers()["x-owner"], "ada");
            let body: serde_json::Value = r.json().await.unwrap();
            assert_eq!(body["painted"], "red xyz");
            assert_eq!(body["owner"], "ada");
            assert_eq!(body["first"]["sku"], "A1");
            assert_eq!(body["size"], 1.0);
            // An absent optional part is held as absent.
            let r = c
                .post(format!("{base}/ws/api/moves/xyz"))
                .header("x-api-key", &key)
                .json(&serde_json::json!({"items": []}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            assert!(r.headers().get("x-owner").is_none());
            assert_eq!(r.json::<serde_json::Value>().await.unwrap()["size"], 0.0);
            // Through the merge point, which is handed the parsed request.
            let r = c
                .post(format!("{base}/ws/api/merge/abc"))
                .json(&basket)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            let body: serde_json::Value = r.json().await.unwrap();
            assert_eq!(body["painted"], "green abc");
            assert_eq!(body["size"], 1.0);
            // A malformed body is still a 400 naming the field, wherever it is parsed.
            let r = c
                .post(format!("{base}/ws/api/merge/abc"))
                .json(&serde_json::json!({"items": "none"}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 400);
            assert_eq!(r.json::<serde_json::Value>().await.unwrap()["error"]["field"], "items");
        });
    });
    let _ = child.kill();
    let _ = child.wait();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
