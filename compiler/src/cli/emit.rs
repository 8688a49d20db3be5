//! `svc emit [DIR] [--out PATH]`: writes the generated crate.

use crate::check;
use crate::project::Project;
use std::path::{Path, PathBuf};
use svc_frontend::Diagnostics;

#[derive(clap::Args)]
pub struct Args {
    /// The project directory (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Where to write the crate (default: DIR/.svc/server).
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

/// The default output directory of a project.
pub fn default_out(dir: &Path) -> PathBuf {
    dir.join(".svc").join("server")
}

/// Checks, lowers and emits; prints diagnostics. Returns the output directory, or `None`
/// when the project has errors.
pub fn emit_project(dir: &Path, out: &Path, quiet: bool) -> Result<Option<crate::emit::WriteReport>, String> {
    let mut diags = Diagnostics::new();
    let project = Project::load(dir, &mut diags);
    let checked = check::check(&project, &mut diags);
    super::print_diagnostics(diags, &project.sources, "nothing was generated");
    if checked.has_errors {
        return Ok(None);
    }
    let ir = crate::lower::lower(&checked);
    let files = crate::emit::emit(&ir, out)?;
    let mut report = crate::emit::write(out, &files).map_err(|e| format!("cannot write `{}`: {e}", out.display()))?;
    report.project = ir.name.clone();
    if !quiet {
        eprintln!(
            "emitted `{}` ({} routes) to {}: {} written, {} unchanged{}",
            ir.name,
            ir.routes.len(),
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
    Ok(Some(report))
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    let out = args.out.unwrap_or_else(|| default_out(&dir));
    match emit_project(&dir, &out, false) {
        Ok(Some(_)) => 0,
        Ok(None) => 1,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
