//! Loading a project: the config, every flow file, and the node crate.
//!
//! ```text
//! my-api/
//!   svc.config.yaml     project name, route prefix, enums, structures, secrets
//!   flows/*.yaml        one route per file (subdirectories allowed)
//!   Cargo.toml, src/    the node crate (optional: a project may have no code nodes)
//! ```

use std::path::{Path, PathBuf};
use svc_frontend::config::{self, CONFIG_FILE, Config};
use svc_frontend::flow::{self, Flow};
use svc_frontend::node_crate::{self, NodeCrate};
use svc_frontend::source::display_path;
use svc_frontend::vfs::{Disk, ReadError, Vfs};
use svc_frontend::{Code, Diagnostic, Diagnostics, FileId, SourceFile, SourceMap, Span};

/// The directory of flow files.
pub const FLOWS_DIR: &str = "flows";

/// Everything read from a project directory.
pub struct Project {
    pub root: PathBuf,
    pub sources: SourceMap,
    pub config: Option<Config>,
    pub flows: Vec<Flow>,
    pub node_crate: Option<NodeCrate>,
}

impl Project {
    /// Reads the project at `root` from disk.
    pub fn load(root: &Path, diags: &mut Diagnostics) -> Project {
        Self::load_from(&Disk, root, diags)
    }

    /// Reads a project through `vfs` (the disk, or memory for tests and fuzzing).
    pub fn load_from(vfs: &dyn Vfs, root: &Path, diags: &mut Diagnostics) -> Project {
        let mut sources = SourceMap::new();
        let config_path = root.join(CONFIG_FILE);
        let config = match vfs.read(&config_path) {
            Ok(text) => {
                let file = sources.add(SourceFile::new(CONFIG_FILE, Some(config_path), text));
                let text = sources.get(file).text.clone();
                config::load(file, &text, diags)
            }
            Err(ReadError::NotUtf8(bad)) => {
                bad.report(CONFIG_FILE, config_path, &mut sources, diags);
                None
            }
            Err(ReadError::Missing) => {
                let file = sources.add(SourceFile::new(CONFIG_FILE, Some(config_path), String::new()));
                diags.push(
                    Diagnostic::new(
                        Code::Io,
                        Span::file_start(file),
                        format!("no `{CONFIG_FILE}` in `{}`", root.display()),
                    )
                    .label("missing file")
                    .help("run `svc check` in a project directory, or create one with `svc init`"),
                );
                None
            }
        };

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
                    Err(ReadError::NotUtf8(bad)) => {
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
        Project {
            root: root.to_path_buf(),
            sources,
            config,
            flows,
            node_crate,
        }
    }
}

/// Every `.yaml` / `.yml` file under `dir`, recursively, sorted by path.
fn flow_files(vfs: &dyn Vfs, dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for p in vfs.list(&d) {
            if vfs.is_dir(&p) {
                stack.push(p);
            } else if matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
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
