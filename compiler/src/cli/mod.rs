//! The `svc` command line. Each subcommand lives in its own module.

mod build;
mod check;
pub mod emit;
mod keys;
mod secrets;
mod store;

use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "svc",
    version,
    about = "Compile declarative YAML route flows and Rust code nodes into one standalone route server.",
    after_help = "Start with `svc init my-api`, then `svc dev my-api`. Docs: docs/ in the svc repository."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a project: config, flows and node code, without building anything.
    #[command(
        after_help = "Examples:\n  svc check                 # the project in the current directory\n  svc check examples/shop   # another directory\n  svc check --format json   # one JSON object per diagnostic, for editors and CI\n\nExit status: 0 when there are no errors (warnings allowed), 1 when there are errors."
    )]
    Check(check::Args),
    /// Build a project into one server binary (dist/<project_name>).
    #[command(
        after_help = "Examples:\n  svc build examples/shop                  # debug build, dist/shop\n  svc build examples/shop --release -o ./shop-server\n\nThe crate is generated in DIR/.svc/server and built in DIR/.svc/target (or $CARGO_TARGET_DIR)."
    )]
    Build(build::Args),
    /// Write the generated server crate (Rust) of a project.
    #[command(
        after_help = "Examples:\n  svc emit examples/shop                     # to examples/shop/.svc/server\n  svc emit examples/shop --out /tmp/shop-server"
    )]
    Emit(emit::Args),
    /// Create, list, revoke and rotate API keys in the workspace store.
    #[command(
        after_help = "Examples:\n  svc keys create --name ci --owner alice\n  svc keys list\n  svc keys revoke ci"
    )]
    Keys(keys::Args),
    /// Set, list and unset secret values in the workspace store.
    #[command(after_help = "Examples:\n  printf %s \"$TOKEN\" | svc secrets set API_TOKEN\n  svc secrets list")]
    Secrets(secrets::Args),
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Emit(args) => emit::run(args),
        Command::Build(args) => build::run(args),
        Command::Keys(args) => keys::run(args),
        Command::Secrets(args) => secrets::run(args),
    }
}

/// The project directory argument, defaulting to the current directory.
pub(crate) fn project_dir(dir: Option<PathBuf>) -> PathBuf {
    dir.unwrap_or_else(|| PathBuf::from("."))
}

/// Whether to colour output written to stderr.
pub(crate) fn color_stderr() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}
