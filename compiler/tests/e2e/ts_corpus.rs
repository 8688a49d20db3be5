//! The TypeScript corpus (`compiler/tests/ts-corpus`): nodes written the way the spec's
//! users write TypeScript, each run under Node.js and in svc, whose answers must agree
//! byte for byte: JSON text, key order, numbers as JavaScript writes them, failure
//! messages and codes.
//!
//! Node.js's side: tsc compiles the corpus (types stripped), and `harness.mjs` runs every
//! node with @svc/sdk/testing on hand-written and generated inputs, writing down the
//! request body of each case and the answer its route must give. svc's side: a copy of
//! the corpus gets one route per node (its request body a structure of the node's
//! inputs, 200 with the outputs, 422 with the failure), is built once, and is served
//! three times: as `svc build` ships it (nodes compiled to Rust where svc compiles them,
//! the engine taking the calls their compiled code leaves to it), with every node in the
//! engine (`SVC_TYPESCRIPT=engine`), and with compiled nodes kept to their compiled code
//! (`SVC_TYPESCRIPT=compiled`: a call it would leave answers 500 `node_left_compiled_code`).
//! Every answer of the first two, and every answer of the third that its compiled code
//! gave, must be Node.js's; every compiled node must answer some cases on its compiled
//! code, so that the comparison reaches it. The test also reports which nodes svc
//! compiles to Rust and why the others stay in the engine, and holds the share it
//! compiles to at least half.

use crate::harness::{client, project_binary, repo, start_binary};
use crate::support::copy_committed;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const CORPUS: &str = "ts-corpus";

/// The corpus copied into a scratch directory, with `@svc/sdk` beside it for Node.js.
fn scratch_copy() -> PathBuf {
    let dir = crate::support::scratch_dir("e2e-ts-corpus");
    copy_committed(&repo().join("compiler/tests").join(CORPUS), &dir);
    std::fs::create_dir_all(dir.join("node_modules/@svc")).unwrap();
    std::os::unix::fs::symlink(repo().join("sdk-ts"), dir.join("node_modules/@svc/sdk")).unwrap();
    dir
}

/// (scripts/setup.sh installs Node.js and the SDK's TypeScript.)
fn run(command: &mut Command) -> String {
    svc_testkit::run_ok(command)
}

/// The nodes' manifests (@svc/sdk's), and what Node.js answered for each case:
/// `{ node, body, answer: { status, body? } }`.
fn node_js_answers(dir: &Path) -> (Vec<Value>, Vec<Value>) {
    let tsc = repo().join("sdk-ts/node_modules/.bin/tsc");
    assert!(tsc.exists(), "{} is missing: run scripts/setup.sh", tsc.display());
    run(Command::new(&tsc)
        .args(["-p", ".", "--outDir", ".svc/tsc", "--noCheck"])
        .current_dir(dir));
    let out = run(Command::new("node")
        .args(["harness.mjs", ".svc/tsc", "cases.json"])
        .current_dir(dir));
    let mut out: Value = serde_json::from_str(&out).unwrap();
    let list = |v: &mut Value| v.as_array_mut().unwrap().drain(..).collect();
    (list(&mut out["manifests"]), list(&mut out["records"]))
}

/// `price-tag` → `PriceTagInput`.
fn body_structure(route: &str) -> String {
    let mut name: String = route
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    name.push_str("Input");
    name
}

/// A pin's type as a structure field writes it (`type:array` with its items → `T:array`).
fn field_type(pin: &Value) -> String {
    let t = pin["type"].as_str().unwrap();
    if t == "type:array" {
        format!("{}:array", field_type(&pin["items"]))
    } else {
        t.to_string()
    }
}

/// One route per node, `POST /svc/corpus/<name>`: its inputs from the request body, its
/// outputs in a 200, its failure in a 422.
fn add_routes(dir: &Path, manifests: &[Value]) {
    let mut structures = String::new();
    std::fs::create_dir_all(dir.join("flows")).unwrap();
    for m in manifests {
        let key = m["nodeKey"].as_str().unwrap();
        let route = key.strip_prefix("corpus.").unwrap();
        let structure = body_structure(route);
        let data = |pins: &Value| -> Vec<(String, Value)> {
            pins.as_object()
                .unwrap()
                .iter()
                .filter(|(_, p)| p["type"] != "sequence")
                .map(|(id, p)| (id.clone(), p.clone()))
                .collect()
        };
        let _ = write!(structures, "    defineStructure({{ name: \"{structure}\", fields: [");
        for (id, pin) in data(&m["inputs"]) {
            let required = pin.get("optional").is_none() && pin.get("default").is_none();
            let _ = write!(
                structures,
                " {{ name: \"{id}\", type: \"{}\", required: {required} }},",
                field_type(&pin)
            );
        }
        structures.push_str(" ] }),\n");

        let mut flow = format!(
            "route: {route}\nmethods: [POST]\nrequest:\n  body: object:{structure}\nstart: run\nnodes:\n  run:\n    type: code\n    node: {key}\n    inputs:\n"
        );
        for (id, _) in data(&m["inputs"]) {
            let _ = writeln!(flow, "      {id}: {{ from: request.body.{id} }}");
        }
        flow.push_str("    next: ok\n    on_fail: failed\n  ok:\n    type: return-json\n    status: 200\n    body:\n");
        for (id, _) in data(&m["outputs"]) {
            let _ = writeln!(flow, "      {id}: {{ from: run.{id} }}");
        }
        flow.push_str(concat!(
            "  failed:\n    type: return-json\n    status: 422\n    body:\n      failure:\n",
            "        message: { from: run.failure.message }\n        code: { from: run.failure.code }\n",
        ));
        std::fs::write(dir.join("flows").join(format!("{route}.yaml")), flow).unwrap();
    }
    let config = dir.join("svc.config.ts");
    let text = std::fs::read_to_string(&config).unwrap();
    let marker = "    // The test adds each route's request body here.\n";
    assert!(text.contains(marker), "svc.config.ts lost its marker");
    std::fs::write(&config, text.replace(marker, &structures)).unwrap();
}

/// Which nodes `svc build` compiled to Rust, and why each other one runs in the engine,
/// from the doc of each node in the generated `src/nodes.rs`.
fn compiled_and_not(dir: &Path) -> (Vec<String>, Vec<(String, String)>) {
    let nodes = std::fs::read_to_string(dir.join(".svc/server/src/nodes.rs")).unwrap();
    let lines: Vec<&str> = nodes.lines().map(str::trim).collect();
    let (mut compiled, mut engine) = (Vec::new(), Vec::new());
    for (i, line) in lines.iter().enumerate() {
        // A one-line doc is `///`, a longer one `/** … */`.
        let Some(rest) = line
            .strip_prefix("/// `corpus.")
            .or_else(|| line.strip_prefix("/** `corpus."))
        else {
            continue;
        };
        let Some((name, rest)) = rest.split_once('`') else {
            continue;
        };
        if !rest.contains("written in TypeScript") {
            continue;
        }
        if rest.contains("compiled to Rust") {
            compiled.push(name.to_string());
        } else {
            let why = lines[i + 1..]
                .iter()
                .take(4)
                .find_map(|l| l.trim_start_matches("///").trim().strip_prefix("Runs in the engine: "))
                .unwrap_or("(no reason given)");
            engine.push((name.to_string(), why.trim_end_matches("*/").to_string()));
        }
    }
    (compiled, engine)
}

#[tokio::test]
async fn typescript_nodes_answer_as_node_js_does_byte_for_byte() {
    let dir = scratch_copy();
    let (manifests, cases) = node_js_answers(&dir);
    add_routes(&dir, &manifests);
    let bin = project_binary(CORPUS, &dir);

    let (compiled_nodes, engine_nodes) = compiled_and_not(&dir);
    let total = compiled_nodes.len() + engine_nodes.len();
    println!(
        "{} of {total} corpus nodes compile to Rust: {}",
        compiled_nodes.len(),
        compiled_nodes.join(", ")
    );
    for (name, why) in &engine_nodes {
        println!("  runs in the engine: {name}: {why}");
    }
    let (shipped, _) = start_binary(CORPUS, &bin, &[], &[], |_| ());
    let (engine, _) = start_binary(CORPUS, &bin, &[], &[("SVC_TYPESCRIPT", "engine")], |_| ());
    let (strict, _) = start_binary(CORPUS, &bin, &[], &[("SVC_TYPESCRIPT", "compiled")], |_| ());
    let c = client();
    let mut differences = Vec::new();
    // Per compiled node: the cases its compiled code answered, and all its cases.
    let mut fast: std::collections::BTreeMap<&str, (usize, usize)> =
        compiled_nodes.iter().map(|n| (n.as_str(), (0, 0))).collect();
    for case in &cases {
        let route = case["node"].as_str().unwrap().strip_prefix("corpus.").unwrap();
        let body = case["body"].as_str().unwrap();
        let want_status = case["answer"]["status"].as_u64().unwrap() as u16;
        let want_body = case["answer"]["body"].as_str();
        for (server, how) in [
            (&shipped, "as shipped"),
            (&engine, "engine"),
            (&strict, "compiled code"),
        ] {
            let r = c
                .post(server.url(&format!("/svc/corpus/{route}")))
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let text = r.text().await.unwrap();
            if how == "compiled code" {
                let Some(counts) = fast.get_mut(route) else { continue };
                counts.1 += 1;
                if status == 500 && text.contains("\"node_left_compiled_code\"") {
                    continue;
                }
                counts.0 += 1;
            }
            let same = status == want_status && want_body.is_none_or(|want| want == text);
            if !same {
                differences.push(format!(
                    "{route} ({how}) {body}\n    Node.js: {want_status} {}\n    svc:     {status} {text}",
                    want_body.unwrap_or("")
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (answered, all) = fast.values().fold((0, 0), |(a, b), (x, y)| (a + x, b + y));
    println!("compiled code answered {answered} of the {all} cases of compiled nodes; the engine took the rest");
    let never: Vec<&str> = fast.iter().filter(|(_, (n, _))| *n == 0).map(|(k, _)| *k).collect();
    assert!(
        never.is_empty(),
        "compiled nodes whose compiled code answered no case: {never:?}"
    );
    assert!(total >= 40, "the corpus has {total} nodes, fewer than 40");
    assert!(
        differences.is_empty(),
        "{} of {} answers differ from Node.js's:\n  {}",
        differences.len(),
        cases.len() * 3,
        differences.iter().take(40).cloned().collect::<Vec<_>>().join("\n  ")
    );
    assert!(
        compiled_nodes.len() * 2 >= total,
        "only {} of {total} corpus nodes compile to Rust; at least half should",
        compiled_nodes.len()
    );
}
