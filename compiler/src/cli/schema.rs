//! `svc schema [flow|config] [--out DIR]`

use crate::schema;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Which schema to print.
    #[arg(value_enum)]
    which: Option<Which>,
    /// Write every schema into DIR (flow.schema.json, svc.config.schema.json, test.schema.json) instead.
    #[arg(long, value_name = "DIR", conflicts_with = "which")]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Which {
    /// Flow files (flows/*.yaml).
    Flow,
    /// svc.config.yaml.
    Config,
    /// `svc test` files (tests/*.yaml).
    Test,
}

pub fn run(args: Args) -> i32 {
    if let Some(dir) = args.out {
        for (file, value) in [
            (schema::FLOW_FILE, schema::flow()),
            (schema::CONFIG_FILE, schema::config()),
            (schema::TEST_FILE, schema::test()),
        ] {
            let path = dir.join(file);
            if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, schema::to_text(&value))) {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                return 1;
            }
            eprintln!("wrote {}", path.display());
        }
        return 0;
    }
    let value = match args.which {
        Some(Which::Config) => schema::config(),
        Some(Which::Test) => schema::test(),
        Some(Which::Flow) | None => schema::flow(),
    };
    print!("{}", schema::to_text(&value));
    0
}
