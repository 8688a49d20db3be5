//! A generated server's first build, in the target directory svc itself was built in,
//! reuses what building svc compiled (docs/performance.md, "From a clone to a first answer").
//!
//! Cargo compiles a crate again for every different set of features, profile or
//! dependencies, and every crate above it too: one feature that svc's dependency graph
//! turns on in a crate the server also links (oxc and cargo_metadata turn on several)
//! and a newcomer's first `svc build` compiles tokio, hyper and axum a second time.
//! svc-runtime turns the same features on (the end of its Cargo.toml); this test fails
//! when the two graphs drift apart, and names the crates, so that the list there is
//! kept up to date.
//!
//! It compares cargo's unit graphs (`cargo build --unit-graph`, which builds nothing):
//! a unit is what cargo compiles once, and the same crate can be two units (for build
//! scripts and procedural macros on the host, and for the program). `cargo tree` merges
//! those and cannot tell.

mod support;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::process::Command;
use support::repo;

/// One unit of a unit graph, as cargo tells its builds apart in a shared target
/// directory: a hash of its package, target, mode, features, profile and platform and
/// of its dependencies' identities in turn (hashed, not spelled out: spelled out, the
/// shared dependencies of a graph of 400 units repeat exponentially).
type Identity = u64;

/// The units of the graph cargo plans for `cargo build <args>` in `dir`, by package
/// name, with a line each for messages, leaving out every unit that builds a path
/// package or depends on one: svc's own crates are path packages, which a server
/// reaches through its `.svc/source` and svc's workspace at their paths, and cargo
/// keys them by path.
fn registry_units(dir: &Path, args: &[&str]) -> BTreeMap<String, BTreeMap<Identity, String>> {
    let units = unit_graph(dir, args);
    let mut memo = vec![None; units.len()];
    let mut by_name: BTreeMap<String, BTreeMap<Identity, String>> = BTreeMap::new();
    for (index, unit) in units.iter().enumerate() {
        if let Some(id) = identity(&units, index, &mut memo) {
            let package = package_id(unit);
            let name = package.split('@').next().unwrap();
            let line = format!(
                "{package} ({} of {}, features {})",
                unit["mode"], unit["target"]["name"], unit["features"]
            );
            by_name.entry(name.to_string()).or_default().insert(id, line);
        }
    }
    by_name
}

/// A unit's package as `name@version` (its `pkg_id` ends `…#name@version`).
fn package_id(unit: &Value) -> &str {
    unit["pkg_id"].as_str().unwrap().rsplit('#').next().unwrap()
}

/// The units of the graph cargo plans for `cargo build <args>` in `dir`.
fn unit_graph(dir: &Path, args: &[&str]) -> Vec<Value> {
    let out = svc_testkit::run_ok(
        Command::new(env!("CARGO"))
            .args(["build", "--unit-graph", "-Z", "unstable-options"])
            .args(args)
            .current_dir(dir)
            // `--unit-graph` is unstable; this asks stable cargo for it (nothing is built).
            .env("RUSTC_BOOTSTRAP", "1")
            .env_remove("CARGO_TARGET_DIR"),
    );
    let mut graph: Value = serde_json::from_str(&out).unwrap();
    match graph["units"].take() {
        Value::Array(units) => units,
        other => panic!("a unit graph without units: {other}"),
    }
}

/// `None` for a path package's unit, and for every unit that depends on one.
fn identity(units: &[Value], index: usize, memo: &mut Vec<Option<Option<Identity>>>) -> Option<Identity> {
    if let Some(known) = memo[index] {
        return known;
    }
    let unit = &units[index];
    let mut result = None;
    if unit["pkg_id"].as_str().unwrap().starts_with("registry+") {
        let mut deps = Vec::new();
        for dep in unit["dependencies"].as_array().unwrap() {
            let id = identity(units, dep["index"].as_u64().unwrap() as usize, memo);
            deps.push(id.map(|id| (id, dep["extern_crate_name"].to_string())));
        }
        if let Some(mut deps) = deps.into_iter().collect::<Option<Vec<_>>>() {
            deps.sort();
            let mut target = unit["target"].clone();
            // Where the source lies is the same crate in both graphs.
            target.as_object_mut().unwrap().remove("src_path");
            let mut hasher = DefaultHasher::new();
            for part in [
                &unit["pkg_id"],
                &target,
                &unit["mode"],
                &unit["features"],
                &unit["profile"],
                &unit["platform"],
            ] {
                part.to_string().hash(&mut hasher);
            }
            deps.hash(&mut hasher);
            result = Some(hasher.finish());
        }
    }
    memo[index] = Some(result);
    result
}

#[test]
fn generated_servers_compile_no_registry_crate_that_svc_compiled_differently() {
    // What the README's `cargo run -p svc` compiles.
    let svc = registry_units(&repo(), &["--package", "svc"]);

    let mut drifted = BTreeSet::new();
    let mut compared = 0;
    for example in ["shop", "shop-ts", "hello"] {
        let dir = support::example_copy(example, &format!("shared-build-{example}"));
        let emitted = Command::new(env!("CARGO_BIN_EXE_svc"))
            .arg("emit")
            .arg(&dir)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(
            emitted.status.success(),
            "svc emit {example}:\n{}",
            String::from_utf8_lossy(&emitted.stderr)
        );
        // What `svc build` runs (crate::build::cargo_build).
        let manifest = dir.join(".svc/server/Cargo.toml");
        let server = registry_units(&dir, &["--manifest-path", manifest.to_str().unwrap()]);
        for (name, units) in &server {
            // A crate only the server links (a dependency of the project's node crate,
            // say) is compiled for it anyway; the ones svc compiled too must be the same
            // units.
            let Some(svcs) = svc.get(name) else { continue };
            for (id, line) in units {
                if !svcs.contains_key(id) {
                    let svcs: Vec<&str> = svcs.values().map(String::as_str).collect();
                    drifted.insert(format!("{example}: {line}; svc compiles {}", svcs.join(" and ")));
                }
            }
            compared += units.len();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        compared > 200,
        "only {compared} units compared: is the graph read right?"
    );
    assert!(
        drifted.is_empty(),
        "a generated server's build would compile these crates again after svc's own \
         (align their features at the end of runtime/server/Cargo.toml, as its comment \
         says; a unit that differs only by a dependency is listed with that dependency):\n{}",
        drifted.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// svc's own build (the README's `cargo run -p svc`) compiles each crate once. Without
/// the command line's `--target`, cargo builds the host's crates (build scripts,
/// procedural macros and what they use) and svc's own as one set of units, and shares a
/// unit only where both sides ask for the same features: one feature more on either
/// side and the crate, and every crate above it, is compiled twice. This cost twenty
/// units and half a minute of a newcomer's first build (docs/performance.md, "From a
/// clone to a first answer"); runtime/macros/Cargo.toml and compiler/Cargo.toml align the two
/// sides, and this names what drifts.
#[test]
fn svc_compiles_each_crate_once() {
    let units = unit_graph(&repo(), &["--package", "svc"]);
    let mut compiled: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for unit in &units {
        // Build scripts left out: a crate compiled twice has its build script compiled
        // (and run) twice too, and is named by its library.
        if unit["mode"] != "build" || unit["target"]["kind"] == serde_json::json!(["custom-build"]) {
            continue;
        }
        let package = package_id(unit);
        let key = format!("{package} ({} {})", unit["target"]["kind"], unit["target"]["name"]);
        compiled
            .entry(key)
            .or_default()
            .push(format!("features {}", unit["features"]));
    }
    assert!(
        compiled.len() > 200,
        "only {} crates: is the graph read right?",
        compiled.len()
    );
    let twice: Vec<String> = compiled
        .into_iter()
        .filter(|(_, builds)| builds.len() > 1)
        .map(|(crate_, builds)| format!("{crate_}: {}", builds.join("; ")))
        .collect();
    assert!(
        twice.is_empty(),
        "svc's build compiles these crates more than once, with different features or \
         dependencies (turn the missing features on for the other side: \
         runtime/macros/Cargo.toml for the host, compiler/Cargo.toml for svc):\n{}",
        twice.join("\n")
    );
}
