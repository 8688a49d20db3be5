//! The pipeline every command runs a project through: load, check (diagnostics printed),
//! lower, emit, write. `svc build`, `dev`, `emit`, `test`, `run` and `build --pgo` call
//! it; it calls nothing above it.
//!
//! ```text
//! Project::load → check::check → lower::lower → emit::emit → emit::write_crate
//! ```

use crate::check;
use crate::emit::Placement;
use crate::project::Project;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use svc_frontend::Diagnostics;
use svc_frontend::SourceMap;
use svc_frontend::diagnostic::{Diagnostic, Severity};

/// Prints a project's diagnostics on stderr; when there are errors, says that `outcome`.
pub fn print_diagnostics(diags: Diagnostics, sources: &SourceMap, outcome: &str) {
    let color = color_stderr();
    let errors = diags.error_count();
    for d in diags.sorted(sources) {
        eprintln!("{}", render(&d, sources, color));
    }
    if errors > 0 {
        eprintln!(
            "error: {errors} error{} in the project; {outcome}",
            if errors == 1 { "" } else { "s" }
        );
    }
}

/// Loads and checks the project in `dir`, prints its diagnostics, and calls `f` when it
/// has no errors. `None` (after the diagnostics) when it has errors.
pub fn with_checked<T>(dir: &Path, outcome: &str, f: impl FnOnce(&crate::check::Checked) -> T) -> Option<T> {
    let mut diags = Diagnostics::new();
    let project = crate::project::Project::load(dir, &mut diags);
    let checked = crate::check::check(&project, &mut diags);
    print_diagnostics(diags, &project.sources, outcome);
    if checked.has_errors { None } else { Some(f(&checked)) }
}

/// A rendered diagnostic, with the severity coloured on terminals.
pub fn render(d: &Diagnostic, sources: &SourceMap, color: bool) -> String {
    let text = d.render(sources);
    if !color {
        return text;
    }
    let (prefix, style) = match d.severity {
        Severity::Error => ("error[", "\x1b[1;31m"),
        Severity::Warning => ("warning[", "\x1b[1;33m"),
    };
    match text.find("]: ") {
        Some(end) if text.starts_with(prefix) => format!(
            "{style}{}\x1b[0m\x1b[1m{}\x1b[0m{}",
            &text[..=end],
            &text[end + 1..text.find('\n').unwrap_or(text.len())],
            &text[text.find('\n').unwrap_or(text.len())..]
        ),
        _ => text,
    }
}

/// Whether to colour output written to stderr.
pub fn color_stderr() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

/// The default output directory of a project.
pub fn default_out(dir: &Path) -> PathBuf {
    dir.join(".svc").join("server")
}

/// Where a server of `flavour` is generated: `.svc/server`, or `.svc/dev-server` for
/// `svc dev`'s (so that `svc test` or `svc build` running beside `svc dev` never builds
/// a crate it is rewriting).
pub fn out_dir(dir: &Path, flavour: Flavour) -> PathBuf {
    match flavour {
        Flavour::Shipped => default_out(dir),
        Flavour::Dev => dir.join(".svc").join("dev-server"),
    }
}

/// The crates in `.svc/` are members of the project's `.svc/` workspace; `--out`
/// elsewhere writes a crate that is its own workspace.
pub fn placement(dir: &Path, out: &Path) -> Placement {
    if out == default_out(dir) || out == out_dir(dir, Flavour::Dev) {
        Placement::ProjectWorkspace
    } else {
        Placement::Standalone
    }
}

/// What a server is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// What `svc build` ships and `svc test` tests: TypeScript nodes compiled to Rust where
    /// they can be, every crate in one binary.
    Shipped,
    /// What `svc dev` serves: every TypeScript node in the engine (a TypeScript change
    /// reloads its bytecode, no Rust rebuild), and svc's crates linked from one shared
    /// library (a flow change relinks a small binary). Windows has no run path to find
    /// the library by, so there the runtime stays linked in.
    Dev,
}

impl Flavour {
    fn compiles_typescript(self) -> bool {
        self == Flavour::Shipped
    }

    /// How the server links svc's crates.
    pub fn runtime(self) -> crate::emit::RuntimeLinking {
        match self {
            Flavour::Dev if !cfg!(windows) => crate::emit::RuntimeLinking::Shared,
            _ => crate::emit::RuntimeLinking::Static,
        }
    }
}

/// Where the crate for `ir` written to `out` stands, for the project at `dir`.
pub fn layout(dir: &Path, ir: &crate::lower::ProjectIr, out: &Path, flavour: Flavour) -> crate::emit::Layout {
    let node_crate = ir.node_crate.as_ref().map(|k| k.dir.as_path());
    let layout = crate::emit::Layout::new(dir, node_crate, out, placement(dir, out));
    match flavour {
        Flavour::Shipped => layout,
        Flavour::Dev => layout.development(flavour.runtime()),
    }
}

/// Checks, lowers and emits what `svc build` ships; prints diagnostics. Returns what was
/// written, or `None` when the project has errors.
pub fn emit_project(dir: &Path, out: &Path, quiet: bool) -> Result<Option<crate::emit::WriteReport>, crate::Error> {
    emit_project_as(dir, out, quiet, Flavour::Shipped)
}

/// [`emit_project`], for a server of the given flavour.
pub fn emit_project_as(
    dir: &Path,
    out: &Path,
    quiet: bool,
    flavour: Flavour,
) -> Result<Option<crate::emit::WriteReport>, crate::Error> {
    let mut diags = Diagnostics::new();
    let project = Project::load(dir, &mut diags);
    let checked = check::check(&project, &mut diags);
    print_diagnostics(diags, &project.sources, "nothing was generated");
    if checked.has_errors {
        return Ok(None);
    }
    write_checked(dir, out, &checked, quiet, flavour).map(Some)
}

/// Lowers a checked project, its TypeScript nodes compiled to Rust when
/// `compile_typescript` (not for `svc dev`) and `SVC_TYPESCRIPT=engine` is not set: at
/// build time as at run time, it leaves every TypeScript node to the engine.
pub fn lower(checked: &check::Checked, compile_typescript: bool) -> crate::lower::ProjectIr {
    use crate::lower::TypeScriptNodes;
    let engine_only = std::env::var("SVC_TYPESCRIPT").is_ok_and(|v| v == "engine");
    let typescript = match compile_typescript && !engine_only {
        true => TypeScriptNodes::Compiled,
        false => TypeScriptNodes::Engine,
    };
    crate::lower::lower(checked, typescript)
}

/// Lowers, emits and writes a project checked without errors.
pub fn write_checked(
    dir: &Path,
    out: &Path,
    checked: &check::Checked,
    quiet: bool,
    flavour: Flavour,
) -> Result<crate::emit::WriteReport, crate::Error> {
    crate::sources::link(dir)?;
    crate::typescript_env::write_for(dir, checked.project)?;
    let ir = lower(checked, flavour.compiles_typescript());
    note_engine_nodes(&ir, checked.project);
    let layout = layout(dir, &ir, out, flavour);
    let files = crate::emit::emit(&ir, &layout)?;
    let mut report =
        crate::emit::write_crate(dir, out, layout.placement, &files).map_err(|e| crate::Error::io("write", out, e))?;
    report.project = ir.name.clone();
    report.bin = match layout.dev {
        true => crate::emit::dev_bin(&ir.name),
        false => ir.name.clone(),
    };
    if !quiet {
        eprintln!(
            "emitted `{}` ({} route{}) to {}: {} written, {} unchanged{}",
            ir.name,
            ir.routes.len(),
            if ir.routes.len() == 1 { "" } else { "s" },
            out.display(),
            report.written.len(),
            report.unchanged,
            if report.removed.is_empty() {
                String::new()
            } else {
                format!(", {} removed", report.removed.len())
            }
        );
    }
    Ok(report)
}

/// The note `svc check` prints for a wire whose value is checked against its pin's
/// constraints before the node runs: not a problem, but a check at run time that the
/// source could make at the edge instead.
pub fn unchecked_wire_note(wire: &check::flow::UncheckedWire, sources: &SourceMap) -> String {
    let file = &sources.get(wire.span.file).display_path;
    let source = if wire.wire.starts_with("request.") {
        "the request input"
    } else {
        "the output"
    };
    format!(
        "note: `{}` is checked before node `{}` runs ({file}:{}:{}): input `{}` of `{}` asks {}, which {source} does not guarantee; a value that breaks it is a 500 `node_input_invalid`, so give {source} the same constraints to refuse it where it is made",
        wire.wire,
        wire.node_id,
        wire.span.line,
        wire.span.column,
        wire.pin,
        wire.node_key,
        wire.pin_constraints.describe(),
    )
}

/// A note for each TypeScript node a route calls that stays in the engine, with the
/// construct that kept it there: compiled nodes are several times cheaper a call.
fn note_engine_nodes(ir: &crate::lower::ProjectIr, project: &crate::project::Project) {
    for node in &ir.nodes {
        if let Some(Err(not)) = ir.native.get(&node.key) {
            let file = &project.sources.get(not.span.file).display_path;
            eprintln!(
                "note: TypeScript node `{}` runs in the engine: {} ({file}:{}:{})",
                node.key, not.reason, not.span.line, not.span.column
            );
        }
    }
}
