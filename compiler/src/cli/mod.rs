//! The `svc` command line. Each subcommand lives in its own module.

mod assets;
mod build;
mod check;
mod dev;
pub mod emit;
mod graph;
mod init;
mod keys;
mod manifest;
mod openapi;
mod run;
mod schema;
mod secrets;
mod store;
mod studio;
mod test;

use clap::{Parser, Subcommand};
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
    /// Create a project: config, a flow with all three protections, a code node, its crate.
    #[command(
        after_help = "Examples:\n  svc init my-api              # a new directory\n  svc init                     # the current directory\n  svc init api --name billing  # a name other than the directory's\n\nNever overwrites a file: when any file it would write exists, it writes nothing.\n\nThe node crate finds svc-sdk through `.svc/source`, a link (ignored by git) to the\nsources of the svc that runs: every svc command that reads the project (`svc check` is\nenough) makes or updates it, so a moved or cloned project builds where it lands. The\nsources are the checkout svc was built from, or, once that is gone, a copy svc carries\nand writes to ~/.cache/svc (SVC_CACHE_DIR). SVC_SOURCES=PATH|embedded chooses."
    )]
    Init(init::Args),
    /// Build, serve locally, and rebuild and restart on every change.
    #[command(
        after_help = "Examples:\n  svc dev                        # the project in the current directory, on 127.0.0.1:8080\n  svc dev my-api --port 3000\n  svc dev --node hello.greet --input '{\"name\": \"Ada\"}'   # one node alone\n\nWatches svc.config.yaml, flows/ and the node crate. A change with errors prints them and\nkeeps the last good server running. Each request prints one line (method, path, status,\nthe branch each node took, duration), then the ctx.log lines of each node that ran.\nSecrets come from environment variables; the store (API keys) is DIR/.svc/workspace.db."
    )]
    Dev(dev::Args),
    /// Run one code node alone with JSON inputs, as `svc dev` would run it.
    #[command(
        after_help = "Examples:\n  svc run hello.greet examples/hello --input '{\"name\": \"Ada\", \"tone\": \"formal\"}'\n  svc run shop.decide-status examples/shop --input '{\"total\": 5000, \"currency\": \"EUR\"}'\n\nPrints the outputs as JSON on stdout and the node's logs on stderr. Secrets come from\nenvironment variables. Exit status: 0 on success, 1 when the node fails (ctx.fail),\n2 when the inputs do not fit its pins."
    )]
    Run(run::Args),
    /// Check a project: config, flows and node code, without building anything.
    #[command(
        after_help = "Examples:\n  svc check                 # the project in the current directory\n  svc check examples/shop   # another directory\n  svc check --format json   # one JSON object per diagnostic, for editors and CI\n\nExit status: 0 when there are no errors (warnings allowed), 1 when there are errors."
    )]
    Check(check::Args),
    /// Build a project into one server binary (dist/<project_name>).
    #[command(
        after_help = "Examples:\n  svc build examples/shop                  # debug build, dist/shop\n  svc build examples/shop --release -o ./shop-server\n\nThe crate is generated in DIR/.svc/server. Every project builds in one shared target\ndirectory, so dependencies compile once per machine: $CARGO_TARGET_DIR when set, else the\ntarget directory svc itself was built in when it runs from there, else ~/.cache/svc/target\n($SVC_CACHE_DIR/target). CARGO_TARGET_DIR=.svc/target keeps a project's build to itself."
    )]
    Build(build::Args),
    /// Run the flow tests in tests/*.yaml against the built server, with flow coverage.
    #[command(
        after_help = "Examples:\n  svc test                               # every case of the project in the current directory\n  svc test examples/shop --filter 401    # only cases whose `file: name` contains 401\n  svc test --format junit > report.xml   # for CI systems\n  svc test --coverage coverage.json --min-coverage 100\n\nBuilds the server once (debug), starts it per test file on a free loopback port with a\nfresh store holding that file's key and secret fixtures, sends each case over HTTP, and\nreports like cargo test. Exit status 1 when a case fails, coverage is below\n--min-coverage, or the project or a test file has errors. See docs/testing.md."
    )]
    Test(test::Args),
    /// Write the generated server crate (Rust) of a project.
    #[command(
        after_help = "Examples:\n  svc emit examples/shop                     # to examples/shop/.svc/server\n  svc emit examples/shop --out /tmp/shop-server\n  svc emit --check --out generated/server   # CI: exit 1 and a diff when the committed crate is stale"
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
    /// Move a workspace between stores (SQLite to PostgreSQL).
    #[command(after_help = "Example:\n  svc store copy --from .svc/workspace.db --to postgres://svc@db/svc")]
    #[command(subcommand)]
    Store(store::Command),
    /// Sync the config's enums, structures, secrets and the node manifests to the workspace store.
    #[command(
        after_help = "Examples:\n  svc assets sync             # the project in the current directory\n  svc assets sync --dry-run   # show what would change\n\nIdempotent: a second sync of an unchanged project changes nothing."
    )]
    #[command(subcommand)]
    Assets(assets::Command),
    /// Print the node manifests (build_manifest_from_node) as JSON.
    #[command(
        after_help = "Examples:\n  svc manifest examples/shop\n  svc manifest examples/shop --node shop.price-order"
    )]
    Manifest(manifest::Args),
    /// Draw a flow as a Mermaid or Graphviz DOT graph.
    #[command(
        after_help = "Examples:\n  svc graph orders examples/shop                         # Mermaid, for Markdown\n  svc graph orders examples/shop --format dot | dot -Tsvg > orders.svg"
    )]
    Graph(graph::Args),
    /// Write an OpenAPI 3.1 document of every route.
    #[command(
        after_help = "Examples:\n  svc openapi examples/shop > openapi.json\n  svc openapi examples/shop -o openapi.json"
    )]
    Openapi(openapi::Args),
    /// Print the JSON Schemas of flow files and svc.config.yaml, for YAML editors.
    #[command(
        after_help = "Examples:\n  svc schema flow > flow.schema.json\n  svc schema test > test.schema.json   # tests/*.yaml of svc test\n  svc schema --out schemas/    # every schema\n\nPoint an editor at them with a first line such as\n  # yaml-language-server: $schema=./schemas/flow.schema.json"
    )]
    Schema(schema::Args),
    /// Open the Builder in the browser: the project's flows, palette and settings.
    #[command(
        after_help = "Examples:\n  svc studio                    # the project in the current directory\n  svc studio examples/shop --port 4500\n\nPrints a URL with an access token; open it in a browser. Listens on 127.0.0.1 unless\n--addr says otherwise. `svc dev` opens the same Builder while it serves. See docs/builder.md."
    )]
    Studio(studio::Args),
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match cli.command {
        Command::Init(args) => init::run(args),
        Command::Check(args) => check::run(args),
        Command::Dev(args) => dev::run(args),
        Command::Emit(args) => emit::run(args),
        Command::Build(args) => build::run(args),
        Command::Keys(args) => keys::run(args),
        Command::Secrets(args) => secrets::run(args),
        Command::Assets(args) => assets::run(args),
        Command::Store(args) => store::run(args),
        Command::Manifest(args) => manifest::run(args),
        Command::Graph(args) => graph::run(args),
        Command::Openapi(args) => openapi::run(args),
        Command::Schema(args) => schema::run(args),
        Command::Run(args) => run::run(args),
        Command::Test(args) => test::run(args),
        Command::Studio(args) => studio::run(args),
    }
}

/// The project directory argument, defaulting to the current directory.
pub(crate) fn project_dir(dir: Option<PathBuf>) -> PathBuf {
    dir.unwrap_or_else(|| PathBuf::from("."))
}

/// The hint for a name that matches nothing: the closest candidate, else all of them
/// (`what` names them: "the routes"), else `when_none`.
pub(crate) fn did_you_mean(wanted: &str, candidates: &[&str], what: &str, when_none: &str) -> String {
    match svc_types::assets::closest(wanted, candidates.iter().copied()) {
        Some(best) => format!("did you mean `{best}`?"),
        None if candidates.is_empty() => when_none.to_string(),
        None => format!("{what} are: {}", candidates.join(", ")),
    }
}
