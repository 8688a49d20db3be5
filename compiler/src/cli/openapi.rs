//! `svc openapi [DIR] [-o PATH]`

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The project directory (default: the current directory).
    dir: Option<PathBuf>,
    /// Write the document to PATH instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    let Some(doc) = crate::pipeline::with_checked(&dir, "no document was written", crate::openapi::document) else {
        return 1;
    };
    let mut text = serde_json::to_string_pretty(&doc).expect("a JSON value serializes");
    text.push('\n');
    match args.output {
        Some(path) => match std::fs::write(&path, text) {
            Ok(()) => {
                eprintln!("wrote {}", path.display());
                0
            }
            Err(e) => {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                1
            }
        },
        None => {
            print!("{text}");
            0
        }
    }
}
