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
    let from_dir = args.name.is_none();
    let name = args.name.unwrap_or_else(|| crate::init::project_name(&dir));
    // The rule of `project_name` in svc.config.yaml, which `svc check` applies.
    if !svc_frontend::config::is_project_name(&name) {
        eprintln!(
            "error: `{name}` is not a valid project name\n  = help: use lowercase letters, digits, `-` and `_`, starting with a letter, for example `my-api`"
        );
        return 2;
    }
    let dir_name = crate::init::dir_name(&dir);
    if from_dir && name != dir_name {
        eprintln!(
            "note: the project is named `{name}` after its directory `{dir_name}` (a project name is lowercase letters, digits, `-` and `_`, starting with a letter); choose another with --name"
        );
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
