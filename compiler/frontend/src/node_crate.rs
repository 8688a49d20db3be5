//! Reads a node crate (the project's custom code) from source, without compiling or
//! running it: the node definitions and where they live, the secrets the code reads,
//! and anything it uses that the runtime contract forbids (spec §4.3).
//!
//! The module tree is walked from `src/lib.rs` the way rustc does (`mod x;` →
//! `x.rs` or `x/mod.rs`, `#[path]` honoured); `#[cfg(test)]` modules are skipped
//! because tests are not deployed.

use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::node_def::{self, DefErrorKind, NodeDef};
use crate::source::{FileId, SourceFile, SourceMap, Span, display_path};
use crate::vfs::{ReadError, Vfs};
use proc_macro2::{TokenStream, TokenTree};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use svc_types::NodeManifest;
use syn::spanned::Spanned;
use syn::visit::Visit;

/// A code node found in the crate.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub manifest: NodeManifest,
    pub spans: NodeSourceSpans,
    pub file: FileId,
    /// Whether the node may read `ctx.request` (conservatively: any `.request` in its
    /// module, or `ctx` handed to another function). When not, generated code does not
    /// build the request metadata for it.
    pub uses_request: bool,
    /// Where its code is, and in which language.
    pub code: NodeCode,
}

/// Where a node's code is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeCode {
    /// A `define_code_function_node!` of the node crate, at this module path from the
    /// crate root: `["nodes", "price_order"]`.
    Rust { module_path: Vec<String> },
    /// The default export of a TypeScript module, named by its path in the project:
    /// `src/nodes/price-order.ts`.
    TypeScript { module: String },
}

/// Where a node's parts are written.
#[derive(Debug, Clone)]
pub struct NodeSourceSpans {
    pub definition: Span,
    pub node_key: Span,
    /// Per input pin, in order: the id and the builder expression.
    pub inputs: Vec<(Span, Span)>,
    pub outputs: Vec<(Span, Span)>,
}

impl NodeSourceSpans {
    fn new(file: FileId, def: &NodeDef) -> Self {
        let convert = |pins: &[(proc_macro2::Span, proc_macro2::Span)]| {
            pins.iter()
                .map(|(a, b)| (Span::from_proc_macro(file, *a), Span::from_proc_macro(file, *b)))
                .collect()
        };
        NodeSourceSpans {
            definition: Span::from_proc_macro(file, def.spans.definition),
            node_key: Span::from_proc_macro(file, def.spans.node_key),
            inputs: convert(&def.spans.inputs),
            outputs: convert(&def.spans.outputs),
        }
    }
}

/// A `ctx.secret("NAME")` call.
#[derive(Debug, Clone)]
pub struct SecretUse {
    pub name: String,
    pub span: Span,
}

/// What was read from the node crate.
#[derive(Debug, Clone, Default)]
pub struct NodeCrate {
    pub dir: PathBuf,
    /// The package name from `Cargo.toml`.
    pub package_name: String,
    /// The package version from `Cargo.toml` (a literal one; not one inherited from a
    /// workspace), which the generated server takes as its own.
    pub version: Option<String>,
    /// The name Rust code uses for the crate (`-` replaced by `_`).
    pub crate_name: String,
    pub nodes: Vec<NodeInfo>,
    pub secrets: Vec<SecretUse>,
    /// Where the crate root calls `include_assets!` (which makes `crate::assets`), if it does.
    pub include_assets: Option<Span>,
    pub files: Vec<FileId>,
    /// `.rs` files under `src/` that no `mod` reaches, with the node key each defines:
    /// a node written there is not part of the crate (a newcomer forgets `pub mod`).
    pub outside_crate: Vec<OutsideFile>,
    /// Whether a file of the crate could not be read or parsed, or a node definition in
    /// it was refused (already reported): its nodes are unknown, so flows that use them
    /// get no second, misleading error.
    pub unreadable: bool,
}

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

/// Module paths node code may not use, and why.
const FORBIDDEN_PATHS: &[(&[&str], &str)] = &[
    (&["std", "env"], "the process environment"),
    (&["std", "fs"], "the filesystem"),
    (&["std", "net"], "sockets"),
    (&["std", "process"], "processes"),
    (&["std", "os"], "OS-specific handles"),
    (&["std", "thread"], "threads"),
    (&["std", "path"], "filesystem paths"),
    (&["tokio", "fs"], "the filesystem"),
    (&["tokio", "net"], "sockets"),
    (&["tokio", "process"], "processes"),
    (&["tokio", "signal"], "process signals"),
    (&["async_std"], "the filesystem and sockets"),
];

/// Macros node code may not use: they read files or the environment at compile time.
const FORBIDDEN_MACROS: &[(&str, &str)] = &[
    (
        "env",
        "reads the build environment into the binary; read configuration with `ctx.secret` or `ctx.env`",
    ),
    (
        "option_env",
        "reads the build environment into the binary; read configuration with `ctx.secret` or `ctx.env`",
    ),
    ("include", "includes a file from disk"),
    (
        "include_str",
        "includes a file from disk; put the data in the code or in a secret",
    ),
    (
        "include_bytes",
        "includes a file from disk; put the data in the code or in a secret",
    ),
];

/// A source file of the node crate's directory that is not one of its modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideFile {
    /// As users see it: `src/nodes/hello.rs`.
    pub path: String,
    /// Where its `mod` line belongs: `src/nodes/mod.rs`.
    pub parent: String,
    /// The module name to declare: `hello`.
    pub module: String,
    /// The `node_key: "…"` the file defines, if it defines one.
    pub node_key: Option<String>,
}

/// The `.rs` files under `src/` that are not among `read` (the crate's modules).
fn files_outside_crate(vfs: &dyn Vfs, root: &Path, src: &Path, read: &[PathBuf]) -> Vec<OutsideFile> {
    let mut out = Vec::new();
    for path in vfs.files_under(src) {
        if path.extension().is_none_or(|e| e != "rs") || read.contains(&path) {
            continue;
        }
        let dir = path.parent().unwrap_or(src);
        let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        let text = vfs.read(&path).unwrap_or_default();
        let node_key = text.find("node_key").and_then(|at| {
            let rest = &text[at..];
            let open = rest.find('"')?;
            let close = rest[open + 1..].find('"')?;
            Some(rest[open + 1..open + 1 + close].to_string())
        });
        let (parent, module) = if stem == "mod" {
            let dir_name = dir
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let up = dir.parent().unwrap_or(src);
            (parent_module(up, src), dir_name)
        } else {
            (parent_module(dir, src), stem)
        };
        out.push(OutsideFile {
            path: display_path(root, &path),
            parent: display_path(root, &PathBuf::from(parent)),
            module,
            node_key,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The file that declares the modules of `dir`: `src/lib.rs` for `src`, else
/// `dir/mod.rs`.
fn parent_module(dir: &Path, src: &Path) -> String {
    if dir == src {
        src.join("lib.rs").to_string_lossy().into_owned()
    } else {
        dir.join("mod.rs").to_string_lossy().into_owned()
    }
}

/// Reads the node crate at `dir` (the directory of its `Cargo.toml`).
pub fn load(
    vfs: &dyn Vfs,
    root: &Path,
    dir: &Path,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> Option<NodeCrate> {
    let manifest_path = dir.join("Cargo.toml");
    let manifest_text = match vfs.read(&manifest_path) {
        Ok(text) => text,
        Err(ReadError::Missing) => return None,
        Err(ReadError::Unreadable(bad)) => {
            bad.report(&display_path(root, &manifest_path), manifest_path, sources, diags);
            return None;
        }
    };
    let manifest_file = sources.add(SourceFile::new(
        display_path(root, &manifest_path),
        Some(manifest_path.clone()),
        manifest_text.clone(),
    ));
    let workspace_deps = workspace_dependencies(vfs, dir, &manifest_text);
    let package_name = read_manifest(&manifest_text, manifest_file, &workspace_deps, diags)?;
    let version = manifest_text
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("package")?.get("version")?.as_str().map(str::to_string));
    let mut krate = NodeCrate {
        dir: dir.to_path_buf(),
        crate_name: package_name.replace('-', "_"),
        package_name,
        version,
        ..Default::default()
    };
    let lib = dir.join("src").join("lib.rs");
    let text = match vfs.read(&lib) {
        Ok(text) => text,
        Err(ReadError::Unreadable(bad)) => {
            bad.report(&display_path(root, &lib), lib, sources, diags);
            krate.unreadable = true;
            return Some(krate);
        }
        Err(ReadError::Missing) => {
            diags.push(
            Diagnostic::new(Code::Io, Span::file_start(manifest_file), "the node crate has no `src/lib.rs`")
                .label("this crate")
                .help("code nodes live in a library crate: create `src/lib.rs` with `svc_sdk::include_assets!();` and `pub mod nodes;`"),
        );
            return Some(krate);
        }
    };
    let mut walker = Walker {
        vfs,
        root,
        sources,
        diags,
        krate: &mut krate,
    };
    walker.file(&lib, text, Vec::new(), true);
    let read: Vec<PathBuf> = krate
        .files
        .iter()
        .filter_map(|f| sources.get(*f).disk_path.clone())
        .collect();
    krate.outside_crate = files_outside_crate(vfs, root, &dir.join("src"), &read);
    // Every span has been converted to a `Span`. proc-macro2 keeps the text of each
    // parsed file in a thread-local map that only grows; clear it, or a long-running
    // `svc dev` that re-checks on every change would keep every version of every file.
    proc_macro2::extra::invalidate_current_thread_spans();
    Some(krate)
}

/// Reads the package name and reports forbidden dependencies.
/// `[workspace.dependencies]` of the workspace the node crate belongs to: its own manifest
/// when it declares `[workspace]`, else the first of up to eight parent directories whose
/// `Cargo.toml` does (as cargo searches). Empty when there is none.
fn workspace_dependencies(vfs: &dyn Vfs, dir: &Path, own_manifest: &str) -> toml::Table {
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
fn dependency_tables(manifest: &toml::Table) -> Vec<&toml::Table> {
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
fn dependency_package<'a>(key: &'a str, entry: &'a toml::Value, workspace_deps: &'a toml::Table) -> &'a str {
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

fn read_manifest(text: &str, file: FileId, workspace_deps: &toml::Table, diags: &mut Diagnostics) -> Option<String> {
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
fn check_sdk_dependency(text: &str, manifest: &toml::Table, file: FileId, diags: &mut Diagnostics) {
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
fn package_name_place(text: &str) -> (u32, u32) {
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
fn dependency_place(text: &str, dep: &str) -> (u32, u32) {
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

fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) as u32 + 1;
    (line, col)
}

struct Walker<'a> {
    vfs: &'a dyn Vfs,
    root: &'a Path,
    sources: &'a mut SourceMap,
    diags: &'a mut Diagnostics,
    krate: &'a mut NodeCrate,
}

impl Walker<'_> {
    /// Reads one file of the module tree. `public` says whether every module on the way
    /// here is `pub` (a node must be reachable from the generated server crate).
    fn file(&mut self, path: &Path, text: String, module_path: Vec<String>, public: bool) {
        let file = self.sources.add(SourceFile::new(
            display_path(self.root, path),
            Some(path.to_path_buf()),
            text.clone(),
        ));
        self.krate.files.push(file);
        let ast = match syn::parse_file(&text) {
            Ok(ast) => ast,
            Err(e) => {
                let span = Span::from_proc_macro(file, e.span());
                self.diags.push(
                    Diagnostic::new(Code::RustSyntax, span, format!("cannot parse Rust: {e}"))
                        .label("here")
                        .help("fix the syntax error; `cargo check` in the node crate shows rustc's view"),
                );
                self.krate.unreadable = true;
                return;
            }
        };
        if module_path.is_empty() {
            self.krate.include_assets = ast.items.iter().find_map(|i| match i {
                syn::Item::Macro(m) => {
                    let name = &m.mac.path.segments.last()?.ident;
                    // The macro's name through its `!`: `include_assets!`.
                    (name == "include_assets").then(|| {
                        let span = Span::from_proc_macro(file, name.span());
                        Span::new(file, span.line, span.column, span.len + 1)
                    })
                }
                _ => None,
            });
        }
        scan_file(&ast, file, &mut self.krate.secrets, self.diags);
        // Module search directory for `mod x;` items in this file.
        let dir = module_dir(path, module_path.is_empty());
        self.items(&ast.items, file, &dir, module_path, public);
    }

    fn items(&mut self, items: &[syn::Item], file: FileId, dir: &Path, module_path: Vec<String>, public: bool) {
        let defs: Vec<&syn::ItemMacro> = items
            .iter()
            .filter_map(|i| match i {
                syn::Item::Macro(m)
                    if m.mac
                        .path
                        .segments
                        .last()
                        .is_some_and(|s| s.ident == node_def::MACRO_NAME) =>
                {
                    Some(m)
                }
                _ => None,
            })
            .collect();
        for (i, m) in defs.iter().enumerate() {
            if i > 0 {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidNodeDefinition,
                        Span::from_proc_macro(file, m.mac.path.span()),
                        "a module defines more than one node",
                    )
                    .label("second node in this module")
                    .help("put each node in its own module (a node module exports exactly one definition, spec §2.2)"),
                );
                continue;
            }
            self.definition(m, file, &module_path, public, items_read_request(items));
        }
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            if is_cfg_test(&m.attrs) {
                continue;
            }
            let name = m.ident.to_string().trim_start_matches("r#").to_string();
            let is_pub = matches!(m.vis, syn::Visibility::Public(_));
            let mut child_path = module_path.clone();
            child_path.push(name.clone());
            match &m.content {
                Some((_, inner)) => {
                    let child_dir = dir.join(&name);
                    self.items(inner, file, &child_dir, child_path, public && is_pub);
                }
                None => {
                    let path = path_attr(&m.attrs);
                    if path.is_none() && !name.is_ascii() {
                        // rustc parses the name but will not look for its file (E0754),
                        // so a project that checked would not build.
                        self.diags.push(
                            Diagnostic::new(
                                Code::RustSyntax,
                                Span::from_proc_macro(file, m.ident.span()),
                                format!("rustc does not load a file for the non-ASCII module name `{name}`"),
                            )
                            .label("module declared here")
                            .help(format!(
                                "give the module an ASCII name, or name its file with `#[path = \"{name}.rs\"]`"
                            )),
                        );
                        continue;
                    }
                    let candidates = match path {
                        Some(p) => vec![dir.join(p)],
                        None => vec![dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")],
                    };
                    let found = candidates.iter().find_map(|c| match self.vfs.read(c) {
                        Err(ReadError::Missing) => None,
                        read => Some((c.clone(), read)),
                    });
                    match found {
                        Some((path, Ok(text))) => self.file(&path, text, child_path, public && is_pub),
                        Some((path, Err(ReadError::Unreadable(bad)))) => {
                            bad.report(&display_path(self.root, &path), path, self.sources, self.diags);
                            self.krate.unreadable = true;
                        }
                        Some((_, Err(ReadError::Missing))) | None => self.diags.push(
                            Diagnostic::new(
                                Code::Io,
                                Span::from_proc_macro(file, m.ident.span()),
                                format!("cannot find the file of module `{name}`"),
                            )
                            .label("declared here")
                            .help(format!("create `{}`", display_path(self.root, &candidates[0]))),
                        ),
                    }
                }
            }
        }
    }

    fn definition(
        &mut self,
        m: &syn::ItemMacro,
        file: FileId,
        module_path: &[String],
        public: bool,
        uses_request: bool,
    ) {
        match node_def::parse_definition(&m.mac) {
            Ok(def) => {
                if !public {
                    self.diags.push(
                        Diagnostic::new(Code::NodeNotPublic, Span::from_proc_macro(file, m.mac.path.span()), format!("node `{}` is in a private module", def.manifest.node_key))
                            .label("not reachable from outside the crate")
                            .help(format!("the generated server calls nodes from another crate: declare each module on the way as `pub mod` (here `{}`)", module_path.join("::"))),
                    );
                }
                self.krate.nodes.push(NodeInfo {
                    spans: NodeSourceSpans::new(file, &def),
                    uses_request: uses_request || may_read_request(&m.mac),
                    manifest: def.manifest,
                    file,
                    code: NodeCode::Rust {
                        module_path: module_path.to_vec(),
                    },
                });
            }
            Err(errors) => {
                // Reported here, once: the flows that call this node get no second
                // "unknown node key" error for it.
                self.krate.unreadable = true;
                for e in errors {
                    let code = match e.kind {
                        DefErrorKind::InvalidNodeKey => Code::InvalidNodeKey,
                        DefErrorKind::Invalid => Code::InvalidNodeDefinition,
                    };
                    self.diags.push(
                        Diagnostic::new(code, Span::from_proc_macro(file, e.span), e.message)
                            .label("in this node definition")
                            .help(e.hint),
                    );
                }
            }
        }
    }
}

/// Whether the run closure of a node definition may read `ctx.request`: a `.request`
/// field access in it, or the context handed to another function (which might read it).
fn may_read_request(mac: &syn::Macro) -> bool {
    let Ok(def) = mac.parse_body::<node_def::NodeDefSyntax>() else {
        return true;
    };
    let Some(run) = &def.run else { return false };
    let ctx_name = match run {
        syn::Expr::Closure(c) => match c.inputs.first() {
            Some(syn::Pat::Ident(p)) => Some(p.ident.to_string()),
            Some(syn::Pat::Type(t)) => match &*t.pat {
                syn::Pat::Ident(p) => Some(p.ident.to_string()),
                _ => None,
            },
            _ => None,
        },
        // `run: some_fn`: the function's body is checked with the module's other items.
        _ => return false,
    };
    let mut v = RequestReads {
        found: false,
        ctx: ctx_name,
    };
    v.visit_expr(run);
    v.found
}

/// Whether items other than node definitions read a `.request` field (helper functions
/// that take the run context).
fn items_read_request(items: &[syn::Item]) -> bool {
    let mut v = RequestReads {
        found: false,
        ctx: None,
    };
    for item in items {
        if !matches!(item, syn::Item::Macro(_)) {
            v.visit_item(item);
        }
    }
    v.found
}

struct RequestReads {
    found: bool,
    /// The run closure's context parameter: passing it to a call counts as a read.
    ctx: Option<String>,
}

impl RequestReads {
    fn is_ctx(&self, e: &syn::Expr) -> bool {
        let e = match e {
            syn::Expr::Reference(r) => &*r.expr,
            other => other,
        };
        matches!((e, &self.ctx), (syn::Expr::Path(p), Some(name)) if p.path.is_ident(name.as_str()))
    }
}

impl<'ast> Visit<'ast> for RequestReads {
    fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
        if matches!(&f.member, syn::Member::Named(n) if n == "request") {
            self.found = true;
        }
        syn::visit::visit_expr_field(self, f);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if c.args.iter().any(|a| self.is_ctx(a)) {
            self.found = true;
        }
        syn::visit::visit_expr_call(self, c);
    }

    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        if c.args.iter().any(|a| self.is_ctx(a)) {
            self.found = true;
        }
        syn::visit::visit_expr_method_call(self, c);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Ok(args) = m.parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        {
            for a in &args {
                self.visit_expr(a);
            }
        } else if m.tokens.to_string().contains("request") {
            self.found = true;
        }
    }
}

/// Where `mod x;` in `path` looks for `x.rs`: beside a crate root or `mod.rs`, else in
/// a directory named after the file.
fn module_dir(path: &Path, is_root: bool) -> PathBuf {
    let parent = path.parent().unwrap_or(Path::new("."));
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if is_root || stem == "mod" {
        parent.to_path_buf()
    } else {
        parent.join(stem)
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta.require_list().is_ok_and(|l| {
                l.tokens
                    .to_string()
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == "test")
            })
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs
        .iter()
        .find(|a| a.path().is_ident("path"))
        .and_then(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(l) => match &l.lit {
                    syn::Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
}

/// Finds secret reads and forbidden APIs in one file.
pub fn scan_file(ast: &syn::File, file: FileId, secrets: &mut Vec<SecretUse>, diags: &mut Diagnostics) {
    let mut aliases = UseAliases::default();
    aliases.visit_file(ast);
    let mut v = Scanner {
        file,
        secrets,
        diags,
        in_test: 0,
        aliases: aliases.0,
    };
    v.visit_file(ast);
}

/// The names `use … as name` binds anywhere in a file, with the paths they stand for
/// (`use std as s` → `s`: `std`; `use std::{self as s2, env as e}` → `s2`: `std`, `e`:
/// `std::env`). Paths are expanded through them before forbidden paths are matched, so
/// that `s::env::var` is seen as `std::env::var`. Scopes are not tracked: an alias counts
/// in the whole file, which can only flag more, never less.
#[derive(Default)]
struct UseAliases(HashMap<String, Vec<String>>);

impl<'ast> Visit<'ast> for UseAliases {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        collect_use_paths(&u.tree, &mut Vec::new(), &mut paths);
        for path in paths {
            if let Some(alias) = path.alias {
                self.0.insert(alias, path.segments);
            }
        }
    }
}

struct Scanner<'a> {
    file: FileId,
    secrets: &'a mut Vec<SecretUse>,
    diags: &'a mut Diagnostics,
    /// Depth of `#[cfg(test)]` items being visited (tests are not deployed).
    in_test: usize,
    /// `use … as` names of the file and the paths they stand for.
    aliases: HashMap<String, Vec<String>>,
}

impl Scanner<'_> {
    fn forbid(&mut self, span: proc_macro2::Span, what: String, why: &str) {
        if self.in_test > 0 {
            return;
        }
        self.diags.push(
            Diagnostic::new(Code::ForbiddenApi, Span::from_proc_macro(self.file, span), format!("node code may not use {what}"))
                .label(why.to_string())
                .help("code nodes run in a Worker-style runtime (spec §4.3): no process environment, filesystem, sockets, processes, threads or `unsafe`; use `ctx.secret` for credentials, `ctx.env` for metadata and `ctx.fetch` for HTTP"),
        );
    }

    /// `segments` with a leading `use … as` alias replaced by its path, repeatedly (an
    /// alias may name another alias), at most eight times so that cycles end.
    fn expand_aliases(&self, segments: &[String]) -> Vec<String> {
        let mut expanded = segments.to_vec();
        for _ in 0..8 {
            let Some(path) = expanded
                .first()
                .and_then(|first| self.aliases.get(first.trim_start_matches("r#")))
            else {
                break;
            };
            expanded.splice(0..1, path.iter().cloned());
        }
        expanded
    }

    fn check_segments(&mut self, segments: &[String], span: proc_macro2::Span) {
        let segments = self.expand_aliases(segments);
        let segs: Vec<&str> = segments.iter().map(|s| s.trim_start_matches("r#")).collect();
        let segs: &[&str] = match segs.first() {
            Some(&"") => &segs[1..],
            _ => &segs,
        };
        let normalized: Vec<&str> = match segs.first() {
            Some(&"core") | Some(&"alloc") => std::iter::once("std").chain(segs[1..].iter().copied()).collect(),
            _ => segs.to_vec(),
        };
        for (prefix, why) in FORBIDDEN_PATHS {
            if normalized.len() >= prefix.len() && normalized[..prefix.len()] == **prefix {
                self.forbid(span, format!("`{}`", prefix.join("::")), why);
                return;
            }
        }
        if let Some(first) = normalized.first()
            && FORBIDDEN_CRATES.iter().any(|c| c.replace('-', "_") == *first)
            && normalized.len() > 1
        {
            self.forbid(
                span,
                format!("the `{first}` crate"),
                "direct network, file or database access",
            );
        }
    }

    /// Looks for forbidden paths inside macro arguments, which syn does not parse.
    fn scan_tokens(&mut self, tokens: &TokenStream) {
        let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.scan_tokens(&g.stream()),
                TokenTree::Ident(id) => {
                    // Collect `a :: b :: c`.
                    let mut segs = vec![id.to_string()];
                    let mut j = i + 1;
                    while j + 2 < trees.len() + 1 {
                        let (Some(TokenTree::Punct(p1)), Some(TokenTree::Punct(p2)), Some(TokenTree::Ident(next))) =
                            (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                        else {
                            break;
                        };
                        if p1.as_char() != ':' || p2.as_char() != ':' {
                            break;
                        }
                        segs.push(next.to_string());
                        j += 3;
                    }
                    if segs.len() > 1 {
                        self.check_segments(&segs, id.span());
                        i = j;
                        continue;
                    }
                    if let (Some(TokenTree::Punct(p)), true) =
                        (trees.get(i + 1), FORBIDDEN_MACROS.iter().any(|(m, _)| *m == segs[0]))
                        && p.as_char() == '!'
                    {
                        let why = FORBIDDEN_MACROS
                            .iter()
                            .find(|(m, _)| *m == segs[0])
                            .map(|(_, w)| *w)
                            .unwrap_or("");
                        self.forbid(id.span(), format!("`{}!`", segs[0]), why);
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    fn secret_call(&mut self, call: &syn::ExprMethodCall) {
        if call.method != "secret" || call.args.len() != 1 {
            return;
        }
        let arg = &call.args[0];
        let name = match arg {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s), ..
            }) => Some(s.value()),
            syn::Expr::Path(p)
                if p.path.segments.len() >= 2
                    && p.path
                        .segments
                        .iter()
                        .rev()
                        .nth(1)
                        .is_some_and(|s| s.ident == "secrets") =>
            {
                p.path.segments.last().map(|s| s.ident.to_string())
            }
            _ => None,
        };
        match name {
            Some(name) => self.secrets.push(SecretUse { name, span: Span::from_proc_macro(self.file, arg.span()) }),
            None if self.in_test == 0 => self.diags.push(
                Diagnostic::new(Code::NonLiteralSecretName, Span::from_proc_macro(self.file, arg.span()), "the secret name is not written out")
                    .label("computed secret name")
                    .help("write the name as a string literal, `ctx.secret(\"STRIPE_API_KEY\")`, or use `assets::secrets::STRIPE_API_KEY`, so that svc can check it is declared"),
            ),
            None => {}
        }
    }
}

impl<'ast> Visit<'ast> for Scanner<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            _ => &[],
        };
        let test = is_cfg_test(attrs);
        if test {
            self.in_test += 1;
        }
        // `mod x;` files are scanned when the walker reads them.
        syn::visit::visit_item(self, item);
        if test {
            self.in_test -= 1;
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if f.attrs.iter().any(|a| a.path().is_ident("test")) {
            self.in_test += 1;
            syn::visit::visit_item_fn(self, f);
            self.in_test -= 1;
            return;
        }
        syn::visit::visit_item_fn(self, f);
    }

    /// Every function's signature: free, in an `impl`, in a trait.
    fn visit_signature(&mut self, sig: &'ast syn::Signature) {
        if let syn::Safety::Unsafe(u) = &sig.safety {
            self.forbid(u.span, "`unsafe`".into(), "unsafe function");
        }
        syn::visit::visit_signature(self, sig);
    }

    fn visit_expr_unsafe(&mut self, e: &'ast syn::ExprUnsafe) {
        self.forbid(e.unsafe_token.span, "`unsafe`".into(), "unsafe block");
        syn::visit::visit_expr_unsafe(self, e);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if let Some(u) = &i.unsafety {
            self.forbid(u.span, "`unsafe`".into(), "unsafe impl");
        }
        syn::visit::visit_item_impl(self, i);
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        if let Some(u) = &t.unsafety {
            self.forbid(u.span, "`unsafe`".into(), "unsafe trait");
        }
        syn::visit::visit_item_trait(self, t);
    }

    fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
        if let Some(attr) = s.attrs.iter().find(|a| a.path().is_ident("global_allocator"))
            && self.in_test == 0
        {
            self.diags.push(
                Diagnostic::new(
                    Code::ForbiddenApi,
                    Span::from_proc_macro(self.file, attr.span()),
                    "node code may not choose the global allocator",
                )
                .label("`#[global_allocator]`")
                .help("the generated server installs its own allocator (mimalloc, docs/runtime.md \"Memory allocator\"), and a binary has one: remove this static"),
            );
        }
        syn::visit::visit_item_static(self, s);
    }

    fn visit_item_foreign_mod(&mut self, f: &'ast syn::ItemForeignMod) {
        self.forbid(f.abi.extern_token.span, "`extern` blocks".into(), "foreign functions");
    }

    fn visit_item_extern_crate(&mut self, e: &'ast syn::ItemExternCrate) {
        self.forbid(
            e.extern_token.span,
            "`extern crate`".into(),
            "crate aliases hide what code uses; depend on crates in Cargo.toml",
        );
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        collect_use_paths(&u.tree, &mut Vec::new(), &mut paths);
        for UsePath {
            segments, span, glob, ..
        } in paths
        {
            let segments = self.expand_aliases(&segments);
            let segments: Vec<String> = segments
                .into_iter()
                .filter(|s| !s.is_empty())
                .map(|s| s.trim_start_matches("r#").to_string())
                .collect();
            if glob && matches!(segments.as_slice(), [s] if s == "std" || s == "core" || s == "alloc" || s == "tokio") {
                self.forbid(
                    span,
                    format!("`use {}::*`", segments[0]),
                    "a glob import of the whole standard library hides what is used",
                );
                continue;
            }
            self.check_segments(&segments, span);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let mut segments = segments;
        if p.leading_colon.is_some() {
            segments.insert(0, String::new());
        }
        self.check_segments(&segments, p.span());
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let Some(last) = m.path.segments.last() else { return };
        let name = last.ident.to_string();
        if let Some((_, why)) = FORBIDDEN_MACROS.iter().find(|(n, _)| *n == name) {
            self.forbid(last.ident.span(), format!("`{name}!`"), why);
        }
        // Code inside macros is visited like any other code when its arguments parse:
        // the node definition with the shared parser (its `run` is most node code), and
        // other macros (`format!`, `vec!`, …) as a list of expressions. Only bodies that
        // parse as neither are scanned token by token.
        if name == node_def::MACRO_NAME {
            if let Ok(def) = m.parse_body::<node_def::NodeDefSyntax>() {
                for pin in def.inputs.iter().chain(&def.outputs) {
                    self.visit_expr(&pin.expr);
                }
                if let Some(run) = &def.run {
                    self.visit_expr(run);
                }
                return;
            }
        } else if let Ok(args) =
            m.parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        {
            for a in &args {
                self.visit_expr(a);
            }
            return;
        }
        self.scan_tokens(&m.tokens);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        self.secret_call(call);
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// One path a `use` item imports.
struct UsePath {
    /// The full path: `use std::{env, fmt::Write}` gives `std::env` and `std::fmt::Write`;
    /// `use std::{self as s}` gives `std`.
    segments: Vec<String>,
    span: proc_macro2::Span,
    /// `use path::*`.
    glob: bool,
    /// The name a `use … as name` binds.
    alias: Option<String>,
}

/// Flattens a use tree into the paths it imports.
fn collect_use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<UsePath>) {
    let path = |segments, span, glob, alias| UsePath {
        segments,
        span,
        glob,
        alias,
    };
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            collect_use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut full = prefix.clone();
            full.push(n.ident.to_string());
            out.push(path(full, n.ident.span(), false, None));
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix.clone();
            if r.ident != "self" {
                full.push(r.ident.to_string());
            }
            out.push(path(full, r.ident.span(), false, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(g) => out.push(path(prefix.clone(), g.star_token.span, true, None)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_use_paths(t, prefix, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(src: &str) -> (Vec<String>, Vec<(Code, u32, String)>) {
        let ast = syn::parse_file(src).unwrap();
        let mut secrets = Vec::new();
        let mut d = Diagnostics::new();
        scan_file(&ast, FileId(0), &mut secrets, &mut d);
        (
            secrets.into_iter().map(|s| s.name).collect(),
            d.into_iter()
                .map(|d| (d.code, d.primary.span.line, d.message))
                .collect(),
        )
    }

    #[test]
    fn finds_secret_reads() {
        let (secrets, d) = scan(
            "fn f(ctx: &C) {\n let a = ctx.secret(\"A_KEY\");\n let b = ctx.secret(assets::secrets::B_KEY);\n let c = format!(\"{}\", ctx.secret(\"C_KEY\").unwrap());\n let n = \"X\";\n ctx.secret(n);\n}\n",
        );
        assert_eq!(secrets, ["A_KEY", "B_KEY", "C_KEY"]);
        assert_eq!(
            d.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
            [(Code::NonLiteralSecretName, 6)]
        );
    }

    #[test]
    fn looks_inside_node_definitions() {
        let (secrets, d) = scan(
            "define_code_function_node! {\n node_key: \"a.b\", name: \"B\",\n run: |ctx| async move {\n let k = ctx.secret(\"API_TOKEN\")?;\n let h = std::env::var(\"HOME\");\n Ok(Outputs {})\n },\n}\n",
        );
        assert_eq!(secrets, ["API_TOKEN"]);
        assert_eq!(
            d.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
            [(Code::ForbiddenApi, 5)]
        );
    }

    #[test]
    fn renames_do_not_hide_forbidden_paths() {
        let src = r#"
use std as s;
use ::tokio as t;
use std::{self as s2, collections::HashMap as Map};
use s::process as p;
use s::*;
fn a() { let _ = s::env::var("X"); }
fn b() { let _ = t::fs::read("x"); }
fn c() { let _ = s2::net::TcpStream::connect("x"); }
fn d() { let _ = p::id(); let _: Map<u8, u8> = Map::new(); }
fn e() { let _ = format!("{:?}", s::thread::current()); }
"#;
        let (_, d) = scan(src);
        let lines: Vec<u32> = d.iter().map(|x| x.1).collect();
        // `use s::process as p` (through the alias) and `use s::*` at their lines, then
        // each use through an alias; `HashMap as Map` is fine.
        assert_eq!(lines, [5, 6, 7, 8, 9, 10, 11], "{d:?}");
        assert!(d.iter().all(|x| x.0 == Code::ForbiddenApi), "{d:?}");
        assert!(d[2].2.contains("`std::env`"), "{:?}", d[2]);
    }

    #[test]
    fn a_node_crate_may_not_choose_the_allocator() {
        let src = "use mimalloc::MiMalloc;\n\n#[global_allocator]\nstatic GLOBAL: MiMalloc = MiMalloc;\n\n#[cfg(test)]\nmod tests {\n    #[global_allocator]\n    static COUNTING: C = C;\n}\n";
        let (_, d) = scan(src);
        assert_eq!(
            d,
            [(
                Code::ForbiddenApi,
                3,
                "node code may not choose the global allocator".to_string()
            )],
            "the static in tests is not deployed and passes"
        );
    }

    fn manifest_problems(manifest: &str, workspace: &toml::Table) -> Vec<(u32, String)> {
        let mut sources = SourceMap::new();
        let file = sources.add(SourceFile::new("Cargo.toml", None, manifest.to_string()));
        let mut d = Diagnostics::new();
        read_manifest(manifest, file, workspace, &mut d);
        d.into_iter().map(|d| (d.primary.span.line, d.message)).collect()
    }

    #[test]
    fn every_dependency_table_is_read() {
        let manifest = r#"[package]
name = "n"

[dependencies]
http = { package = "reqwest", version = "0.12" }
serde = "1"

[target.'cfg(unix)'.dependencies]
libc = "0.2"

[target.'cfg(windows)'.build-dependencies]
fs_stuff = { package = "tempfile", version = "3" }

[dependencies.db]
workspace = true

[dev-dependencies]
tempfile = "3"
"#;
        let workspace: toml::Table = r#"db = { package = "tokio_postgres", version = "0.7" }"#.parse().unwrap();
        let mut problems = manifest_problems(manifest, &workspace);
        problems.sort();
        assert_eq!(
            problems,
            [
                (5, "node code may not depend on `reqwest`".to_string()),
                (9, "node code may not depend on `libc`".to_string()),
                (12, "node code may not depend on `tempfile`".to_string()),
                (14, "node code may not depend on `tokio_postgres`".to_string()),
            ],
        );
    }

    #[test]
    fn finds_forbidden_apis() {
        let src = r#"
use std::env;
use std::{fmt, fs::File};
use std::*;
fn a() { let _ = std::env::var("X"); }
fn b() { let _ = ::std::net::TcpStream::connect("x"); }
fn c() { println!("{:?}", std::process::id()); }
fn d() { unsafe { } }
unsafe fn e() {}
extern "C" { fn f(); }
extern crate core as c;
fn g() { let _ = env!("HOME"); let _ = include_str!("/etc/passwd"); }
fn h() { let _ = reqwest::get("x"); }
fn i() { let _ = core::env::var("x"); std::thread::spawn(|| {}); }
impl S { unsafe fn m() {} }
trait T { unsafe fn n(); }
#[cfg(test)]
mod tests { fn t() { let _ = std::fs::read("x"); } }
#[test]
fn t2() { let _ = std::fs::read("x"); }
fn ok() { let _ = std::collections::HashMap::<u8, u8>::new(); let _: std::fmt::Result = Ok(()); }
"#;
        let (_, d) = scan(src);
        let lines: Vec<u32> = d.iter().map(|x| x.1).collect();
        for line in [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16] {
            assert!(lines.contains(&line), "line {line} not reported: {d:#?}");
        }
        assert!(
            !lines.iter().any(|l| *l >= 17),
            "tests and std::collections must pass: {d:#?}"
        );
        assert!(d.iter().all(|x| x.0 == Code::ForbiddenApi));
    }
}
