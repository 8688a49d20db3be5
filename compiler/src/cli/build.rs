//! `svc build [DIR] [--release | --pgo] [-o PATH]`

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The project directory (default: the current directory).
    dir: Option<PathBuf>,
    /// Build with optimisations (slower to build, faster to run).
    #[arg(long)]
    release: bool,
    /// Build with optimisations guided by a profile of the project's flow tests
    /// (`tests/*.yaml`): a release build that compiles the server's crates twice, once
    /// instrumented. Needs `rustup component add llvm-tools`.
    #[arg(long)]
    pgo: bool,
    /// Where to put the binary (default: DIR/dist/<project_name>).
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    let crate_dir = crate::pipeline::default_out(&dir);
    let project = match crate::pipeline::emit_project(&dir, &crate_dir, true) {
        Ok(Some(report)) => report.project,
        Ok(None) => return 1,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let built = if args.pgo {
        crate::pgo::build(&dir, &crate_dir, &project, args.output)
    } else {
        eprintln!(
            "   Building `{project}` ({})",
            if args.release { "release" } else { "debug" }
        );
        let opts = crate::build::BuildOptions {
            runtime: crate::emit::RuntimeLinking::Static,
            flags: None,
            release: args.release,
            output: args.output,
            quiet: false,
        };
        crate::build::cargo_build(&dir, &crate_dir, &project, &opts)
    };
    match built {
        Ok(built) => {
            let size = std::fs::metadata(&built.binary).map(|m| m.len()).unwrap_or(0);
            eprintln!(
                "   Finished {} ({:.1} MB) in {:.1}s: compiled {} of {} crates{}",
                built.binary.display(),
                size as f64 / 1e6,
                built.seconds,
                built.compiled,
                built.units,
                if args.pgo { " in its two builds" } else { "" }
            );
            eprintln!("   Run it with `{} serve`", built.binary.display());
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
