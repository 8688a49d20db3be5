//! The node crate's `Cargo.toml`: its package name, its dependencies (none that the
//! contract forbids; workspace ones looked up), and the SDK reached through `.svc/source`.

use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::{FileId, Span};
use crate::vfs::Vfs;
use std::path::Path;

/// Crates that give node code sockets, files, processes or databases directly.
pub const FORBIDDEN_CRATES: &[&str] = &[
    "reqwest",
    "hyper",
    "hyper-util",
    "ureq",
    "isahc",
    "surf",
    "curl",
    "attohttpc",
    "socket2",
    "mio",
    "tokio-postgres",
    "postgres",
    "rusqlite",
    "sqlx",
    "diesel",
    "mysql",
    "mysql_async",
    "redis",
    "mongodb",
    "sled",
    "rocksdb",
    "memmap2",
    "libc",
    "nix",
    "tempfile",
    "walkdir",
    "notify",
];

/// Reads the package name and reports forbidden dependencies.
/// `[workspace.dependencies]` of the workspace the node crate belongs to: its own manifest
/// when it declares `[workspace]`, else the first of up to eight parent directories whose
/// `Cargo.toml` does (as cargo searches). Empty when there is none.
pub(super) fn workspace_dependencies(vfs: &dyn Vfs, dir: &Path, own_manifest: &str) -> toml::Table {
    let deps_of = |text: &str| -> Option<toml::Table> {
        let value: toml::Table = text.parse().ok()?;
        let workspace = value.get("workspace")?.as_table()?;
        Some(
            workspace
                .get("dependencies")
                .and_then(|d| d.as_table())
                .cloned()
                .unwrap_or_default(),
        )
    };
    if let Some(deps) = deps_of(own_manifest) {
        return deps;
    }
    for ancestor in dir.ancestors().skip(1).take(8) {
        if let Ok(text) = vfs.read(&ancestor.join("Cargo.toml"))
            && let Some(deps) = deps_of(&text)
        {
            return deps;
        }
    }
    toml::Table::new()
}

/// Every dependency table a build reads: `[dependencies]`, `[build-dependencies]` and
/// both under each `[target.'cfg(…)']` (dev-dependencies only build tests, which are not
/// deployed).
pub(super) fn dependency_tables(manifest: &toml::Table) -> Vec<&toml::Table> {
    let targets = manifest.get("target").and_then(|t| t.as_table());
    std::iter::once(manifest)
        .chain(
            targets
                .into_iter()
                .flat_map(|t| t.values().filter_map(|t| t.as_table())),
        )
        .flat_map(|t| {
            ["dependencies", "build-dependencies", "build_dependencies"]
                .into_iter()
                .filter_map(|section| t.get(section).and_then(|d| d.as_table()))
        })
        .collect()
}

/// The crates.io package a dependency entry names: its `package` key (a rename), or for
/// `{ workspace = true }` the workspace's entry's, or the key itself.
pub(super) fn dependency_package<'a>(key: &'a str, entry: &'a toml::Value, workspace_deps: &'a toml::Table) -> &'a str {
    if let Some(package) = entry.get("package").and_then(|p| p.as_str()) {
        return package;
    }
    if entry.get("workspace").and_then(|w| w.as_bool()) == Some(true)
        && let Some(package) = workspace_deps
            .get(key)
            .and_then(|w| w.get("package"))
            .and_then(|p| p.as_str())
    {
        return package;
    }
    key
}

pub(super) fn read_manifest(
    text: &str,
    file: FileId,
    workspace_deps: &toml::Table,
    diags: &mut Diagnostics,
) -> Option<String> {
    let value: toml::Table = match text.parse() {
        Ok(v) => v,
        Err(e) => {
            let (line, col) = e.span().map(|r| line_col(text, r.start)).unwrap_or((1, 1));
            diags.push(
                Diagnostic::new(
                    Code::Io,
                    Span::new(file, line, col, 1),
                    format!("invalid Cargo.toml: {}", e.message()),
                )
                .label("here")
                .help("fix the TOML syntax"),
            );
            return None;
        }
    };
    let name = value
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str());
    let Some(name) = name else {
        diags.push(
            Diagnostic::new(
                Code::Io,
                Span::file_start(file),
                "the node crate's Cargo.toml has no `[package] name`",
            )
            .label("here")
            .help("add `[package]` with a `name`"),
        );
        return None;
    };
    // The generated server depends on these by name: a node crate with one of them as its
    // own name could not be built beside them.
    if ["svc-runtime", "svc-sdk"].contains(&name.replace('_', "-").as_str()) {
        let (line, col) = package_name_place(text);
        diags.push(
            Diagnostic::new(
                Code::InvalidNodeDefinition,
                Span::new(file, line, col, 4),
                format!("the node crate cannot be named `{name}`"),
            )
            .label("the name of a crate every generated server depends on")
            .help("name the node crate after the project, for example `<project>-nodes`"),
        );
    }
    for deps in dependency_tables(&value) {
        for dep in deps.keys() {
            let package = dependency_package(dep, &deps[dep], workspace_deps);
            // crates.io treats `-` and `_` in names as the same.
            let normalized = package.replace('_', "-");
            if FORBIDDEN_CRATES.iter().any(|c| c.replace('_', "-") == normalized) {
                let (line, col) = dependency_place(text, dep);
                diags.push(
                    Diagnostic::new(Code::ForbiddenDependency, Span::new(file, line, col, dep.len() as u32), format!("node code may not depend on `{package}`"))
                        .label("forbidden dependency")
                        .help("code nodes run in a Worker-style runtime without sockets, files or databases (spec §4.3); use `ctx.fetch` for HTTP and `ctx.secret` for credentials"),
                );
            }
        }
    }
    check_sdk_dependency(text, &value, file, diags);
    Some(name.to_string())
}

/// The link, relative to the project directory, that every svc command points at the
/// running svc's own copy of its crates (see the compiler's `sources` module).
pub const SOURCE_LINK: &str = ".svc/source";

/// Where a node crate finds svc-sdk: inside [`SOURCE_LINK`].
pub const SDK_PATH: &str = ".svc/source/runtime/sdk";

/// A node crate that reaches svc-sdk any other way (a path out of the project: a checkout
/// of svc, an older install; or a registry version) gets svc's crates from another copy
/// than the generated server, which takes them from `.svc/source`: cargo refuses the two
/// ("package collision in the lockfile"), so `svc check` refuses it first.
pub(super) fn check_sdk_dependency(text: &str, manifest: &toml::Table, file: FileId, diags: &mut Diagnostics) {
    let Some(deps) = manifest.get("dependencies").and_then(|d| d.as_table()) else {
        return;
    };
    for (key, entry) in deps {
        if dependency_package(key, entry, &toml::Table::new()).replace('_', "-") != "svc-sdk" {
            continue;
        }
        let path = entry.get("path").and_then(|p| p.as_str());
        if path.is_some_and(|p| p.trim_end_matches('/') == SDK_PATH) {
            continue;
        }
        let (line, col) = dependency_place(text, key);
        let what = match path {
            Some(p) => format!("svc-sdk comes from `{p}`, outside the project's `.svc/source`"),
            None => "svc-sdk does not come from the project's `.svc/source`".to_string(),
        };
        diags.push(
            Diagnostic::new(Code::SdkOutsideProject, Span::new(file, line, col, key.len() as u32), what)
                .label("another copy of svc's crates than the server's: cargo cannot build both")
                .help(format!(
                    "write `svc-sdk = {{ path = \"{SDK_PATH}\" }}`: svc links `.svc/source` to its own crates in every command, so the project builds wherever it is moved or cloned"
                )),
        );
    }
}

/// Where `[package]`'s `name` is written (line and column of `name`); line 1 if not found.
pub(super) fn package_name_place(text: &str) -> (u32, u32) {
    let mut in_package = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            in_package = trimmed.trim_end() == "[package]";
        } else if in_package
            && trimmed
                .strip_prefix("name")
                .is_some_and(|r| r.trim_start().starts_with('='))
        {
            return (i as u32 + 1, (line.len() - trimmed.len()) as u32 + 1);
        }
    }
    (1, 1)
}

/// Where the dependency `dep` is declared: the line `dep = …` (or `"dep" = …`) or the
/// header `[….dependencies.dep]`, and the column of the name; line 1 if neither is found.
pub(super) fn dependency_place(text: &str, dep: &str) -> (u32, u32) {
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = (line.len() - trimmed.len()) as u32;
        let rest = trimmed.strip_prefix(dep).or_else(|| {
            trimmed
                .strip_prefix('"')
                .and_then(|t| t.strip_prefix(dep))
                .and_then(|t| t.strip_prefix('"'))
        });
        if rest.is_some_and(|r| r.trim_start().starts_with(['=', '.'])) {
            return (i as u32 + 1, indent + 1);
        }
        if trimmed.starts_with('[') && trimmed.trim_end().ends_with(&format!(".{dep}]")) {
            let col = trimmed.rfind(dep).unwrap_or(0) as u32;
            return (i as u32 + 1, indent + col + 1);
        }
    }
    (1, 1)
}

pub(super) fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) as u32 + 1;
    (line, col)
}
