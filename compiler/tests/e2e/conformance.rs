//! Every example's server against its own OpenAPI document, by schemathesis
//! (`st run --checks all`): at least 1,000 generated requests each, valid and invalid,
//! and no check may fail. This holds `svc openapi` and the generated code to one another:
//! what the document calls valid (field constraints included) is accepted, what it calls
//! invalid is refused with a 4xx, every answer has a documented status, content type,
//! headers and body, and nothing answers 500.
//!
//! Each example runs as a copy whose Rate Limit nodes allow a million requests a window:
//! otherwise schemathesis would test the limiter (which the flow tests cover) instead of
//! the logic behind it. Its declared secrets are set, and it is called with a valid key.
//!
//! A Return JSON status that a flow answers when a code node refuses a request by its own
//! rules (`ctx.fail` routed by `on_fail`: an unknown coupon is a 422) is a documented
//! refusal of valid data, so `positive_data_acceptance` accepts those statuses; nothing
//! the server answers by itself (400 for a constraint, 413, 500) is exempt.

use crate::harness::{project_binary, repo, start_binary};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Requests per example, at least.
const MIN_REQUESTS: usize = 1_000;

/// Where `scripts/setup.sh` installs schemathesis (a virtual environment of its own, so
/// that its dependencies do not meet the validators' in the system's Python).
fn schemathesis() -> PathBuf {
    let installed = repo().join("target/tools/schemathesis/bin/st");
    if installed.exists() {
        return installed;
    }
    match Command::new("st").arg("--version").output() {
        Ok(out) if out.status.success() => PathBuf::from("st"),
        _ => {
            panic!("schemathesis is not installed: run scripts/setup.sh (it installs it in target/tools/schemathesis)")
        }
    }
}

/// A copy of `examples/<example>` whose rate limits are a million a window.
fn unlimited_copy(example: &str) -> PathBuf {
    let dir = crate::support::example_copy(example, &format!("conformance-{example}"));
    let limit = regex::Regex::new(r"\blimit: \d+").unwrap();
    for entry in std::fs::read_dir(dir.join("flows")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, limit.replace_all(&text, "limit: 1000000").as_ref()).unwrap();
    }
    dir
}

fn svc(args: &[&str]) -> String {
    svc_testkit::run_ok(Command::new(env!("CARGO_BIN_EXE_svc")).args(args))
}

/// The statuses each operation's flow answers after a code node's `on_fail`, as
/// schemathesis configuration: `[[operations]]` tables for `positive_data_acceptance`.
fn refusals_config(document: &serde_json::Value) -> String {
    let mut config = String::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let refusals: Vec<&str> = op["responses"]
                .as_object()
                .unwrap()
                .iter()
                .filter(|(_, r)| {
                    r["description"]
                        .as_str()
                        .is_some_and(|d| d.contains("after a code node fails"))
                })
                .map(|(status, _)| status.as_str())
                .collect();
            if refusals.is_empty() {
                continue;
            }
            let mut statuses = vec!["2xx", "401", "403", "404", "409", "429"];
            statuses.extend(refusals);
            let list = statuses
                .iter()
                .map(|s| format!("\"{s}\""))
                .collect::<Vec<_>>()
                .join(", ");
            config.push_str(&format!(
                "[[operations]]\ninclude-path = \"{path}\"\ninclude-method = \"{}\"\nchecks.positive_data_acceptance.expected-statuses = [{list}]\n\n",
                method.to_uppercase()
            ));
        }
    }
    config
}

fn secrets_of(dir: &Path) -> Vec<String> {
    let config = svc_compiler::project::Project::config_only(dir).expect("the example's config reads");
    config.assets.secrets.iter().map(|s| s.name.clone()).collect()
}

fn conforms(example: &str) {
    let st = schemathesis();
    let dir = unlimited_copy(example);
    let bin = project_binary(&format!("{example}-unlimited"), &dir);
    let secrets = secrets_of(&dir);
    let (server, key) = start_binary(example, &bin, &[], &[], |s| {
        for name in &secrets {
            s.secret(name, "conformance-secret-value");
        }
        s.key("conformance", "alice")
    });
    let document_path = dir.join("openapi.json");
    svc(&["openapi", dir.to_str().unwrap(), "-o", document_path.to_str().unwrap()]);
    let document: serde_json::Value = serde_json::from_slice(&std::fs::read(&document_path).unwrap()).unwrap();
    let config = dir.join("schemathesis.toml");
    std::fs::write(&config, refusals_config(&document)).unwrap();

    // An operation without inputs has few distinct requests: the others make up the count.
    let with_inputs = document["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .filter(|op| op.get("parameters").is_some() || op.get("requestBody").is_some())
        .count();
    // Two runs: every phase in both modes (the coverage phase sends the boundary values
    // of every constraint; negative fuzzing is slow to generate, so 100 an operation),
    // then valid requests, fast to generate, up to the count.
    let runs = [
        ("all", "examples,coverage,fuzzing", 100),
        ("positive", "fuzzing", MIN_REQUESTS.div_ceil(with_inputs.max(1)) + 50),
    ];
    let mut generated = 0;
    for (mode, phases, per_operation) in runs {
        let out = Command::new(&st)
            .arg("--config-file")
            .arg(&config)
            .arg("run")
            .arg(&document_path)
            .args([
                "--url",
                server.base.as_str(),
                "--checks",
                "all",
                "--continue-on-failure",
            ])
            .args(["--mode", mode, "--phases", phases])
            .args([
                "--max-examples",
                &per_operation.to_string(),
                "--seed",
                "1",
                "--no-color",
            ])
            .args([
                "-H",
                &format!("X-API-Key: {key}"),
                "-H",
                &format!("Authorization: Bearer {key}"),
            ])
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .output()
            .expect("run schemathesis");
        let report = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "schemathesis ({mode}) found failures in `{example}`:\n{report}"
        );
        // "Test cases:\n  1234 generated, 1234 passed"
        generated += report
            .lines()
            .skip_while(|l| !l.starts_with("Test cases:"))
            .nth(1)
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("no test count in the report:\n{report}"));
    }
    assert!(
        generated >= MIN_REQUESTS,
        "`{example}`: {generated} requests, fewer than {MIN_REQUESTS}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shop_conforms_to_its_openapi_document() {
    conforms("shop");
}

#[test]
fn shop_ts_conforms_to_its_openapi_document() {
    conforms("shop-ts");
}

#[test]
fn hello_conforms_to_its_openapi_document() {
    conforms("hello");
}

#[test]
fn helpdesk_conforms_to_its_openapi_document() {
    conforms("helpdesk");
}

#[test]
fn hooks_conforms_to_its_openapi_document() {
    conforms("hooks");
}
