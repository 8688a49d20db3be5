//! `svc init [DIR] [--name NAME]`

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Where to create the project (default: the current directory).
    dir: Option<PathBuf>,
    /// The project's name (default: from the directory's name).
    #[arg(long)]
    name: Option<String>,
    /// The language of the code nodes: `rust` (a node crate, svc.config.yaml) or `ts`
    /// (TypeScript modules against @svc/sdk, svc.config.ts).
    #[arg(long, value_enum, default_value = "rust")]
    lang: crate::init::Lang,
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    let name = args.name.unwrap_or_else(|| crate::init::project_name(&dir));
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-')
        && !name.contains("--");
    if !valid {
        eprintln!(
            "error: `{name}` is not a valid project name\n  = help: use lowercase letters, digits and `-`, starting with a letter, for example `my-api`"
        );
        return 2;
    }
    match crate::init::init(&dir, &name, args.lang) {
        Ok(files) => {
            eprintln!("created `{name}` in {}:", dir.display());
            for f in files {
                eprintln!("  {}", f.display());
            }
            let cd = if dir == std::path::Path::new(".") {
                String::new()
            } else {
                format!("cd {} && ", dir.display())
            };
            let unit_tests = match args.lang {
                crate::init::Lang::Rust => "",
                crate::init::Lang::Ts => "npm install && npm test      # the node's unit tests\n  ",
            };
            eprintln!(
                "\nNext:\n  {cd}{unit_tests}svc test                    # the flow tests in tests/greeting.yaml\n  svc dev                     # build and serve on 127.0.0.1:8080\n  KEY=$(svc keys create --name dev --owner you)\n  curl -s \"http://127.0.0.1:8080/local/{name}/greeting?name=Ada\" -H \"x-api-key: $KEY\""
            );
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
