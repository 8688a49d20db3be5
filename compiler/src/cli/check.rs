//! `svc check [DIR] [--format human|json]`

use crate::check;
use crate::project::Project;
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;
use svc_frontend::Diagnostics;

#[derive(clap::Args)]
pub struct Args {
    /// The project directory (default: the current directory).
    dir: Option<PathBuf>,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// rustc-style messages with source excerpts, on stderr.
    Human,
    /// One JSON object per diagnostic, per line, on stdout.
    Json,
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    let mut diags = Diagnostics::new();
    let project = Project::load(&dir, &mut diags);
    let checked = check::check(&project, &mut diags);
    // A freshly cloned or moved project gets its link to svc's crates here, so that
    // `cargo test` in its node crate works after `svc check`.
    if project.config.is_some()
        && let Err(e) = crate::sources::link(&dir).and_then(|()| crate::typescript_env::write_for(&dir, &project))
    {
        eprintln!("warning: {e}");
    }
    let errors = diags.error_count();
    let warnings = diags.warning_count();
    let sorted = diags.sorted(&project.sources);
    match args.format {
        Format::Json => {
            let mut out = std::io::stdout().lock();
            for d in &sorted {
                let _ = writeln!(out, "{}", d.to_json(&project.sources));
            }
        }
        Format::Human => {
            let color = crate::pipeline::color_stderr();
            let mut err = std::io::stderr().lock();
            for d in &sorted {
                let _ = writeln!(err, "{}", crate::pipeline::render(d, &project.sources, color));
            }
            if errors == 0 {
                for wire in checked.unchecked_wires() {
                    let _ = writeln!(err, "{}", crate::pipeline::unchecked_wire_note(&wire, &project.sources));
                }
            }
            // Quoted when it is the config's name; plain words when there is none.
            let name = project
                .config
                .as_ref()
                .map(|c| format!("`{}`", c.project_name))
                .unwrap_or_else(|| "the project".to_string());
            let name = name.as_str();
            let summary = summary(name, errors, warnings, project.flows.len(), checked.catalog.nodes.len());
            let _ = writeln!(err, "{summary}");
        }
    }
    if errors > 0 { 1 } else { 0 }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn summary(name: &str, errors: usize, warnings: usize, routes: usize, nodes: usize) -> String {
    match (errors, warnings) {
        (0, 0) => format!(
            "checked {name}: {}, {}, no problems",
            plural(routes, "route"),
            plural(nodes, "code node")
        ),
        (0, w) => format!(
            "checked {name}: {}, {}, {}",
            plural(routes, "route"),
            plural(nodes, "code node"),
            plural(w, "warning")
        ),
        (e, 0) => format!("error: {name} has {}", plural(e, "error")),
        (e, w) => format!("error: {name} has {} and {}", plural(e, "error"), plural(w, "warning")),
    }
}
