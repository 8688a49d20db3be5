//! `svc test` as a user runs it: the real binary on a copy of an example, its server
//! built and started for real.

mod support;

use std::path::{Path, PathBuf};
use support::{assert_contains, example_copy, scratch_dir, svc};

/// A project `svc init` makes (with `args` after its directory) in a scratch directory.
fn init(label: &str, args: &[&str]) -> PathBuf {
    let dir = scratch_dir(label);
    let (code, _, stderr) = svc(&[&["init", dir.to_str().unwrap()], args].concat());
    assert_eq!(code, 0, "{stderr}");
    dir
}

/// Runs `svc test` on `dir` with `args`: every case passes, and there are `passed`.
/// Returns what it printed.
fn assert_passes(dir: &Path, args: &[&str], passed: usize) -> String {
    let (stdout, _) = svc_test(&[&[dir.to_str().unwrap()], args].concat(), 0);
    let summary = format!("test result: ok. {passed} passed; 0 failed");
    assert!(stdout.contains(&summary), "{stdout}");
    stdout
}

/// `svc test ARGS`, which must exit with `code`: what it printed on stdout and stderr.
fn svc_test(args: &[&str], code: i32) -> (String, String) {
    let (exit, stdout, stderr) = svc(&[&["test"], args].concat());
    assert_eq!(exit, code, "svc test {args:?}:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

/// A copy of `examples/hello` as committed, with its tests replaced by `tests`.
fn hello_with(name: &str, tests: &[(&str, &str)]) -> PathBuf {
    let dir = example_copy("hello", &format!("test-{name}"));
    std::fs::remove_dir_all(dir.join("tests")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    for (file, text) in tests {
        std::fs::write(dir.join("tests").join(file), text).unwrap();
    }
    dir
}

const PASSING: &str = "cases:
  - name: greets Ada
    request: { route: greeting, query: { name: Ada, tone: formal } }
    expect: { status: 200, body: { message: \"Good day, Ada.\", tone: formal } }
";

const FAILING: &str = "cases:
  - name: expects another greeting
    request: { route: greeting, query: { name: Ada } }
    expect:
      status: 201
      body: { message: \"Hello, Bob!\", tone: friendly }
      headers: { x-missing: present }
      trace: { limit: sequence-limited }
";

#[test]
fn a_failing_case_shows_what_differed_and_exits_1() {
    let dir = hello_with("failing", &[("a.yaml", PASSING), ("b.yaml", FAILING)]);
    let d = dir.to_str().unwrap();
    let (stdout, _) = svc_test(&[d], 1);
    assert_contains(
        &stdout,
        &[
            "test tests/a.yaml: greets Ada ... ok",
            "test tests/b.yaml: expects another greeting ... FAILED",
            "---- tests/b.yaml: expects another greeting (tests/b.yaml:2) ----",
            "status: expected 201, got 200",
        ],
    );
    assert!(
        stdout.contains("body.message: differs"),
        "the path of the first difference: {stdout}"
    );
    assert!(
        stdout.contains("-  \"message\": \"Hello, Bob!\",") && stdout.contains("+  \"message\": \"Hello, Ada!\","),
        "{stdout}"
    );
    assert_contains(
        &stdout,
        &[
            "header `x-missing`: expected, but absent",
            "trace `limit`: expected `sequence-limited`, took `sequence-ok`",
            "test result: FAILED. 1 passed; 1 failed",
        ],
    );

    // --filter runs only what matches; JUnit for CI systems.
    let (stdout, _) = svc_test(&[d, "--filter", "Ada", "--format", "junit"], 0);
    assert!(
        stdout.contains("<testsuites name=\"svc test\" tests=\"1\" failures=\"0\""),
        "{stdout}"
    );
    let (stdout, _) = svc_test(&[d, "--format", "junit"], 1);
    assert_contains(
        &stdout,
        &[
            "tests=\"2\" failures=\"1\"",
            "<failure message=\"status: expected 201, got 200\">tests/b.yaml:2",
        ],
    );
    let (stdout, _) = svc_test(&[d, "--format", "json"], 1);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (report["passed"].as_u64(), report["failed"].as_u64()),
        (Some(1), Some(1))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn coverage_names_each_unreached_branch_exactly() {
    // One case reaches limit→sequence-ok, greet→next and `ok`; never the 429 branch, nor
    // the node's failure.
    let dir = hello_with("coverage", &[("a.yaml", PASSING)]);
    let d = dir.to_str().unwrap();
    let json = dir.join("coverage.json");
    let (stdout, _) = svc_test(&[d, "--coverage", json.to_str().unwrap()], 0);
    assert_contains(
        &stdout,
        &[
            "flow coverage: 3 of 7 branches (42.9%)",
            "flows/greeting.yaml:12: `limit` never took `sequence-limited`",
            "flows/greeting.yaml:40: `too-many` never returned",
        ],
    );
    let coverage: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        (coverage["covered"].as_u64(), coverage["total"].as_u64()),
        (Some(3), Some(7))
    );
    let unreached: Vec<String> = coverage["routes"][0]["branches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["reached"] == false)
        .map(|b| format!("{}:{}", b["node"].as_str().unwrap(), b["output"].as_str().unwrap()))
        .collect();
    assert_eq!(
        unreached,
        [
            "limit:sequence-limited",
            "greet:on_fail",
            "too-long:returned",
            "too-many:returned"
        ]
    );

    let (_, stderr) = svc_test(&[d, "--min-coverage", "80"], 1);
    assert!(
        stderr.contains("flow coverage 42.9% is below --min-coverage 80%"),
        "{stderr}"
    );
    svc_test(&[d, "--min-coverage", "40"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A newcomer's report: `svc init`'s node could fail with a 500 (its `on_fail` was not
/// wired), yet coverage said 100 %. A node that calls `ctx.fail` has a failure branch
/// whether or not it is wired, and a run that never tried it is not covered.
#[test]
fn an_unwired_failure_is_a_branch_to_cover() {
    let dir = hello_with("unwired", &[("a.yaml", PASSING)]);
    let flow = dir.join("flows/greeting.yaml");
    let text = std::fs::read_to_string(&flow)
        .unwrap()
        .replace("    on_fail: too-long\n", "");
    let text = text[..text.find("  too-long:").unwrap()].to_string() + &text[text.find("  too-many:").unwrap()..];
    std::fs::write(&flow, text).unwrap();
    let d = dir.to_str().unwrap();
    assert_contains(
        &svc_test(&[d], 0).0,
        &[
            "flow coverage: 3 of 6 branches (50.0%)",
            "`greet` never failed (its `on_fail` is not wired: a failure answers 500",
        ],
    );
    // A case that fails covers it: the 500 it gets is the unwired failure.
    std::fs::write(
        dir.join("tests/b.yaml"),
        format!(
            "cases:\n  - name: too long a name is the route's 500\n    request: {{ route: greeting, query: {{ name: {} }} }}\n    expect: {{ status: 500, trace: {{ greet: on_fail }} }}\n",
            "a".repeat(101)
        ),
    )
    .unwrap();
    let (stdout, _) = svc_test(&[d], 0);
    assert!(stdout.contains("flow coverage: 4 of 6 branches"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_malformed_test_file_is_located_diagnostics_and_nothing_runs() {
    let dir = hello_with(
        "malformed",
        &[(
            "bad.yaml",
            "cases:\n  - name: x\n    request: { route: greting }\n    expect: { status: 99 }\n",
        )],
    );
    let (stdout, stderr) = svc_test(&[dir.to_str().unwrap()], 1);
    assert!(stdout.is_empty(), "nothing ran: {stdout}");
    assert_contains(
        &stderr,
        &[
            "error[E0105]: `status` must be an HTTP status code",
            "--> tests/bad.yaml:4:23",
            "error[E1102]: no flow is named `greting`",
            "help: did you mean `greeting`?",
            "no test was run",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_tests_svc_init_writes_pass_and_reach_every_branch() {
    let dir = init("test-init", &[]);
    let stdout = assert_passes(&dir, &["--min-coverage", "100"], 7);
    assert!(stdout.contains("flow coverage: 13 of 13 branches (100.0%)"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A TypeScript project from `svc init --lang ts`: its flow tests pass against the built
/// server. Then `on_fail` is wired: the node's `ctx.fail` takes that branch, while an
/// exception (a defect, like a Rust panic) is a 500 naming the node, whatever the flow.
#[test]
fn typescript_nodes_under_flow_tests_failures_route_and_exceptions_are_500() {
    let dir = init("test-init-ts", &["--lang", "ts", "--name", "greeting-ts"]);
    assert_passes(&dir, &["--min-coverage", "100"], 7);

    // The flow `svc init` writes wires `on_fail` to a 422.
    let node = dir.join("src/nodes/greet.ts");
    let text = std::fs::read_to_string(&node).unwrap().replace(
        "const name = ctx.inputs.name.trim();",
        "const name = ctx.inputs.name.trim();\n    if (name === \"boom\") throw new RangeError(\"no booms\");",
    );
    std::fs::write(&node, text).unwrap();
    std::fs::write(
        dir.join("tests/failures.yaml"),
        "keys:\n  dev: { owner: you }\ncases:\n\
         \x20 - name: ctx.fail takes on_fail\n\
         \x20   request: { route: greeting, key: dev, query: { name: \" \" } }\n\
         \x20   expect: { status: 422, body_contains: { error.code: INVALID_NAME }, trace: { greet: on_fail } }\n\
         \x20 - name: an exception is a 500 naming the node, not the on_fail branch\n\
         \x20   request: { route: greeting, key: dev, query: { name: boom } }\n\
         \x20   expect: { status: 500, body_contains: { error.code: internal_error, error.node: greeting-ts.greet } }\n",
    )
    .unwrap();
    assert_passes(&dir, &[], 9);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A newcomer's report: a test file without the project's required secret said "set them
/// with svc secrets set NAME", which changes nothing (each test file has a store of its
/// own). It names the test file's `secrets:` block.
#[test]
fn a_missing_secret_in_a_test_file_names_its_secrets_block() {
    let dir = example_copy("hooks", "test-secrets");
    std::fs::remove_dir_all(dir.join("tests")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("tests/a.yaml"),
        "cases:\n  - name: no key\n    request: { route: preview, params: { event_type: x } }\n    expect: { status: 401 }\n",
    )
    .unwrap();
    let (code, stdout, stderr) = svc(&["test", dir.to_str().unwrap()]);
    assert_ne!(code, 0, "{stdout}\n{stderr}");
    let all = format!("{stdout}{stderr}");
    assert_contains(&all, &["WEBHOOK_SIGNING_KEY", "`secrets:` block"]);
    assert!(!all.contains("svc secrets set"), "{all}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Field constraints at the edge, on `svc init --lang ts`'s project: a query parameter and
/// a header that break theirs are a 400 listing each violation before the node runs, and
/// a node output that breaks the constraints of its structure is the node's defect (500
/// `node_output_invalid`), whatever the flow's `on_fail`.
#[test]
fn field_constraints_hold_requests_at_the_edge_and_node_outputs_to_their_structures() {
    let dir = init("test-constraints", &["--lang", "ts", "--name", "greeting-ts"]);
    let edit = |file: &str, from: &str, to: &str| support::edit(&dir.join(file), &[(from, to)]);
    edit(
        "svc.config.ts",
        r#"{ name: "message", type: "string", required: true }"#,
        r#"{ name: "message", type: "string", required: true, maxLength: 30 }"#,
    );
    edit(
        "flows/greeting.yaml",
        "name: { type: string, required: false, description: Who to greet }",
        "name: { type: string, required: false, description: Who to greet, maxLength: 40 }",
    );
    edit(
        "flows/greeting.yaml",
        "tone: { type: \"enum-value:Tone\", required: false }",
        "tone: { type: \"enum-value:Tone\", required: false }\n  headers:\n    X-Client: { type: string, required: false, pattern: \"^[a-z]+/[0-9.]+$\" }",
    );
    std::fs::write(
        dir.join("tests/constraints.yaml"),
        format!(
            "keys:\n  dev: {{ owner: you }}\ncases:\n\
             \x20 - name: a valid request is answered\n\
             \x20   request: {{ route: greeting, key: dev, query: {{ name: Ada }}, headers: {{ x-client: web/1.2 }} }}\n\
             \x20   expect: {{ status: 200, body_contains: {{ greeting.message: \"Hello, Ada!\" }} }}\n\
             \x20 - name: a query parameter and a header that break their constraints are one 400\n\
             \x20   request: {{ route: greeting, key: dev, query: {{ name: {long} }}, headers: {{ x-client: Bad Client }} }}\n\
             \x20   expect:\n\
             \x20     status: 400\n\
             \x20     body_contains:\n\
             \x20       error.code: invalid_request\n\
             \x20       error.violation_count: 2\n\
             \x20       error.violations.0: {{ in: query, pointer: /name, constraint: maxLength, limit: 40, message: must be at most 40 characters long }}\n\
             \x20       error.violations.1.in: header\n\
             \x20       error.violations.1.pointer: /x-client\n\
             \x20       error.violations.1.constraint: pattern\n\
             \x20 - name: an output that breaks its structure's constraints is the node's 500, not on_fail\n\
             \x20   request: {{ route: greeting, key: dev, query: {{ name: {thirty} }} }}\n\
             \x20   expect: {{ status: 500, body_contains: {{ error.code: node_output_invalid, error.node: greeting-ts.greet }} }}\n",
            long = "x".repeat(41),
            thirty = "y".repeat(30),
        ),
    )
    .unwrap();
    assert_passes(&dir, &[], 10);
    let _ = std::fs::remove_dir_all(&dir);
}
