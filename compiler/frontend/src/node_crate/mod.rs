//! Reads a node crate (the project's custom code) from source, without compiling or
//! running it: the node definitions and where they live, the secrets the code reads,
//! and anything it uses that the runtime contract forbids (spec §4.3).
//!
//! The module tree is walked from `src/lib.rs` the way rustc does (`mod x;` →
//! `x.rs` or `x/mod.rs`, `#[path]` honoured); `#[cfg(test)]` modules are skipped
//! because tests are not deployed.
//!
//! [`model`] is what it is read into; [`manifest`] reads `Cargo.toml` (the package, its
//! dependencies, the SDK's path), [`walk`] the module tree and the node definitions in
//! it, [`scan`] each file for what the contract forbids and for the secrets it reads.

use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::{SourceFile, SourceMap, Span, display_path};
use crate::vfs::{ReadError, Vfs};
use std::path::{Path, PathBuf};

mod manifest;
mod model;
mod scan;
mod walk;

pub use manifest::{FORBIDDEN_CRATES, SDK_PATH, SOURCE_LINK};
use manifest::{read_manifest, workspace_dependencies};
pub use model::*;
pub use scan::scan_file;
use walk::Walker;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

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
