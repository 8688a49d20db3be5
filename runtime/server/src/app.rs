//! The main function of a generated server: its command line, start-up, and serving.
//!
//! ```text
//! <project> serve [--addr 127.0.0.1] [--port 8080] [--store .svc/workspace.db]
//!                 [--trusted-proxies 10.0.0.0/8,…] [--body-limit 1048576] [--timeout 30]
//!                 [--rate-limit-max-keys 1000000] [--log-format text|json] [--dev]
//! <project> routes
//! <project> --version
//! ```
//!
//! Every flag has an environment variable (`SVC_ADDR`, `SVC_PORT`, `SVC_STORE`,
//! `SVC_TRUSTED_PROXIES`, `SVC_BODY_LIMIT`, `SVC_TIMEOUT`, `SVC_RATE_LIMIT_MAX_KEYS`,
//! `SVC_LOG_FORMAT`, `SVC_DEV`); `SVC_LOG` sets the log filter (default `info`).

use crate::apikey::KeyIndex;
use crate::client_ip::TrustedProxies;
use crate::exchange::Trace;
use crate::runtime::{Limits, Runtime};
use crate::secrets::{Requirement, SecretSource, Secrets};
use crate::store::{DEFAULT_PATH, SqliteStore, WorkspaceStore};
use axum::Router;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use svc_sdk::Env;

/// One route, for `routes`.
#[derive(Debug, Clone, Copy)]
pub struct RouteInfo {
    pub methods: &'static str,
    pub path: &'static str,
    /// The flow's nodes in order: `check-origin origin → check-api-key auth → …`.
    pub chain: &'static str,
    pub file: &'static str,
}

/// Configuration the routes are built with.
#[derive(Debug, Clone, Copy)]
pub struct RouteConfig<'a> {
    pub rate_limit_max_keys: usize,
    /// Where routes resolve their metric series, once.
    pub metrics: &'a crate::metrics::Metrics,
}

impl<'a> RouteConfig<'a> {
    /// The defaults, with series in `metrics`.
    pub fn new(metrics: &'a crate::metrics::Metrics) -> Self {
        RouteConfig {
            rate_limit_max_keys: crate::ratelimit::memory::DEFAULT_MAX_KEYS,
            metrics,
        }
    }
}

/// What a generated server is.
pub struct App {
    pub project: &'static str,
    pub version: &'static str,
    pub git_sha: &'static str,
    pub workspace_id: &'static str,
    pub api_id: &'static str,
    pub routes: &'static [RouteInfo],
    pub secrets: &'static [Requirement],
    pub router: fn(&RouteConfig) -> Router<Arc<Runtime>>,
}

#[derive(Parser)]
#[command(disable_version_flag = true)]
struct Cli {
    /// Print the version and the git commit this server was built from.
    #[arg(long, short = 'V')]
    version: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the routes.
    Serve(ServeArgs),
    /// List the routes: method, path, and the chain of nodes of each.
    Routes,
}

#[derive(clap::Args, Clone)]
pub struct ServeArgs {
    /// The address to listen on.
    #[arg(long, env = "SVC_ADDR", default_value = "127.0.0.1")]
    pub addr: String,
    /// The port to listen on (0: any free port).
    #[arg(long, env = "SVC_PORT", default_value_t = 8080)]
    pub port: u16,
    /// The workspace store (API keys, secret values).
    #[arg(long, env = "SVC_STORE", default_value = DEFAULT_PATH)]
    pub store: PathBuf,
    /// Proxies whose forwarded headers are believed: comma-separated IPs or CIDR blocks.
    #[arg(long, env = "SVC_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,
    /// The largest request body, in bytes.
    #[arg(long, env = "SVC_BODY_LIMIT", default_value_t = 1024 * 1024)]
    pub body_limit: usize,
    /// Seconds to answer a request before 408.
    #[arg(long, env = "SVC_TIMEOUT", default_value_t = 30)]
    pub timeout: u64,
    /// Keys each Rate Limit node tracks at most.
    #[arg(long, env = "SVC_RATE_LIMIT_MAX_KEYS", default_value_t = crate::ratelimit::memory::DEFAULT_MAX_KEYS)]
    pub rate_limit_max_keys: usize,
    /// Log lines as text or JSON.
    #[arg(long, env = "SVC_LOG_FORMAT", default_value = "text")]
    pub log_format: String,
    /// Development mode: secrets from environment variables, `ctx.env` mirrors the
    /// process environment, and one line per request on stderr.
    #[arg(long, env = "SVC_DEV")]
    pub dev: bool,
}

/// Runs a generated server's command line.
pub fn main(app: App) -> ExitCode {
    let cli = Cli::parse();
    if cli.version {
        println!("{} {} (git {})", app.project, app.version, app.git_sha);
        return ExitCode::SUCCESS;
    }
    match cli.command {
        None => {
            eprintln!(
                "{} {}: use `{} serve` to serve the routes, `{} routes` to list them, `--help` for more.",
                app.project, app.version, app.project, app.project
            );
            ExitCode::from(2)
        }
        Some(Command::Routes) => {
            for r in app.routes {
                println!(
                    "{:<14} {}\n               {}\n               ({})",
                    r.methods, r.path, r.chain, r.file
                );
            }
            ExitCode::SUCCESS
        }
        Some(Command::Serve(args)) => serve(&app, args),
    }
}

fn init_logging(format: &str, dev: bool) {
    // In development the trace line of each request already says what the access log and
    // the node log lines would: show them only when asked for with SVC_LOG.
    let default = if dev {
        "info,svc::access=off,svc::node=off"
    } else {
        "info"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SVC_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let _ = if format == "json" {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

/// Starts the server and serves until SIGTERM or SIGINT.
pub fn serve(app: &App, args: ServeArgs) -> ExitCode {
    init_logging(&args.log_format, args.dev);
    let trusted = match TrustedProxies::parse(&args.trusted_proxies) {
        Ok(t) => t,
        Err(e) => return fail(format!("--trusted-proxies: {e}")),
    };
    let store: Arc<dyn WorkspaceStore> = match SqliteStore::open(&args.store) {
        Ok(s) => Arc::new(s),
        Err(e) => return fail(e),
    };
    let source = if args.dev {
        SecretSource::Environment
    } else {
        SecretSource::Store(store.as_ref())
    };
    let secrets = match Secrets::load(app.secrets, source) {
        Ok(s) => s,
        Err(e) => {
            let how = if args.dev {
                "export them as environment variables"
            } else {
                "set them with `svc secrets set NAME`"
            };
            return fail(format!("{e}; {how}"));
        }
    };
    let keys = match store.list_keys() {
        Ok(k) => Arc::new(KeyIndex::new(k)),
        Err(e) => return fail(e),
    };
    let env = if args.dev {
        Env::dev(app.version, app.git_sha, std::env::vars())
    } else {
        Env::deployed(app.version, app.git_sha)
    };
    let mut rt = Runtime::new(
        &format!("{}/{}", app.workspace_id, app.api_id),
        env,
        secrets,
        keys.clone(),
    );
    rt.trusted_proxies = trusted;
    rt.limits = Limits {
        body_bytes: args.body_limit,
        timeout: Duration::from_secs(args.timeout.max(1)),
    };
    if args.dev {
        rt.dev_trace = Some(Arc::new(print_trace));
        // `svc dev` keeps our stdin open while it runs: when it goes away, so do we.
        if std::env::var_os("SVC_EXIT_ON_STDIN_EOF").is_some() {
            std::thread::spawn(|| {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
                std::process::exit(0);
            });
        }
    }
    crate::server::install_panic_hook(rt.redactor.clone());
    let rt = Arc::new(rt);
    let routes = (app.router)(&RouteConfig {
        rate_limit_max_keys: args.rate_limit_max_keys,
        metrics: &rt.metrics,
    });
    let service = crate::server::app(rt, routes);

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    runtime.block_on(async move {
        let addr = format!("{}:{}", args.addr, args.port);
        let listener = match tokio::net::TcpListener::bind(&addr).await {
            Ok(l) => l,
            Err(e) => return fail(format!("cannot listen on {addr}: {e}")),
        };
        let _reloader = crate::server::spawn_key_reloader(store, keys, Duration::from_millis(500));
        let local = listener.local_addr().map(|a| a.to_string()).unwrap_or(addr);
        tracing::info!(
            project = app.project,
            version = app.version,
            "listening on http://{local}"
        );
        // A machine-readable line on stdout, for tools that start the server on port 0.
        println!("listening on http://{local}");
        match crate::server::serve(listener, service, crate::server::shutdown_signal()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(format!("server error: {e}")),
        }
    })
}

/// The development trace: one line per request, then each node's logs.
fn print_trace(t: &Trace) {
    use std::io::Write;
    let steps: Vec<String> = t.steps.iter().map(|s| format!("{}→{}", s.node, s.outcome)).collect();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{} {} {} [{}] {:.1} ms",
        t.method,
        t.path,
        t.status,
        steps.join(" "),
        t.duration.as_secs_f64() * 1000.0
    );
    for log in &t.logs {
        let _ = writeln!(err, "    {}: {}", log.node, log.message);
    }
}
