//! `svc emit [DIR] [--out PATH] [--check]`: writes the generated crate, or (`--check`)
//! says whether the crate on disk is what it would write.

use crate::check;
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

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    let out = args.out.unwrap_or_else(|| crate::pipeline::default_out(&dir));
    if args.check {
        return check_only(&dir, &out);
    }
    match crate::pipeline::emit_project(&dir, &out, false) {
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
    crate::pipeline::print_diagnostics(diags, &project.sources, "nothing was compared");
    if checked.has_errors {
        return 1;
    }
    let ir = crate::pipeline::lower(&checked, true);
    let files = match crate::emit::emit(
        &ir,
        &crate::pipeline::layout(dir, &ir, out, crate::pipeline::Flavour::Shipped),
    ) {
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
        if out == crate::pipeline::default_out(dir) {
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
