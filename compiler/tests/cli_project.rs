//! `svc init`, `schema`, `openapi`, `graph`, `manifest`, `assets sync` and `--help`, with
//! the real binary. The OpenAPI documents and the examples are checked by standard
//! validators (Python's openapi-spec-validator and jsonschema, which `.ci/run` installs).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::{assert_contains, repo, svc};

fn scratch(name: &str) -> PathBuf {
    support::scratch_dir(&format!("cli-project-{name}"))
}

fn examples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("examples"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("svc.config.yaml").exists() || p.join("svc.config.ts").exists())
        .collect();
    v.sort();
    v
}

fn python(script: &str, args: &[&Path]) -> (bool, String) {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs (CI installs it with openapi-spec-validator, jsonschema and PyYAML)");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// `svc init --lang ts`: the spec's own way of writing nodes. The project checks, its
/// package installs (`@svc/sdk` through `.svc/source`), and `npm test` type-checks it with
/// `tsc` (named structures typed from `.svc/types/assets.d.ts`) and runs its node test.
#[test]
fn init_lang_ts_creates_a_typescript_project_whose_types_and_unit_tests_pass() {
    let dir = scratch("init-ts").join("greeter");
    let d = dir.to_str().unwrap();
    let (code, _, err) = svc(&["init", d, "--lang", "ts"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("npm install && npm test"), "{err}");
    // A fresh clone has no .svc/source, where @svc/sdk comes from: the README says to run
    // an svc command before `npm install` (which failed with TS2307 the other way round).
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let (check, install) = (readme.find("svc check").unwrap(), readme.find("npm install").unwrap());
    assert!(
        check < install,
        "the README lists `npm install` before `svc check`:\n{readme}"
    );
    for f in [
        "svc.config.ts",
        "flows/greeting.yaml",
        "src/nodes/greet.ts",
        "src/nodes/greet.test.ts",
        "package.json",
        "tsconfig.json",
        ".gitignore",
        "README.md",
        "tests/greeting.yaml",
        ".svc/types/assets.d.ts",
        ".svc/source/sdk-ts/index.js",
    ] {
        assert!(dir.join(f).exists(), "svc init --lang ts did not write {f}");
    }
    for rust_only in ["Cargo.toml", "svc.config.yaml", "src/lib.rs"] {
        assert!(!dir.join(rust_only).exists(), "{rust_only} in a TypeScript project");
    }
    let (code, _, err) = svc(&["check", d]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("1 route, 1 code node, no problems"), "{err}");
    let types = std::fs::read_to_string(dir.join(".svc/types/assets.d.ts")).unwrap();
    assert!(
        types.contains("\"Greeting\": { \"message\": string; \"tone\": Enums[\"Tone\"] };"),
        "{types}"
    );

    // (npm: scripts/setup.sh installs it.)
    let npm = |args: &[&str]| {
        svc_testkit::run_ok(
            Command::new("npm")
                .args(args)
                .args(["--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&dir),
        )
    };
    npm(&["install", "--prefer-offline"]);
    let tested = npm(&["test"]);
    assert!(tested.contains("# pass 2") && tested.contains("# fail 0"), "{tested}");
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

/// `svc emit` compiles the node of `svc init --lang ts` to Rust; a node outside the
/// subset stays in the engine, and both the generated crate and a note say why and where.
#[test]
fn emit_says_which_typescript_nodes_stay_in_the_engine() {
    let dir = scratch("native-note").join("greeter");
    let d = dir.to_str().unwrap();
    assert_eq!(svc(&["init", d, "--lang", "ts"]).0, 0);
    let nodes = || std::fs::read_to_string(dir.join(".svc/server/src/nodes.rs")).unwrap();
    let (code, _, err) = svc(&["emit", d]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note:"), "{err}");
    assert!(nodes().contains("compiled to Rust (`native`)"), "{}", nodes());

    let node = dir.join("src/nodes/greet.ts");
    let text = std::fs::read_to_string(&node).unwrap().replace(
        "    const name = ctx.inputs.name.trim();\n",
        "    const name = ctx.inputs.name.trim();\n    while (name === \"!\") { ctx.fail(\"no\"); }\n",
    );
    std::fs::write(&node, text).unwrap();
    let (code, _, err) = svc(&["emit", d]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("note: TypeScript node `greeter.greet` runs in the engine: a `while` loop")
            && err.contains("(src/nodes/greet.ts:16:5)"),
        "{err}"
    );
    assert!(nodes().contains("Runs in the engine: a `while` loop"), "{}", nodes());
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn init_creates_a_project_that_checks_and_never_overwrites() {
    let dir = scratch("init").join("My API");
    let d = dir.to_str().unwrap();
    let (code, _, err) = svc(&["init", d]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("created `my-api`"), "{err}");
    for f in [
        "svc.config.yaml",
        "flows/greeting.yaml",
        "Cargo.toml",
        "src/lib.rs",
        "src/nodes/greet.rs",
        ".gitignore",
        "README.md",
        "tests/greeting.yaml",
        "schemas/flow.schema.json",
        "schemas/test.schema.json",
    ] {
        assert!(dir.join(f).exists(), "svc init did not write {f}");
    }
    let (code, _, err) = svc(&["check", d]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("1 route, 1 code node, no problems"), "{err}");
    let flow = std::fs::read_to_string(dir.join("flows/greeting.yaml")).unwrap();
    for protection in ["check-origin", "check-api-key", "rate-limit"] {
        assert!(flow.contains(protection), "the new flow lacks {protection}");
    }
    assert!(flow.starts_with("# yaml-language-server: $schema=../schemas/flow.schema.json"));

    // A second init refuses and changes nothing, even in a directory with one of the files.
    std::fs::write(dir.join("README.md"), "mine").unwrap();
    let (code, _, err) = svc(&["init", d]);
    assert_eq!(code, 1);
    assert!(err.contains("never overwrites"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("README.md")).unwrap(), "mine");
    let other = scratch("init-partial");
    std::fs::write(other.join("Cargo.toml"), "[package]").unwrap();
    let (code, _, err) = svc(&["init", other.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(!other.join("svc.config.yaml").exists(), "a refused init wrote files");
}

#[test]
fn committed_schemas_are_current_and_accept_every_example() {
    let (code, flow, _) = svc(&["schema", "flow"]);
    assert_eq!(code, 0);
    let (_, config, _) = svc(&["schema", "config"]);
    let (_, tests, _) = svc(&["schema", "test"]);
    let docs = repo().join("docs/schemas");
    assert_eq!(std::fs::read_to_string(docs.join("test.schema.json")).unwrap(), tests);
    assert_eq!(
        std::fs::read_to_string(docs.join("flow.schema.json")).unwrap(),
        flow,
        "docs/schemas is stale: run `svc schema --out docs/schemas`"
    );
    assert_eq!(
        std::fs::read_to_string(docs.join("svc.config.schema.json")).unwrap(),
        config
    );

    // Every example's config and flows validate; so do a few broken files, which must not.
    let script = r#"
import sys, json, yaml, jsonschema
flow = json.load(open(sys.argv[1])); config = json.load(open(sys.argv[2])); tests = json.load(open(sys.argv[3]))
for schema in (flow, config, tests):
    jsonschema.Draft202012Validator.check_schema(schema)
bad = 0
for path in sys.argv[4:]:
    schema = config if path.endswith("svc.config.yaml") else tests if "/tests/" in path else flow
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(open(path))))
    if errors:
        bad += 1
        print(path, errors[0].message)
sys.exit(1 if bad else 0)
"#;
    let mut files = Vec::new();
    for ex in examples() {
        // A TypeScript project's config is svc.config.ts, which the checker validates.
        if ex.join("svc.config.yaml").exists() {
            files.push(ex.join("svc.config.yaml"));
        }
        for f in std::fs::read_dir(ex.join("flows")).unwrap().flatten() {
            files.push(f.path());
        }
        for f in std::fs::read_dir(ex.join("tests")).unwrap().flatten() {
            files.push(f.path());
        }
    }
    let mut args: Vec<&Path> = vec![
        &docs.join("flow.schema.json"),
        &docs.join("svc.config.schema.json"),
        &docs.join("test.schema.json"),
    ]
    .into_iter()
    .map(|p| Box::leak(Box::new(p.clone())) as &Path)
    .collect();
    args.extend(files.iter().map(|p| p.as_path()));
    let (ok, out) = python(script, &args);
    assert!(ok, "examples do not validate against the schemas:\n{out}");

    let broken = scratch("schema-broken");
    let bad_flow = broken.join("bad.yaml");
    std::fs::write(
        &bad_flow,
        "route: x\nmethods: [GET]\nstart: a\nnodes:\n  a: { type: rate-limit, limit: 10, window: 1m, by: everyone }\n",
    )
    .unwrap();
    let (ok, out) = python(
        script,
        &[
            &docs.join("flow.schema.json"),
            &docs.join("svc.config.schema.json"),
            &docs.join("test.schema.json"),
            &bad_flow,
        ],
    );
    assert!(!ok, "a rate limit `by: everyone` passed the flow schema: {out}");
}

#[test]
fn openapi_documents_pass_a_standard_validator() {
    let dir = scratch("openapi");
    for ex in examples() {
        let name = ex.file_name().unwrap().to_str().unwrap().to_string();
        let out = dir.join(format!("{name}.json"));
        let (code, _, err) = svc(&["openapi", ex.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let (ok, msg) = python(
            "import sys; from openapi_spec_validator import validate; from openapi_spec_validator.readers import read_from_filename; validate(read_from_filename(sys.argv[1])[0])",
            &[&out],
        );
        assert!(ok, "{name}: {msg}");
    }
    let (_, text, _) = svc(&["openapi", repo().join("examples/shop").to_str().unwrap()]);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let post = &doc["paths"]["/acme/shop/orders"]["post"];
    assert_eq!(
        post["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/Order"
    );
    for status in ["201", "400", "401", "403", "422", "429"] {
        assert!(post["responses"][status].is_object(), "no {status} response: {post}");
    }
    assert!(post["responses"]["429"]["headers"]["Retry-After"].is_object());
    assert!(post["responses"]["401"]["headers"]["WWW-Authenticate"].is_object());
    assert_eq!(post["security"][0]["apiKeyHeader"], serde_json::json!([]));
    assert_eq!(
        doc["components"]["securitySchemes"]["apiKeyHeader"]["name"],
        "X-API-Key"
    );
    assert_eq!(
        doc["components"]["schemas"]["QuoteStatus"]["enum"],
        serde_json::json!(["accepted", "needs-review"])
    );
    assert_eq!(
        doc["components"]["schemas"]["Order"]["required"],
        serde_json::json!(["customerEmail", "currency", "lines"])
    );
}

#[test]
fn graph_draws_a_flow_as_mermaid_or_dot() {
    let shop = repo().join("examples/shop");
    let (code, mermaid, err) = svc(&["graph", "orders", shop.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(mermaid.starts_with("flowchart LR\n"));
    assert_contains(&mermaid, &[r#"n1 -->|"valid"| n2"#, r#"-.->|"quote.total → total"|"#]);
    let (code, dot, _) = svc(&[
        "graph",
        "flows/create-order.yaml",
        shop.to_str().unwrap(),
        "--format",
        "dot",
    ]);
    assert_eq!(code, 0);
    assert!(
        dot.starts_with("digraph flow {") && dot.trim_end().ends_with('}'),
        "{dot}"
    );
    assert!(dot.contains(r#"[label="sequence-limited"]"#), "{dot}");
    let (code, _, err) = svc(&["graph", "order", shop.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("did you mean `orders`?"), "{err}");
}

/// The shop with its nodes and config in TypeScript describes itself exactly as the Rust
/// shop does: the same node manifests, the same OpenAPI document, the same assets synced.
#[test]
fn shop_ts_describes_itself_as_shop_does() {
    let describe = |example: &str| {
        let dir = repo().join("examples").join(example);
        let d = dir.to_str().unwrap();
        let store = scratch(&format!("describe-{example}")).join("workspace.db");
        ["manifest", "openapi"]
            .iter()
            .map(|command| svc(&[command, d]))
            .chain([svc(&[
                "assets",
                "sync",
                d,
                "--dry-run",
                "--store",
                store.to_str().unwrap(),
            ])])
            .map(|(code, out, err)| {
                assert_eq!(code, 0, "{example}: {err}");
                out + &err
            })
            .collect::<Vec<String>>()
    };
    let rust = describe("shop");
    let typescript = describe("shop-ts");
    for (what, (r, t)) in ["manifest", "openapi", "assets sync"]
        .iter()
        .zip(rust.iter().zip(&typescript))
    {
        assert_eq!(r, t, "{what} differs between shop and shop-ts");
    }
}

#[test]
fn manifest_prints_every_node_in_the_spec_shape() {
    let shop = repo().join("examples/shop");
    let (code, out, err) = svc(&["manifest", shop.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let all: serde_json::Value = serde_json::from_str(&out).unwrap();
    let keys: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["nodeKey"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["shop.decide-status", "shop.price-order"]);
    assert!(all[0].get("run").is_none());
    assert_eq!(all[0]["inputs"]["review_above"]["default"], 1000);
    let (code, one, _) = svc(&["manifest", shop.to_str().unwrap(), "--node", "shop.price-order"]);
    assert_eq!(code, 0);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&one).unwrap()["nodeKey"],
        "shop.price-order"
    );
    let (code, _, err) = svc(&["manifest", shop.to_str().unwrap(), "--node", "shop.price-ordr"]);
    assert_eq!(code, 1);
    assert!(err.contains("did you mean `shop.price-order`?"), "{err}");
}

#[test]
fn assets_sync_is_idempotent_and_reports_missing_secrets() {
    let store = scratch("assets").join("workspace.db");
    let s = store.to_str().unwrap();
    let hooks = repo().join("examples/hooks");
    let h = hooks.to_str().unwrap();

    let (code, out, _) = svc(&["assets", "sync", h, "--store", s, "--dry-run"]);
    assert_eq!(code, 0);
    assert!(out.contains("(would add)") && out.contains("dry run"), "{out}");
    let (_, out, _) = svc(&["assets", "sync", h, "--store", s, "--dry-run"]);
    assert!(out.contains("(would add)"), "a dry run wrote to the store: {out}");

    let (code, out, err) = svc(&["assets", "sync", h, "--store", s]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("+ secret ") && out.contains("+ node ") && out.contains("synced"),
        "{out}"
    );
    assert_contains(&err, &["warning: required secret", "has no value"]);

    let (code, out, _) = svc(&["assets", "sync", h, "--store", s]);
    assert_eq!(code, 0);
    assert!(
        out.contains("assets are up to date"),
        "a second sync changed something: {out}"
    );

    // Another project in the same store: hooks' assets are removed, shop's added.
    let (_, out, _) = svc(&[
        "assets",
        "sync",
        repo().join("examples/shop").to_str().unwrap(),
        "--store",
        s,
    ]);
    assert!(out.contains("- node ") && out.contains("+ structure Order"), "{out}");
}

#[test]
fn every_command_has_help_with_an_example() {
    let commands: Vec<String> = support::commands().into_iter().filter(|c| c != "help").collect();
    for expected in [
        "init", "dev", "check", "build", "emit", "run", "assets", "manifest", "graph", "openapi", "schema", "keys",
        "secrets",
    ] {
        assert!(
            commands.iter().any(|c| c == expected),
            "`svc --help` does not list {expected}: {commands:?}"
        );
    }
    for c in &commands {
        let (code, help, _) = svc(&[c, "--help"]);
        assert_eq!(code, 0);
        assert!(help.contains("Example"), "`svc {c} --help` has no example:\n{help}");
    }
    for sub in [
        ["keys", "create"],
        ["keys", "list"],
        ["keys", "revoke"],
        ["keys", "rotate"],
        ["secrets", "set"],
        ["secrets", "list"],
        ["secrets", "unset"],
        ["assets", "sync"],
    ] {
        let (code, help, _) = svc(&[sub[0], sub[1], "--help"]);
        assert_eq!(code, 0);
        assert!(
            help.contains("Example"),
            "`svc {} {} --help` has no example:\n{help}",
            sub[0],
            sub[1]
        );
    }
}

/// `svc manifest | head` panicked ("failed printing to stdout: Broken pipe", exit 101) in
/// 7 runs of 20: a command whose reader goes away ends quietly, as Unix tools do.
#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    for args in [&["schema", "flow"][..], &["manifest", "examples/shop"][..]] {
        for _ in 0..5 {
            let mut child = Command::new(env!("CARGO_BIN_EXE_svc"))
                .args(args)
                .current_dir(repo())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // The reader goes away before svc writes.
            drop(child.stdout.take());
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("panicked"), "svc {args:?}: {stderr}");
            assert_ne!(out.status.code(), Some(101), "svc {args:?}: {stderr}");
        }
    }
}

/// `svc init` takes the names `svc check` takes, and says when it derived another one.
#[test]
fn init_takes_the_project_names_check_takes() {
    let dir = scratch("init-names");
    let (code, _, stderr) = svc(&["init", dir.join("x").to_str().unwrap(), "--name", "billing_api"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = svc(&["check", dir.join("x").to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = svc(&["init", dir.join("9lives").to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("named `api-9lives` after its directory `9lives`"),
        "{stderr}"
    );
    let (code, _, stderr) = svc(&["init", dir.join("y").to_str().unwrap(), "--name", "9lives"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("starting with a letter"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
