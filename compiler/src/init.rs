//! `svc init`: a new project that checks, builds and serves at once.
//!
//! The files come from askama templates in `compiler/templates/init/`. Nothing is ever
//! overwritten: when any file svc would write exists already, nothing is written.

use crate::emit::absolute;
use askama::Template;
use std::path::{Path, PathBuf};

#[derive(Template)]
#[template(path = "init/svc.config.yaml.askama", escape = "none")]
struct ConfigYaml<'a> {
    name: &'a str,
    workspace: &'a str,
}

#[derive(Template)]
#[template(path = "init/greeting.yaml.askama", escape = "none")]
struct GreetingFlow<'a> {
    name: &'a str,
    workspace: &'a str,
    namespace: &'a str,
}

#[derive(Template)]
#[template(path = "init/Cargo.toml.askama", escape = "none")]
struct CargoToml<'a> {
    name: &'a str,
    sdk_path: &'a str,
}

#[derive(Template)]
#[template(path = "init/lib.rs.askama", escape = "none")]
struct LibRs<'a> {
    name: &'a str,
}

#[derive(Template)]
#[template(path = "init/nodes_mod.rs.askama", escape = "none")]
struct NodesMod;

#[derive(Template)]
#[template(path = "init/greet.rs.askama", escape = "none")]
struct GreetRs<'a> {
    namespace: &'a str,
}

#[derive(Template)]
#[template(path = "init/gitignore.askama", escape = "none")]
struct GitIgnore;

#[derive(Template)]
#[template(path = "init/svc.config.ts.askama", escape = "none")]
struct ConfigTs<'a> {
    name: &'a str,
    workspace: &'a str,
}

#[derive(Template)]
#[template(path = "init/greet.ts.askama", escape = "none")]
struct GreetTs<'a> {
    namespace: &'a str,
}

#[derive(Template)]
#[template(path = "init/greet.test.ts.askama", escape = "none")]
struct GreetTestTs;

#[derive(Template)]
#[template(path = "init/package.json.askama", escape = "none")]
struct PackageJson<'a> {
    name: &'a str,
}

#[derive(Template)]
#[template(path = "init/tsconfig.json.askama", escape = "none")]
struct TsConfig;

#[derive(Template)]
#[template(path = "init/gitignore-ts.askama", escape = "none")]
struct GitIgnoreTs;

/// The language of a new project's code nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// A Rust node crate (`define_code_function_node!`), config in `svc.config.yaml`.
    Rust,
    /// TypeScript modules against `@svc/sdk`, config in `svc.config.ts`.
    Ts,
}

#[derive(Template)]
#[template(path = "init/greeting.test.yaml.askama", escape = "none")]
struct GreetingTests<'a> {
    name: &'a str,
    workspace: &'a str,
}

#[derive(Template)]
#[template(path = "init/README.md.askama", escape = "none")]
struct Readme<'a> {
    name: &'a str,
    workspace: &'a str,
    namespace: &'a str,
    /// Whether the code nodes are TypeScript (else Rust).
    typescript: bool,
}

/// A project name from a directory name, as `svc check` takes it (lowercase letters,
/// digits, `-` and `_`, starting with a letter): a name that already is one is kept as it
/// is (`under_score`); others are lowercased with other characters as `-` (`My API` →
/// `my-api`), and `api-` goes before a leading digit (`9lives` → `api-9lives`).
pub fn project_name(dir: &Path) -> String {
    let raw = dir_name(dir);
    let mut name = String::new();
    for c in raw.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_matches(['-', '_']).to_string();
    match name.chars().next() {
        None => "my-api".into(),
        Some(c) if c.is_ascii_digit() => format!("api-{name}"),
        Some(_) => name,
    }
}

/// The last component of `dir`, as written.
pub fn dir_name(dir: &Path) -> String {
    absolute(dir)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// The namespace of the project's node keys (`<namespace>.greet`): the name in lower kebab
/// case, which node keys require (`billing_api` → `billing-api`).
pub fn node_namespace(name: &str) -> String {
    let mut kebab = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            kebab.push(c);
        } else if !kebab.is_empty() && !kebab.ends_with('-') {
            kebab.push('-');
        }
    }
    let kebab = kebab.trim_end_matches('-');
    match kebab.chars().next() {
        Some(c) if c.is_ascii_lowercase() => kebab.to_string(),
        Some(_) => format!("api-{kebab}"),
        None => "api".into(),
    }
}

/// The files of a new project named `name` with nodes in `lang`: (path in the project,
/// text). The flow and its tests are the same in both languages.
pub fn files(name: &str, lang: Lang) -> Result<Vec<(PathBuf, String)>, String> {
    let workspace = "local";
    let namespace = &node_namespace(name);
    let sdk_path = crate::sources::SDK_PATH;
    let r = |t: Result<String, askama::Error>| t.map_err(|e| format!("a template of svc init failed: {e}"));
    let mut out = vec![
        (
            PathBuf::from("flows/greeting.yaml"),
            r(GreetingFlow {
                name,
                workspace,
                namespace,
            }
            .render())?,
        ),
        (
            PathBuf::from("tests/greeting.yaml"),
            r(GreetingTests { name, workspace }.render())?,
        ),
        (
            PathBuf::from("schemas").join(crate::schema::FLOW_FILE),
            crate::schema::to_text(&crate::schema::flow()),
        ),
        (
            PathBuf::from("schemas").join(crate::schema::TEST_FILE),
            crate::schema::to_text(&crate::schema::test()),
        ),
        (
            PathBuf::from("README.md"),
            r(Readme {
                name,
                workspace,
                namespace,
                typescript: lang == Lang::Ts,
            }
            .render())?,
        ),
    ];
    match lang {
        Lang::Rust => out.extend([
            (
                PathBuf::from("svc.config.yaml"),
                r(ConfigYaml { name, workspace }.render())?,
            ),
            (PathBuf::from("Cargo.toml"), r(CargoToml { name, sdk_path }.render())?),
            (PathBuf::from("src/lib.rs"), r(LibRs { name }.render())?),
            (PathBuf::from("src/nodes/mod.rs"), r(NodesMod.render())?),
            (PathBuf::from("src/nodes/greet.rs"), r(GreetRs { namespace }.render())?),
            (PathBuf::from(".gitignore"), r(GitIgnore.render())?),
            (
                PathBuf::from("schemas").join(crate::schema::CONFIG_FILE),
                crate::schema::to_text(&crate::schema::config()),
            ),
        ]),
        Lang::Ts => out.extend([
            (
                PathBuf::from("svc.config.ts"),
                r(ConfigTs { name, workspace }.render())?,
            ),
            (PathBuf::from("src/nodes/greet.ts"), r(GreetTs { namespace }.render())?),
            (PathBuf::from("src/nodes/greet.test.ts"), r(GreetTestTs.render())?),
            (PathBuf::from("package.json"), r(PackageJson { name }.render())?),
            (PathBuf::from("tsconfig.json"), r(TsConfig.render())?),
            (PathBuf::from(".gitignore"), r(GitIgnoreTs.render())?),
        ]),
    }
    out.sort();
    for (_, text) in &mut out {
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    Ok(out)
}

/// Writes a new project into `dir`. Refuses, writing nothing, when any file exists.
pub fn init(dir: &Path, name: &str, lang: Lang) -> Result<Vec<PathBuf>, String> {
    let files = files(name, lang)?;
    let existing: Vec<String> = files
        .iter()
        .filter(|(p, _)| dir.join(p).exists())
        .map(|(p, _)| p.display().to_string())
        .collect();
    if !existing.is_empty() {
        return Err(format!(
            "`{}` already has {}; svc init never overwrites files (choose an empty or new directory)",
            dir.display(),
            existing.join(", ")
        ));
    }
    let mut written = Vec::new();
    for (path, text) in &files {
        let full = dir.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
        }
        std::fs::write(&full, text).map_err(|e| format!("cannot write `{}`: {e}", full.display()))?;
        written.push(path.clone());
    }
    // The node crate's SDK is reached through `.svc/source` (see `sources`).
    crate::sources::link(dir)?;
    match lang {
        // Start from the dependency versions svc is tested with (cargo drops what is unused).
        Lang::Rust => {
            let _ = crate::emit::seed_lockfile(dir);
        }
        // `tsc` types named structures from the declarations svc writes.
        Lang::Ts => {
            let mut diags = svc_frontend::Diagnostics::new();
            let project = crate::project::Project::load(dir, &mut diags);
            crate::typescript_env::write_for(dir, &project)?;
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_directories() {
        assert_eq!(project_name(Path::new("/tmp/My API")), "my-api");
        // What `svc check` takes is kept as it is.
        assert_eq!(project_name(Path::new("/tmp/shop_v2")), "shop_v2");
        assert_eq!(project_name(Path::new("/tmp/2fa")), "api-2fa");
        assert_eq!(project_name(Path::new("/tmp/-x-")), "x");
        assert_eq!(node_namespace("billing_api"), "billing-api");
        assert_eq!(node_namespace("my-api"), "my-api");
    }
}
