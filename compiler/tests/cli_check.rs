//! `svc check` as a user runs it: the real binary, real project directories.

mod support;

use std::path::{Path, PathBuf};
use support::{assert_contains, edit, repo, svc, svc_command};

#[test]
fn every_example_checks_cleanly() {
    for example in ["hello", "shop", "hooks", "shop-ts", "helpdesk"] {
        let dir = repo().join("examples").join(example);
        let (code, _, stderr) = svc(&["check", dir.to_str().unwrap()]);
        assert_eq!(code, 0, "{example}: {stderr}");
        assert!(stderr.contains("no problems"), "{example}: {stderr}");
        // The same from inside the project (`svc check` with no directory: `.`).
        let out = svc_command().arg("check").current_dir(&dir).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{example}, from its directory: {stderr}");
    }
}

/// A scratch copy of an example that a test may break.
fn scratch(example: &str, name: &str) -> PathBuf {
    support::example_copy(example, &format!("cli-{name}"))
}

/// `svc check` with `args` on a copy of `examples/hello` whose greeting flow got
/// `changes`: (exit code, stdout, stderr).
fn check_greeting_edited(name: &str, changes: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let dir = scratch("hello", name);
    edit(&dir.join("flows/greeting.yaml"), changes);
    let printed = svc(&[&["check", dir.to_str().unwrap()], args].concat());
    let _ = std::fs::remove_dir_all(dir);
    printed
}

#[test]
fn errors_exit_1_with_rustc_style_output() {
    let (code, stdout, stderr) = check_greeting_edited("errors", &[("node: hello.greet", "node: hello.gret")], &[]);
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    assert_contains(
        &stderr,
        &[
            "error[E0401]: unknown node key `hello.gret`",
            "--> flows/greeting.yaml:",
            "did you mean `hello.greet`?",
            "error: `hello` has 1 error",
        ],
    );
}

#[test]
fn warnings_only_exit_0() {
    let (code, _, stderr) = check_greeting_edited("warnings", &[("methods: [GET]", "methods: [GET, DELETE]")], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_contains(&stderr, &["warning[W0701]", "1 warning"]);
}

#[test]
fn json_format_prints_one_object_per_diagnostic() {
    let changes = [
        ("from: request.query.tone }", "from: request.query.tones }"),
        ("methods: [GET]", "methods: [GET, POST]"),
    ];
    let (code, stdout, _) = check_greeting_edited("json", &changes, &["--format", "json"]);
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    let codes: Vec<&str> = lines.iter().map(|l| l["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["W0701", "E0404"]);
    let e = &lines[1];
    assert_eq!(e["severity"], "error");
    assert_eq!(e["file"], "flows/greeting.yaml");
    assert!(e["line"].as_u64().unwrap() > 1);
    assert!(e["column"].as_u64().unwrap() > 1);
    assert!(!e["help"].as_str().unwrap().is_empty());
}

#[test]
fn a_missing_directory_is_an_error_not_a_panic() {
    let (code, _, stderr) = svc(&["check", "/nonexistent/svc-project"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("error[E0100]"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A literal checked against a `date-time` pin with a multi-byte character where the
/// `T` goes: a located error (it once panicked, exit 101, and took `svc dev` down).
#[test]
fn a_literal_with_a_multi_byte_character_against_a_format_is_an_error_not_a_panic() {
    let dir = scratch("hello", "multi-byte-literal");
    edit(
        &dir.join("src/nodes/greet.rs"),
        &[("t::string().default(\"world\")", "t::string().format(\"date-time\")")],
    );
    edit(
        &dir.join("flows/greeting.yaml"),
        &[("name: { from: request.query.name }", "name: \"2024-01-0éT00:00:00Z\"")],
    );
    let (code, _, stderr) = svc(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_contains(
        &stderr,
        &[
            "error[E0506]: the string `2024-01-0éT00:00:00Z` breaks `format` of input `name`",
            "--> flows/greeting.yaml:",
        ],
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_file_that_is_not_utf8_is_one_located_error_and_nothing_else() {
    // A flow: one error at the first bad byte, not errors about what was lost.
    let dir = scratch("hello", "latin1-flow");
    let flow = dir.join("flows/greeting.yaml");
    let mut bytes = std::fs::read(&flow).unwrap();
    let at = bytes.windows(9).position(|w| w == b"summary: ").unwrap() + 9;
    bytes.insert(at + 6, 0xe9); // "Greets\xe9 the caller" (Latin-1 é)
    std::fs::write(&flow, &bytes).unwrap();
    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let (code, _, stderr) = svc(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.matches("error[").count(), 1, "{stderr}");
    assert!(stderr.contains("`flows/greeting.yaml` is not valid UTF-8"), "{stderr}");
    assert!(stderr.contains(&format!("flows/greeting.yaml:{line}:16")), "{stderr}");

    // A node source file: one error there, and no "unknown node key" in the flow that
    // uses the nodes it holds.
    let dir = scratch("hello", "latin1-node");
    let node = dir.join("src/nodes/greet.rs");
    let mut bytes = std::fs::read(&node).unwrap();
    bytes.splice(0..0, b"// caf\xe9\n".iter().copied());
    std::fs::write(&node, &bytes).unwrap();
    let (code, _, stderr) = svc(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.matches("error[").count(), 1, "{stderr}");
    assert_contains(&stderr, &["src/nodes/greet.rs:1:7", "is not valid UTF-8"]);
}

#[test]
fn node_crate_names_never_clash_with_the_generated_crate() {
    // A node crate named like the generated package: the generated one takes another name.
    let dir = scratch("hello", "clashing-package");
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("name = \"hello-nodes\"", "name = \"hello_server\""),
    )
    .unwrap();
    let out = dir.join("generated");
    emit(&dir, &out, false, 0);
    let generated = std::fs::read_to_string(out.join("Cargo.toml")).unwrap();
    assert_contains(&generated, &["name = \"hello-server-2\"", "hello_server = { path"]);

    // A node crate named like a crate every server depends on is a located error.
    std::fs::write(&manifest, text.replace("name = \"hello-nodes\"", "name = \"svc_sdk\"")).unwrap();
    let (code, _, stderr) = svc(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("E0303") && stderr.contains("Cargo.toml:2:1"),
        "{stderr}"
    );
    assert!(stderr.contains("cannot be named `svc_sdk`"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `svc emit DIR --out OUT` (with `--check` where `check`), which must exit with `code`:
/// what it printed on stdout and stderr.
fn emit(dir: &Path, out: &Path, check: bool, code: i32) -> (String, String) {
    let mut args = vec!["emit", dir.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend(check.then_some("--check"));
    let (exit, stdout, stderr) = svc(&args);
    assert_eq!(exit, code, "svc {args:?}:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

/// Every file under `dir` with its contents, to prove a command wrote nothing.
fn snapshot_tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

#[test]
fn emit_check_finds_a_stale_committed_crate_and_writes_nothing() {
    let dir = scratch("hello", "emit-check");
    let generated = dir.join("generated");
    let g = generated.to_str().unwrap();
    emit(&dir, &generated, false, 0);

    // Fresh: exit 0, nothing on stdout.
    let (stdout, stderr) = emit(&dir, &generated, true, 0);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("is up to date"), "{stderr}");

    // A flow changes (its route module and the routes table), a generated file is lost
    // and a stray one appears: exit 1 and a unified diff of each, and the crate on disk
    // is left as it was.
    let flow = dir.join("flows/greeting.yaml");
    edit(&flow, &[("limit: 60", "limit: 61")]);
    std::fs::remove_file(generated.join("src/main.rs")).unwrap();
    std::fs::write(generated.join("src/routes/old.rs"), "// @generated\n").unwrap();
    let before = snapshot_tree(&generated);
    let (stdout, stderr) = emit(&dir, &generated, true, 1);
    assert_contains(&stderr, &["is stale: 4 of its files differ", "help: run `svc emit"]);
    let route = format!("b/{g}/src/routes/greeting.rs");
    assert!(
        stdout.contains(&format!("--- a/{g}/src/routes/greeting.rs\n+++ {route}\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n-") && stdout.contains("\n+") && stdout.contains("61"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("--- /dev/null\n+++ b/{g}/src/main.rs")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("--- a/{g}/src/routes/old.rs\n+++ /dev/null")),
        "{stdout}"
    );
    assert_eq!(snapshot_tree(&generated), before, "--check wrote to the crate");

    // After `svc emit`, it is fresh again.
    emit(&dir, &generated, false, 0);
    emit(&dir, &generated, true, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn emit_removes_the_build_script_an_earlier_svc_generated_and_keeps_one_of_yours() {
    // svc 0.1 generated a `build.rs` (hot text); cargo would go on running a stale one.
    let dir = scratch("hello", "emit-build-script");
    let generated = dir.join("generated");
    std::fs::create_dir_all(&generated).unwrap();
    let build_script = generated.join("build.rs");
    std::fs::write(
        &build_script,
        "//! @generated by svc 0.1.0 from the project `hello`.\nfn main() {}\n",
    )
    .unwrap();
    emit(&dir, &generated, false, 0);
    assert!(!build_script.exists(), "the generated build.rs is left behind");

    // A build script svc did not write is not svc's to remove.
    std::fs::write(&build_script, "fn main() {}\n").unwrap();
    emit(&dir, &generated, false, 0);
    assert!(build_script.exists(), "a hand-written build.rs was removed");
}

/// Wording a newcomer met: "error: `the project` has 1 error" (the placeholder quoted as if
/// it were a name) and "(1 routes)".
#[test]
fn summaries_read_as_english() {
    let dir = scratch("hello", "wording");
    std::fs::remove_file(dir.join("svc.config.yaml")).unwrap();
    let (code, _, stderr) = svc(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(stderr.contains("error: the project has "), "{stderr}");
    assert!(!stderr.contains("`the project`"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);

    let out = std::env::temp_dir().join(format!("svc-cli-wording-emit-{}", std::process::id()));
    let hello = repo().join("examples/hello");
    let (_, stderr) = emit(&hello, &out, false, 0);
    assert!(stderr.contains("emitted `hello` (1 route)"), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}

/// Every `svc <command>` the docs and the README name is one svc has: the docs once sent
/// readers to `svc routes`, which does not exist.
#[test]
fn every_command_the_docs_name_exists() {
    let commands = support::commands();
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.push(repo().join("README.md"));
    let mut unknown = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, _) in text.match_indices("`svc ") {
            let word: String = text[i + 5..].chars().take_while(|c| c.is_ascii_lowercase()).collect();
            if !word.is_empty() && !commands.contains(&word) {
                unknown.push(format!("{}: svc {word}", file.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    support::assert_none_unknown(unknown, "commands");
}
