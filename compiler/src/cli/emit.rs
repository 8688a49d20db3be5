//! `svc emit [DIR] [--out PATH] [--check]`: writes the generated crate, or (`--check`)
//! says whether the crate on disk is what it would write.

use crate::check;
use crate::emit::Placement;
use crate::project::Project;
use std::io::Write;
use std::path::{Path, PathBuf};
use svc_frontend::Diagnostics;

#[derive(clap::Args)]
pub struct Args {
    /// The project directory (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Where to write the crate (default: DIR/.svc/server).
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Write nothing: compare the crate at PATH with what would be written, print a
    /// unified diff of every difference, and exit 1 when there is any.
    #[arg(long)]
    pub check: bool,
}

/// The default output directory of a project.
pub fn default_out(dir: &Path) -> PathBuf {
    dir.join(".svc").join("server")
}

/// The default output is a member of the project's `.svc/` workspace; `--out` elsewhere
/// writes a crate that is its own workspace.
fn placement(dir: &Path, out: &Path) -> Placement {
    if out == default_out(dir) {
        Placement::ProjectWorkspace
    } else {
        Placement::Standalone
    }
}

/// Checks, lowers and emits; prints diagnostics. Returns the output directory, or `None`
/// when the project has errors.
pub fn emit_project(dir: &Path, out: &Path, quiet: bool) -> Result<Option<crate::emit::WriteReport>, String> {
    emit_project_as(dir, out, quiet, true)
}

/// [`emit_project`], with TypeScript nodes compiled to Rust (`compile_typescript`) or all
/// left to the engine (`svc dev`).
pub fn emit_project_as(
    dir: &Path,
    out: &Path,
    quiet: bool,
    compile_typescript: bool,
) -> Result<Option<crate::emit::WriteReport>, String> {
    let mut diags = Diagnostics::new();
    let project = Project::load(dir, &mut diags);
    let checked = check::check(&project, &mut diags);
    super::print_diagnostics(diags, &project.sources, "nothing was generated");
    if checked.has_errors {
        return Ok(None);
    }
    write_checked(dir, out, &checked, quiet, compile_typescript).map(Some)
}

/// Lowers a checked project, its TypeScript nodes compiled to Rust when
/// `compile_typescript` (not for `svc dev`) and `SVC_TYPESCRIPT=engine` is not set: at
/// build time as at run time, it leaves every TypeScript node to the engine.
fn lower(checked: &check::Checked, compile_typescript: bool) -> crate::lower::ProjectIr {
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
    compile_typescript: bool,
) -> Result<crate::emit::WriteReport, String> {
    crate::sources::link(dir)?;
    crate::typescript_env::write_for(dir, checked.project)?;
    let ir = lower(checked, compile_typescript);
    note_engine_nodes(&ir, checked.project);
    let placement = placement(dir, out);
    let files = crate::emit::emit(&ir, out, placement)?;
    let mut report = crate::emit::write_crate(dir, out, placement, &files)
        .map_err(|e| format!("cannot write `{}`: {e}", out.display()))?;
    report.project = ir.name.clone();
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

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    let out = args.out.unwrap_or_else(|| default_out(&dir));
    if args.check {
        return check_only(&dir, &out);
    }
    match emit_project(&dir, &out, false) {
        Ok(Some(_)) => 0,
        Ok(None) => 1,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

/// `--check`: 0 when the crate at `out` is exactly what `svc emit` writes, 1 (with a
/// unified diff on stdout) when it is not or when the project has errors.
fn check_only(dir: &Path, out: &Path) -> i32 {
    let mut diags = Diagnostics::new();
    let project = Project::load(dir, &mut diags);
    let checked = check::check(&project, &mut diags);
    super::print_diagnostics(diags, &project.sources, "nothing was compared");
    if checked.has_errors {
        return 1;
    }
    let ir = lower(&checked, true);
    let files = match crate::emit::emit(&ir, out, placement(dir, out)) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let stale = crate::emit::stale(out, &files);
    if stale.is_empty() {
        eprintln!(
            "`{}` is up to date with the project ({} files)",
            out.display(),
            files.len()
        );
        return 0;
    }
    let mut stdout = std::io::stdout().lock();
    for s in &stale {
        let _ = write!(stdout, "{}", unified_diff(out, s));
    }
    eprintln!(
        "error: `{}` is stale: {} of its files differ from what `svc emit` writes\n  = help: run `svc emit{}{}` and commit the result",
        out.display(),
        stale.len(),
        if dir == Path::new(".") {
            String::new()
        } else {
            format!(" {}", dir.display())
        },
        if out == default_out(dir) {
            String::new()
        } else {
            format!(" --out {}", out.display())
        },
    );
    1
}

/// A `diff -u` style patch from the file on disk to the generated one.
fn unified_diff(out: &Path, stale: &crate::emit::Stale) -> String {
    let shown = out.join(&stale.path).display().to_string();
    let old = stale.on_disk.as_deref().unwrap_or_default();
    let new = stale.generated.as_deref().unwrap_or_default();
    let (Ok(old), Ok(new)) = (std::str::from_utf8(old), std::str::from_utf8(new)) else {
        return format!(
            "Binary files {shown} differ ({} bytes on disk, {} generated)\n",
            old.len(),
            new.len()
        );
    };
    let from = if stale.on_disk.is_some() {
        format!("a/{shown}")
    } else {
        "/dev/null".into()
    };
    let to = if stale.generated.is_some() {
        format!("b/{shown}")
    } else {
        "/dev/null".into()
    };
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .missing_newline_hint(true)
        .to_string()
}
