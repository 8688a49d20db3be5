//! `svc run NODE_KEY [DIR] --input JSON`: runs one code node alone.

use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct Args {
    /// The node key, such as `shop.price-order`.
    pub node: String,
    /// The project directory (default: the current directory).
    pub dir: Option<PathBuf>,
    /// The inputs: a JSON object with one value per input pin (pins with a default may be left out).
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub input: String,
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    run_node(&dir, &args.node, &args.input)
}

/// Builds the node runner of the project in `dir` and runs node `key` with `input`.
pub fn run_node(dir: &Path, key: &str, input: &str) -> i32 {
    let crate_dir = crate::runner::crate_dir(dir);
    let bin = match crate::pipeline::with_checked(dir, "the node was not run", |checked| {
        if checked.catalog.get(key).is_none() {
            let keys: Vec<&str> = checked.catalog.nodes.keys().copied().collect();
            let hint = super::did_you_mean(key, &keys, "the project's nodes", "the project has no code nodes");
            return Err(format!("no node has the key `{key}`\n  = help: {hint}"));
        }
        crate::sources::link(dir)?;
        let runner = crate::runner::emit(checked, &crate_dir)?;
        crate::emit::write_crate(dir, &crate_dir, crate::emit::Placement::ProjectWorkspace, &runner.files)
            .map_err(|e| format!("cannot write `{}`: {e}", crate_dir.display()))?;
        Ok(runner.bin)
    }) {
        None => return 1,
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return 2;
        }
        Some(Ok(bin)) => bin,
    };
    let opts = crate::build::BuildOptions {
        runtime: crate::emit::RuntimeLinking::Static,
        flags: None,
        release: false,
        output: Some(dir.join(".svc").join("bin").join(&bin)),
        quiet: true,
    };
    let built = match crate::build::cargo_build(dir, &crate_dir, &bin, &opts) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    match Command::new(&built.binary).arg(key).arg(input).status() {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            eprintln!("error: cannot run `{}`: {e}", built.binary.display());
            1
        }
    }
}
