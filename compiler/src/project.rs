//! Loading a project: the config, every flow file, and the node crate.
//!
//! ```text
//! my-api/
//!   svc.config.yaml     project name, route prefix, enums, structures, secrets
//!   (or svc.config.ts)  the same, in TypeScript, read without running it
//!   flows/*.yaml        one route per file (subdirectories allowed)
//!   Cargo.toml, src/    the node crate (optional: a project may have no code nodes)
//!   src/nodes/*.ts      TypeScript nodes (optional), beside or instead of Rust ones
//! ```

use std::path::{Path, PathBuf};
use svc_frontend::config::{self, CONFIG_FILE, Config};
use svc_frontend::flow::{self, Flow};
use svc_frontend::node_crate::{self, NodeCrate};
use svc_frontend::source::display_path;
use svc_frontend::vfs::{Confined, Disk, ReadError, Vfs};
use svc_frontend::{Code, Diagnostic, Diagnostics, FileId, SourceFile, SourceMap, Span};
use svc_frontend_ts::CONFIG_FILE as TS_CONFIG_FILE;
use svc_frontend_ts::nodes::ScriptNodes;

/// The directory of flow files.
pub const FLOWS_DIR: &str = "flows";

/// Everything read from a project directory.
pub struct Project {
    pub root: PathBuf,
    pub sources: SourceMap,
    pub config: Option<Config>,
    pub flows: Vec<Flow>,
    pub node_crate: Option<NodeCrate>,
    /// The TypeScript nodes under `src/nodes/`, and the modules they import.
    pub script_nodes: Option<ScriptNodes>,
}

impl Project {
    /// Whether the config is `svc.config.ts` (hints then speak its syntax, and Rust nodes
    /// cannot take their asset types from it).
    pub fn config_is_typescript(&self) -> bool {
        self.config
            .as_ref()
            .is_some_and(|c| self.sources.get(c.file).display_path == TS_CONFIG_FILE)
    }

    /// Reads only the config of the project at `root` (YAML or TypeScript): for commands
    /// that need its declarations (secrets) and nothing else. `None` when it cannot be
    /// read; `svc check` says why.
    pub fn config_only(root: &Path) -> Option<Config> {
        Self::config_only_from(&Disk, root)
    }

    /// [`Project::config_only`] through `vfs` (the Builder reads through [`Confined`]).
    pub fn config_only_from(vfs: &dyn Vfs, root: &Path) -> Option<Config> {
        let mut diags = Diagnostics::new();
        load_config(vfs, root, &mut SourceMap::new(), &mut diags)
    }

    /// Reads the project at `root` from disk.
    pub fn load(root: &Path, diags: &mut Diagnostics) -> Project {
        Self::load_from(&Disk, root, diags)
    }

    /// Reads the project at `root` without leaving it: no link is followed out of it, no
    /// special file is opened ([`Confined`]). What the Builder reads a project with: it
    /// may have been cloned from anyone, and `svc studio` runs none of its code.
    pub fn load_confined(root: &Path, diags: &mut Diagnostics) -> Project {
        match Confined::new(root) {
            Some(vfs) => Self::load_from(&vfs, root, diags),
            // No such directory: the disk reader says so.
            None => Self::load(root, diags),
        }
    }

    /// Reads a project through `vfs` (the disk, or memory for tests and fuzzing).
    pub fn load_from(vfs: &dyn Vfs, root: &Path, diags: &mut Diagnostics) -> Project {
        let mut sources = SourceMap::new();
        let config = load_config(vfs, root, &mut sources, diags);

        let flow_paths = flow_files(vfs, &root.join(FLOWS_DIR));
        if flow_paths.is_empty() && config.is_some() {
            let file = config.as_ref().map(|c| c.file).unwrap_or(FileId(0));
            diags.push(
                Diagnostic::new(Code::Io, Span::file_start(file), "the project has no flows")
                    .label("no routes")
                    .help(format!(
                        "add one YAML file per route under `{FLOWS_DIR}/` (see docs/flow-format.md)"
                    )),
            );
        }
        let flow_files: Vec<FileId> = flow_paths
            .iter()
            .filter_map(|p| {
                let shown = display_path(root, p);
                match vfs.read(p) {
                    Ok(text) => Some(sources.add(SourceFile::new(shown, Some(p.clone()), text))),
                    // Reported once, and not checked: its content is not what the user wrote.
                    Err(ReadError::Unreadable(bad)) => {
                        bad.report(&shown, p.clone(), &mut sources, diags);
                        None
                    }
                    Err(ReadError::Missing) => {
                        let file = sources.add(SourceFile::new(shown.clone(), Some(p.clone()), String::new()));
                        diags.push(
                            Diagnostic::new(Code::Io, Span::file_start(file), format!("cannot read `{shown}`"))
                                .label("unreadable file")
                                .help("check the file's permissions"),
                        );
                        None
                    }
                }
            })
            .collect();
        let flows = parse_flows(&sources, &flow_files, diags);

        let node_crate = node_crate::load(vfs, root, root, &mut sources, diags);
        let nodes_dir = config.as_ref().and_then(|c| c.nodes_dir.as_ref());
        let script_nodes = svc_frontend_ts::nodes::load(vfs, root, nodes_dir, &mut sources, diags);
        Project {
            root: root.to_path_buf(),
            sources,
            config,
            flows,
            node_crate,
            script_nodes,
        }
    }
}

/// Reads the project's config: `svc.config.yaml`, or `svc.config.ts` in a TypeScript
/// project (read statically, into the same `Config`). Exactly one of them.
fn load_config(vfs: &dyn Vfs, root: &Path, sources: &mut SourceMap, diags: &mut Diagnostics) -> Option<Config> {
    let yaml_path = root.join(CONFIG_FILE);
    let ts_path = root.join(TS_CONFIG_FILE);
    let yaml = vfs.read(&yaml_path);
    let ts = vfs.read(&ts_path);
    let (name, path, text, reader): (&str, PathBuf, _, ConfigReader) = match (yaml, ts) {
        (Err(ReadError::Missing), Err(ReadError::Missing)) => {
            let file = sources.add(SourceFile::new(CONFIG_FILE, Some(yaml_path), String::new()));
            diags.push(
                Diagnostic::new(
                    Code::Io,
                    Span::file_start(file),
                    format!("no `{CONFIG_FILE}` (or `{TS_CONFIG_FILE}`) in `{}`", root.display()),
                )
                .label("missing file")
                .help("run `svc check` in a project directory, or create one with `svc init`"),
            );
            return None;
        }
        (Err(ReadError::Missing), ts) => (TS_CONFIG_FILE, ts_path, ts, svc_frontend_ts::load_config),
        (yaml, Err(ReadError::Missing)) => (CONFIG_FILE, yaml_path, yaml, config::load),
        (yaml, _) => {
            // Checked as the YAML project it also is, so that the one error is this one.
            let file = sources.add(SourceFile::new(TS_CONFIG_FILE, Some(ts_path), String::new()));
            diags.push(
                Diagnostic::new(
                    Code::Io,
                    Span::file_start(file),
                    format!("the project has both `{CONFIG_FILE}` and `{TS_CONFIG_FILE}`"),
                )
                .label("a second config")
                .help(format!(
                    "keep one: `{TS_CONFIG_FILE}` for a project with TypeScript nodes, `{CONFIG_FILE}` otherwise"
                )),
            );
            (CONFIG_FILE, yaml_path, yaml, config::load)
        }
    };
    match text {
        Ok(text) => {
            let file = sources.add(SourceFile::new(name, Some(path), text));
            let text = sources.get(file).text.clone();
            reader(file, &text, diags)
        }
        Err(ReadError::Unreadable(bad)) => {
            bad.report(name, path, sources, diags);
            None
        }
        // Both missing was reported above.
        Err(ReadError::Missing) => None,
    }
}

type ConfigReader = fn(FileId, &str, &mut Diagnostics) -> Option<Config>;

/// Every `.yaml` / `.yml` file under `dir`, recursively, sorted by path.
fn flow_files(vfs: &dyn Vfs, dir: &Path) -> Vec<PathBuf> {
    let mut files = vfs.files_under(dir);
    files.retain(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")));
    files
}

/// Parses flow files on every core: files are independent, and YAML parsing dominates
/// the time of `svc check` on large projects.
fn parse_flows(sources: &SourceMap, files: &[FileId], diags: &mut Diagnostics) -> Vec<Flow> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    if files.len() < 16 || threads == 1 {
        return files
            .iter()
            .filter_map(|&f| flow::load(f, &sources.get(f).text, diags))
            .collect();
    }
    let chunk = files.len().div_ceil(threads);
    let results: Vec<(Vec<Flow>, Diagnostics)> = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    let mut d = Diagnostics::new();
                    let flows = part
                        .iter()
                        .filter_map(|&f| flow::load(f, &sources.get(f).text, &mut d))
                        .collect();
                    (flows, d)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("flow parsing does not panic"))
            .collect()
    });
    let mut flows = Vec::new();
    for (f, d) in results {
        flows.extend(f);
        diags.extend(d);
    }
    flows
}
