//! A project's TypeScript nodes: every module under `src/nodes/` whose default export is
//! `defineCodeFunctionNode({...})`, and every project module they import, read without
//! running them.
//!
//! ```text
//! src/nodes/price-order.ts   export default defineCodeFunctionNode({ … })   a node
//! src/nodes/money.ts         export function cents(…) { … }                 a helper
//! src/lib/tax.ts             imported by a node: checked, and bundled
//! src/nodes/price-order.test.ts                                             a test: not deployed
//! ```
//!
//! Every module that ends up in the server is held to the runtime contract
//! ([`crate::contract`]); the modules and how their imports resolve are kept for the
//! bundler, so that it compiles exactly what was checked.

use crate::contract::{self, Findings};
use crate::module::Module;
use crate::node::{self, DefaultExport};
use oxc_allocator::Allocator;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use svc_frontend::node_crate::{NodeCode, NodeInfo, SecretUse};
use svc_frontend::source::display_path;
use svc_frontend::vfs::{ReadError, Vfs};
use svc_frontend::{Code, Diagnostic, Diagnostics, FileId, SourceFile, SourceMap};

/// Where node modules live, relative to the project.
pub const NODES_DIR: &str = "src/nodes";

/// One module of the bundle.
#[derive(Debug, Clone)]
pub struct ScriptModule {
    /// Its path in the project, with `/`: `src/nodes/price-order.ts`. Also its name in the
    /// bundle.
    pub name: String,
    pub file: FileId,
    /// Each project import, as written, and the module it resolved to.
    pub imports: Vec<(String, String)>,
    /// Whether it mentions `request` (see [`Findings::mentions_request`]).
    pub mentions_request: bool,
}

/// What was read of the project's TypeScript.
#[derive(Debug, Clone, Default)]
pub struct ScriptNodes {
    pub nodes: Vec<NodeInfo>,
    pub secrets: Vec<SecretUse>,
    /// Every module the nodes need, by name, nodes first.
    pub modules: Vec<ScriptModule>,
    /// A module could not be read or parsed, or a node definition was refused (already
    /// reported): its nodes are unknown.
    pub unreadable: bool,
}

/// Reads the TypeScript nodes of the project at `root`, from `nodes_dir` (the config's
/// `nodes`, and where it was written) or [`NODES_DIR`]; `None` when there are none.
pub fn load(
    vfs: &dyn Vfs,
    root: &Path,
    nodes_dir: Option<&(String, svc_frontend::Span)>,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> Option<ScriptNodes> {
    let dir = nodes_dir.map_or(NODES_DIR, |(dir, _)| dir.as_str());
    if let Some((dir, span)) = nodes_dir
        && !vfs.is_dir(&root.join(dir))
    {
        diags.push(
            Diagnostic::new(
                Code::InvalidValue,
                *span,
                format!("the project has no directory `{dir}`"),
            )
            .label("no such directory")
            .help(format!(
                "create `{dir}/` with the node modules, or name the directory they are in"
            )),
        );
        // Reported: the nodes are unknown, not absent (no cascade of unknown node keys).
        return Some(ScriptNodes {
            unreadable: true,
            ..ScriptNodes::default()
        });
    }
    let entries = node_modules(vfs, &root.join(dir));
    if entries.is_empty() {
        return None;
    }
    let mut reader = Reader {
        vfs,
        root,
        sources,
        diags,
        out: ScriptNodes::default(),
        seen: BTreeSet::new(),
    };
    let mut queue: VecDeque<(PathBuf, bool)> = entries.into_iter().map(|p| (p, true)).collect();
    while let Some((path, is_entry)) = queue.pop_front() {
        let name = module_name(root, &path);
        if !reader.seen.insert(name.clone()) {
            continue;
        }
        for next in reader.module(&path, name, is_entry) {
            queue.push_back((next, false));
        }
    }
    reader.settle_request_use();
    Some(reader.out)
}

/// `.ts` and `.mts` files under `dir`, recursively, without declaration files and tests.
fn node_modules(vfs: &dyn Vfs, dir: &Path) -> Vec<PathBuf> {
    let mut files = vfs.files_under(dir);
    files.retain(|path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let is_ts = name.ends_with(".ts") || name.ends_with(".mts");
        let skipped = name.ends_with(".d.ts")
            || name.ends_with(".d.mts")
            || [".test.", ".spec."].iter().any(|t| name.contains(t));
        is_ts && !skipped
    });
    files
}

/// The module's path in the project with `/` separators: its name in the bundle.
fn module_name(root: &Path, path: &Path) -> String {
    display_path(root, path).replace('\\', "/")
}

struct Reader<'v, 'r, 's, 'd> {
    vfs: &'v dyn Vfs,
    root: &'r Path,
    sources: &'s mut SourceMap,
    diags: &'d mut Diagnostics,
    out: ScriptNodes,
    seen: BTreeSet<String>,
}

impl Reader<'_, '_, '_, '_> {
    /// Reads one module; returns the project modules it imports.
    fn module(&mut self, path: &Path, name: String, is_entry: bool) -> Vec<PathBuf> {
        let text = match self.vfs.read(path) {
            Ok(text) => text,
            Err(ReadError::Unreadable(bad)) => {
                bad.report(&name, path.to_path_buf(), self.sources, self.diags);
                self.out.unreadable = true;
                return Vec::new();
            }
            Err(ReadError::Missing) => {
                // Listed a moment ago: removed since, or unreadable.
                self.out.unreadable = true;
                return Vec::new();
            }
        };
        let file = self
            .sources
            .add(SourceFile::new(name.clone(), Some(path.to_path_buf()), text));
        let text = self.sources.get(file).text.clone();
        let allocator = Allocator::default();
        let Some(module) = Module::parse(&allocator, file, &text, self.diags) else {
            self.out.unreadable = true;
            return Vec::new();
        };
        let Findings {
            secrets,
            imports,
            mentions_request,
        } = contract::scan(&module, self.diags);
        self.out.secrets.extend(secrets);

        let mut resolved = Vec::new();
        let mut next = Vec::new();
        for import in imports {
            match self.resolve(path, &import.specifier) {
                Ok(target) => {
                    resolved.push((import.specifier, module_name(self.root, &target)));
                    next.push(target);
                }
                Err(why) => self.diags.push(
                    Diagnostic::new(
                        Code::UnresolvedImport,
                        import.span,
                        format!("cannot find the module `{}`", import.specifier),
                    )
                    .label(why)
                    .help("import a `.ts` module of the project by its relative path: `./pricing` or `./pricing.ts` for `pricing.ts` beside this file"),
                ),
            }
        }
        if is_entry {
            match node::default_export(&module) {
                DefaultExport::Node(definition, place) => {
                    match node::read(&module, definition, place, self.diags) {
                        Some((manifest, spans)) => self.out.nodes.push(NodeInfo {
                            manifest,
                            spans,
                            file,
                            uses_request: false, // settled once every module is read
                            code: NodeCode::TypeScript { module: name.clone() },
                        }),
                        // Refused and reported: flows that call it get no second error.
                        None => self.out.unreadable = true,
                    }
                }
                DefaultExport::None => {}
                DefaultExport::Other(span) => node::report_not_a_node(span, self.diags),
            }
        }
        self.out.modules.push(ScriptModule {
            name,
            file,
            imports: resolved,
            mentions_request,
        });
        next
    }

    /// The file a relative import names, the way TypeScript's bundler resolution finds
    /// it: the path itself, `.js` written for `.ts`, or `.ts` / `/index.ts` added. It must
    /// stay inside the project.
    fn resolve(&self, importer: &Path, specifier: &str) -> Result<PathBuf, &'static str> {
        let base = importer.parent().unwrap_or(self.root);
        let Some(joined) = normalize(&base.join(specifier)) else {
            return Err("outside the project");
        };
        // Both normalized: a project given as `.` (the default) is `` here, as its files are.
        if !normalize(self.root).is_some_and(|root| joined.starts_with(root)) {
            return Err("outside the project");
        }
        let text = joined.to_string_lossy().to_string();
        let candidates: Vec<PathBuf> = if text.ends_with(".ts") || text.ends_with(".mts") {
            vec![joined.clone()]
        } else if let Some(stem) = text.strip_suffix(".js") {
            vec![PathBuf::from(format!("{stem}.ts"))]
        } else if let Some(stem) = text.strip_suffix(".mjs") {
            vec![PathBuf::from(format!("{stem}.mts"))]
        } else {
            vec![PathBuf::from(format!("{text}.ts")), joined.join("index.ts")]
        };
        candidates
            .into_iter()
            .find(|c| !self.vfs.is_dir(c) && !matches!(self.vfs.read(c), Err(ReadError::Missing)))
            .ok_or("no such `.ts` file")
    }

    /// A node gets `ctx.request` when its module, or a module it imports (directly or
    /// not), mentions `request`.
    fn settle_request_use(&mut self) {
        let modules: BTreeMap<&str, &ScriptModule> = self.out.modules.iter().map(|m| (m.name.as_str(), m)).collect();
        let reaches_request = |start: &str| {
            let mut stack = vec![start];
            let mut visited = BTreeSet::new();
            while let Some(m) = stack.pop() {
                if !visited.insert(m) {
                    continue;
                }
                // A module that could not be read may mention it.
                let Some(module) = modules.get(m) else {
                    return true;
                };
                if module.mentions_request {
                    return true;
                }
                stack.extend(module.imports.iter().map(|(_, to)| to.as_str()));
            }
            false
        };
        let uses: Vec<bool> = self
            .out
            .nodes
            .iter()
            .map(|n| match &n.code {
                NodeCode::TypeScript { module } => reaches_request(module),
                NodeCode::Rust { .. } => true,
            })
            .collect();
        for (node, uses) in self.out.nodes.iter_mut().zip(uses) {
            node.uses_request = uses;
        }
    }
}

/// `a/./b/../c` as `a/c`, without touching the disk; `None` when `..` climbs above the
/// start.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}
