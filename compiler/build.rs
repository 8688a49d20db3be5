//! Carries the sources of the crates that projects build against (svc-sdk and what it
//! needs, svc-runtime) inside the svc binary, so that a project never names where svc's
//! source tree is, and an installed svc whose tree is gone still builds projects
//! (`src/sources.rs` writes them out).
//!
//! Each carried manifest is made self-contained, as `cargo package` does: what it inherits
//! from the workspace (`version.workspace = true`, `serde = { workspace = true }`) is
//! written out, and what only svc's own tests use (dev-dependencies, benches) is left
//! behind. A carried crate therefore loads the same wherever it lands, even inside a
//! user's cargo workspace.
//!
//! Generated: `$OUT_DIR/carried_sources.rs` with `FILES: &[(&str, &[u8])]` (path in the
//! carried tree, contents) and `HASH`, a digest of every file (the cache directory's name).
//!
//! It also embeds the Builder's web app (`builder/app/`, served by `svc dev` and
//! `svc studio`): `$OUT_DIR/builder_app.rs` with `APP: &[(&str, &[u8])]`, by path in
//! `builder/app/`. Nothing is built: the files are served as written.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// The carried crates, as paths from the repository root.
const CRATES: &[&str] = &[
    "runtime/server",
    "runtime/sdk",
    "runtime/script",
    "runtime/dylib",
    "runtime/macros",
    "runtime/types",
    "compiler/syntax",
];

/// The carried npm packages: the files `npm pack` would publish (see their `files`).
/// `svc init --lang ts` depends on `@svc/sdk` through `.svc/source/sdk-ts`.
const PACKAGES: &[(&str, &[&str])] = &[(
    "sdk-ts",
    &[
        "package.json",
        "README.md",
        "index.js",
        "index.d.ts",
        "testing.js",
        "testing.d.ts",
    ],
)];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest_dir.parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let root: Table = read(&repo.join("Cargo.toml")).parse().unwrap();
    println!("cargo::rerun-if-changed={}", repo.join("Cargo.toml").display());
    println!("cargo::rerun-if-changed={}", repo.join("Cargo.lock").display());

    // (path in the carried tree, file to include)
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for krate in CRATES {
        let manifest = repo.join(krate).join("Cargo.toml");
        println!("cargo::rerun-if-changed={}", manifest.display());
        let carried = out_dir.join(format!("{}-Cargo.toml", krate.replace('/', "-")));
        std::fs::write(&carried, self_contained(&read(&manifest), krate, &root)).unwrap();
        files.push((format!("{krate}/Cargo.toml"), carried));
        // Its sources and its build script.
        for part in ["src", "build.rs"] {
            let path = repo.join(krate).join(part);
            if path.exists() {
                println!("cargo::rerun-if-changed={}", path.display());
                collect(&repo, &path, &mut files);
            }
        }
    }
    for (package, package_files) in PACKAGES {
        for file in *package_files {
            let path = repo.join(package).join(file);
            println!("cargo::rerun-if-changed={}", path.display());
            files.push((format!("{package}/{file}"), path));
        }
    }
    files.push(("Cargo.lock".into(), repo.join("Cargo.lock")));
    files.sort();

    let mut hash: u64 = 0xcbf2_9ce4_8422_2325; // FNV-1a: the same on every toolchain.
    for (path, source) in &files {
        let bytes = std::fs::read(source).unwrap();
        for b in path.as_bytes().iter().chain([0u8].iter()).chain(&bytes) {
            hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    let mut out = table("FILES", &files);
    writeln!(out, "pub const HASH: &str = \"{hash:016x}\";").unwrap();
    std::fs::write(out_dir.join("carried_sources.rs"), out).unwrap();

    let app = repo.join("builder").join("app");
    println!("cargo::rerun-if-changed={}", app.display());
    let mut app_files = Vec::new();
    collect(&app, &app, &mut app_files);
    for (_, source) in &app_files {
        println!("cargo::rerun-if-changed={}", source.display());
    }
    std::fs::write(out_dir.join("builder_app.rs"), table("APP", &app_files)).unwrap();
}

/// `pub static NAME: &[(&str, &[u8])]`: each file's path and contents, included.
fn table(name: &str, files: &[(String, PathBuf)]) -> String {
    let mut out = format!("pub static {name}: &[(&str, &[u8])] = &[\n");
    for (path, source) in files {
        writeln!(
            out,
            "    ({path:?}, include_bytes!({:?})),",
            source.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn collect(repo: &Path, path: &Path, files: &mut Vec<(String, PathBuf)>) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for entry in entries {
            collect(repo, &entry, files);
        }
    } else if path.is_file() {
        let rel = path.strip_prefix(repo).unwrap();
        let rel: Vec<_> = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect();
        files.push((rel.join("/"), path.to_path_buf()));
    }
}

/// The manifest of the crate at `krate` with everything inherited from the workspace
/// `root` written out, and without what only svc's own tests and benchmarks use.
fn self_contained(text: &str, krate: &str, root: &Table) -> String {
    let mut manifest: Table = text.parse().unwrap();
    let workspace = root["workspace"].as_table().unwrap();
    let package_fields = workspace["package"].as_table().unwrap();
    let workspace_deps = workspace["dependencies"].as_table().unwrap();

    let package = manifest.get_mut("package").and_then(Value::as_table_mut).unwrap();
    for (key, value) in package.iter_mut() {
        if is_inherited(value) {
            *value = package_fields
                .get(key)
                .unwrap_or_else(|| panic!("{krate}: workspace.package.{key} is not set"))
                .clone();
        }
    }
    for dev_only in ["dev-dependencies", "bench", "test", "example", "lints"] {
        manifest.remove(dev_only);
    }
    if let Some(deps) = manifest.get_mut("dependencies").and_then(Value::as_table_mut) {
        for (name, dep) in deps.iter_mut() {
            if is_inherited(dep) {
                let from = workspace_deps
                    .get(name)
                    .unwrap_or_else(|| panic!("{krate}: workspace.dependencies.{name} is not set"));
                *dep = Value::Table(inherit(dep.as_table().unwrap(), from, krate));
            }
        }
    }
    format!(
        "# {krate} of svc, as the svc binary carries it (written by svc; do not edit).\n\n{}",
        toml::to_string(&manifest).unwrap()
    )
}

fn is_inherited(value: &Value) -> bool {
    value
        .as_table()
        .and_then(|t| t.get("workspace"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// A dependency `{ workspace = true, features = [...] }` of `krate` resolved against the
/// workspace's entry: its features added to the workspace's, a path made relative to the
/// crate.
fn inherit(member: &Table, workspace: &Value, krate: &str) -> Table {
    let mut dep = match workspace {
        Value::String(version) => Table::from_iter([("version".to_string(), Value::String(version.clone()))]),
        Value::Table(t) => t.clone(),
        other => panic!("{krate}: unexpected workspace dependency {other}"),
    };
    if let Some(path) = dep.get("path").and_then(Value::as_str) {
        let depth = krate.split('/').count();
        let relative = format!("{}{path}", "../".repeat(depth));
        dep.insert("path".into(), Value::String(relative));
    }
    for (key, value) in member {
        match key.as_str() {
            "workspace" => {}
            "features" => {
                let mut features = dep
                    .get("features")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for f in value.as_array().unwrap() {
                    if !features.contains(f) {
                        features.push(f.clone());
                    }
                }
                dep.insert("features".into(), Value::Array(features));
            }
            _ => {
                dep.insert(key.clone(), value.clone());
            }
        }
    }
    dep
}
