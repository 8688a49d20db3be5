//! `svc test [DIR] [--filter TEXT] [--format human|json|junit] [--coverage PATH] [--min-coverage P] [--dev-build]`

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The project directory (default: the current directory).
    dir: Option<PathBuf>,
    /// Run only the cases whose `file: name` contains TEXT.
    #[arg(long, value_name = "TEXT")]
    filter: Option<String>,
    /// How to report.
    #[arg(long, value_enum, default_value_t = crate::flow_tests::report::Format::Human)]
    format: crate::flow_tests::report::Format,
    /// Write the flow coverage as JSON to PATH.
    #[arg(long = "coverage", value_name = "PATH")]
    coverage: Option<PathBuf>,
    /// Fail when fewer than P percent of the flows' branches were reached.
    #[arg(long, value_name = "P", value_parser = percent)]
    min_coverage: Option<f64>,
    /// Test the server as `svc dev` builds it (every TypeScript node in the engine, svc's
    /// runtime linked as a shared library) rather than as `svc build` ships it.
    #[arg(long)]
    dev_build: bool,
}

fn percent(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err("a percentage from 0 to 100".into()),
    }
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    crate::flow_tests::run(
        &dir,
        &crate::flow_tests::Options {
            filter: args.filter,
            format: args.format,
            coverage_json: args.coverage,
            min_coverage: args.min_coverage,
            flavour: match args.dev_build {
                true => crate::pipeline::Flavour::Dev,
                false => crate::pipeline::Flavour::Shipped,
            },
        },
    )
}
