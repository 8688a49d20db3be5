//! The main function of a generated server: its command line, start-up, and serving.
//!
//! ```text
//! <project> serve [--addr 127.0.0.1] [--port 8080]
//!                 [--store .svc/workspace.db | postgres://…] [--secrets-key-file PATH]
//!                 [--rate-limit-store memory | redis://… | rediss://…]
//!                 [--rate-limit-failure local|open|closed] [--rate-limit-timeout-ms 50]
//!                 [--trusted-proxies 10.0.0.0/8,…] [--client-ip-header x-forwarded-for]
//!                 [--body-limit 1048576] [--timeout 30]
//!                 [--rate-limit-max-keys 1000000] [--log-format text|json] [--dev]
//! <project> routes
//! <project> --version
//! ```
//!
//! Every flag has an environment variable (`SVC_ADDR`, `SVC_PORT`, `SVC_STORE`,
//! `SVC_SECRETS_KEY_FILE` (or the key itself in `SVC_SECRETS_KEY`), `SVC_RATE_LIMIT_STORE`,
//! `SVC_RATE_LIMIT_FAILURE`, `SVC_RATE_LIMIT_TIMEOUT_MS`, `SVC_TRUSTED_PROXIES`,
//! `SVC_CLIENT_IP_HEADER`, `SVC_BODY_LIMIT`, `SVC_TIMEOUT`, `SVC_RATE_LIMIT_MAX_KEYS`, `SVC_LOG_FORMAT`,
//! `SVC_DEV`); `SVC_LOG` sets the log filter (default [`DEFAULT_LOG`]: no line per request).

use crate::apikey::KeyIndex;
use crate::client_ip::{ClientIpHeader, TrustedProxies};
use crate::exchange::Trace;
use crate::ratelimit::{FailurePolicy, MemoryStore, Quota, RateLimiter, RedisLimiter, RedisOptions};
use crate::runtime::{Limits, Runtime};
use crate::seal::{KeySource, SecretsKey};
use crate::secrets::{Requirement, SecretSource, Secrets};
use crate::store::{DEFAULT_PATH, Location, WorkspaceStore};
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
#[derive(Debug, Clone)]
pub struct RouteConfig<'a> {
    pub rate_limit_max_keys: usize,
    /// Where routes resolve their metric series, once.
    pub metrics: &'a crate::metrics::Metrics,
    /// The shared limiter (Redis), if the server was given one.
    pub shared_limiter: Option<Arc<RedisLimiter>>,
    /// What Rate Limit nodes do when the shared limiter fails, unless a node says.
    pub failure_policy: FailurePolicy,
    /// `serve --test-mode` under `svc test`: the JWK set of the test key every Check JWT
    /// verifies with instead of its own (`SVC_TEST_JWKS`).
    pub test_jwks: Option<&'static str>,
}

impl<'a> RouteConfig<'a> {
    /// The defaults, with series in `metrics`.
    pub fn new(metrics: &'a crate::metrics::Metrics) -> Self {
        RouteConfig {
            rate_limit_max_keys: crate::ratelimit::memory::DEFAULT_MAX_KEYS,
            metrics,
            shared_limiter: None,
            failure_policy: FailurePolicy::default(),
            test_jwks: None,
        }
    }

    /// The limiter of Rate Limit node `node` of `route`: shared when the server has a
    /// shared store (answering with `on_store_error`, else the server's policy, when it
    /// fails), else in this instance's memory.
    pub fn rate_limiter(
        &self,
        route: &'static str,
        node: &'static str,
        quota: Quota,
        on_store_error: Option<FailurePolicy>,
    ) -> RateLimiter {
        let limiter = RateLimiter::new(node, quota, MemoryStore::with_max_keys(self.rate_limit_max_keys));
        match &self.shared_limiter {
            Some(shared) => limiter.shared(
                shared.clone(),
                format!("{route}:{node}"),
                on_store_error.unwrap_or(self.failure_policy),
            ),
            None => limiter,
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
    Serve(Box<ServeArgs>),
    /// List the routes: method, path, and the chain of nodes of each.
    Routes,
}

#[derive(clap::Args, Clone)]
pub struct ServeArgs {
    /// The address to listen on [default: 127.0.0.1].
    #[arg(long, env = "SVC_ADDR")]
    pub addr: Option<String>,
    /// The port to listen on (0: any free port) [default: 8080].
    #[arg(long, env = "SVC_PORT")]
    pub port: Option<u16>,
    /// The workspace store (API keys, secret values): an SQLite file, or a
    /// `postgres://user:password@host/db` URL shared by every instance.
    #[arg(long, env = "SVC_STORE", default_value = DEFAULT_PATH)]
    pub store: String,
    /// A file holding the key secret values are sealed with (base64; `svc secrets keygen`).
    /// Or the key itself in SVC_SECRETS_KEY. Default for an SQLite store: secrets.key beside it.
    #[arg(long, env = "SVC_SECRETS_KEY_FILE", value_name = "PATH")]
    pub secrets_key_file: Option<PathBuf>,
    /// Where Rate Limit nodes count: `memory` (this instance), or a Redis/Valkey URL
    /// (`redis://…`, `rediss://…` for TLS) shared by every instance.
    #[arg(
        long,
        env = "SVC_RATE_LIMIT_STORE",
        default_value = "memory",
        value_name = "memory|URL"
    )]
    pub rate_limit_store: String,
    /// What a Rate Limit node answers when the shared store fails (unless its flow says):
    /// `local` (count in this instance), `open` (let through), `closed` (503).
    #[arg(
        long,
        env = "SVC_RATE_LIMIT_FAILURE",
        default_value = "local",
        value_name = "local|open|closed"
    )]
    pub rate_limit_failure: FailurePolicy,
    /// How long a request waits for the shared rate-limit store, in milliseconds.
    #[arg(long, env = "SVC_RATE_LIMIT_TIMEOUT_MS", default_value_t = 50, value_name = "MS", value_parser = at_least_one())]
    pub rate_limit_timeout_ms: u64,
    /// Proxies whose forwarded headers are believed: comma-separated IPs or CIDR blocks.
    #[arg(long, env = "SVC_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,
    /// The one header trusted proxies write the client's address in (`X-Forwarded-For`,
    /// `Forwarded`, `X-Real-IP`, …); every other forwarding header is ignored.
    #[arg(
        long,
        env = "SVC_CLIENT_IP_HEADER",
        default_value = "x-forwarded-for",
        value_name = "HEADER"
    )]
    pub client_ip_header: String,
    /// `/healthz` also shows each shared store's state (reachable, keys loaded, the Redis
    /// breaker) and answers `degraded` when one fails. Off by default: `/healthz` is
    /// public, and those are an attacker's facts too.
    #[arg(long, env = "SVC_HEALTH_DETAILS")]
    pub health_details: bool,
    /// The largest request body, in bytes.
    #[arg(long, env = "SVC_BODY_LIMIT", default_value_t = 1024 * 1024)]
    pub body_limit: usize,
    /// Seconds to answer a request before 408.
    #[arg(long, env = "SVC_TIMEOUT", default_value_t = 30, value_parser = at_least_one())]
    pub timeout: u64,
    /// Milliseconds a client may take to send a request head (and a keep-alive connection
    /// may idle between requests) before its connection is closed.
    #[arg(long, env = "SVC_HEADER_READ_TIMEOUT_MS", default_value_t = crate::runtime::DEFAULT_HEADER_READ_TIMEOUT.as_millis() as u64, value_name = "MS", value_parser = at_least_one())]
    pub header_read_timeout_ms: u64,
    /// Milliseconds a shutdown (SIGTERM, Ctrl-C) waits for open requests to finish before
    /// it closes the remaining connections and exits.
    #[arg(long, env = "SVC_SHUTDOWN_TIMEOUT_MS", default_value_t = crate::runtime::DEFAULT_DRAIN_TIMEOUT.as_millis() as u64, value_name = "MS")]
    pub shutdown_timeout_ms: u64,
    /// Milliseconds after a shutdown signal during which requests arriving on open
    /// connections are still answered (with `Connection: close`), within the shutdown
    /// timeout.
    #[arg(long, env = "SVC_SHUTDOWN_DRAIN_MS", default_value_t = crate::runtime::DEFAULT_DRAIN_WINDOW.as_millis() as u64, value_name = "MS")]
    pub shutdown_drain_ms: u64,
    /// Most connections open at once; a connection past it is answered 503 and closed.
    #[arg(long, env = "SVC_MAX_CONNECTIONS", default_value_t = crate::runtime::DEFAULT_MAX_CONNECTIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections: usize,
    /// Leading bits of an IPv6 client address that Rate Limit nodes count by (`by: ip`):
    /// addresses inside one /64 are one client by default. 128 counts each address.
    #[arg(long, env = "SVC_RATE_LIMIT_IPV6_PREFIX", default_value_t = crate::runtime::DEFAULT_IPV6_PREFIX, value_parser = clap::value_parser!(u8).range(16..=128))]
    pub rate_limit_ipv6_prefix: u8,
    /// Keys each Rate Limit node tracks at most.
    #[arg(long, env = "SVC_RATE_LIMIT_MAX_KEYS", default_value_t = crate::ratelimit::memory::DEFAULT_MAX_KEYS)]
    pub rate_limit_max_keys: usize,
    /// Log lines as text or JSON.
    #[arg(long, env = "SVC_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,
    /// Development mode: secrets from environment variables, `ctx.env` mirrors the
    /// process environment, and one line per request on stderr.
    #[arg(long, env = "SVC_DEV")]
    pub dev: bool,
    /// Confirms `--dev` on an address beyond loopback, where every client can reach nodes
    /// that see the whole process environment.
    #[arg(long, env = "SVC_DEV_BEYOND_LOOPBACK", requires = "dev")]
    pub dev_beyond_loopback: bool,
    /// For `svc test` only, never in production: every response carries `x-svc-trace`
    /// (which way each check and node went), the rate limiters' clock stands still, and
    /// `x-svc-test-advance-ms` on a request moves it forward. No environment variable
    /// turns it on.
    #[arg(long, hide = true)]
    pub test_mode: bool,
}

/// A duration that must not be zero: a request deadline of 0 would answer every request
/// 408, a header deadline of 0 close every connection, so 0 is refused rather than read as
/// "none" or quietly raised.
fn at_least_one() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..)
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
        Some(Command::Serve(args)) => serve(&app, *args),
    }
}

/// What `serve` logs unless `SVC_LOG` says otherwise: start, stop, reloads, warnings and
/// errors (node failures the flow does not route, and panics, among them), but no line
/// per request. The access log and nodes' lines (`ctx.log`, failures the flow routes)
/// are opt-in (`SVC_LOG=info`), as in Envoy, Caddy and Traefik:
/// at tens of thousands of requests a second they would be the server's largest cost
/// (docs/performance.md measures it), and metrics count every request anyway. In
/// development the trace line of each request says what they would.
const DEFAULT_LOG: &str = "info,svc::access=off,svc::node=off";

fn init_logging(format: &str) {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::prelude::*;
    // `target=level` directives, comma-separated (`Targets` rather than `EnvFilter`, whose
    // span and field filters nobody needs here and whose regex engine doubled the
    // binary's logging code).
    let default = || DEFAULT_LOG.parse::<Targets>().expect("the default log filter parses");
    let filter = match std::env::var("SVC_LOG") {
        Ok(directives) => directives.parse::<Targets>().unwrap_or_else(|e| {
            eprintln!("warning: SVC_LOG=`{directives}` is not a log filter ({e}); logging with `{DEFAULT_LOG}`");
            default()
        }),
        Err(_) => default(),
    };
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none();
    // Written by a thread of its own: a reader of stderr that stops reading cannot stop
    // the server (crate::log_lines).
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(crate::log_lines::Stderr { ansi })
        .with_ansi(ansi);
    let _ = if format == "json" {
        tracing_subscriber::registry()
            .with(layer.json().with_filter(filter))
            .try_init()
    } else {
        tracing_subscriber::registry()
            .with(layer.with_filter(filter))
            .try_init()
    };
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    // After the lines logged before it, which are still queued.
    crate::log_lines::flush(LOG_FLUSH_LIMIT);
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

/// Where a server listens unless told otherwise.
pub const DEFAULT_ADDR: &str = "127.0.0.1";
pub const DEFAULT_PORT: u16 = 8080;

/// How long an exiting server waits for its queued log lines to be written.
const LOG_FLUSH_LIMIT: Duration = Duration::from_secs(2);

/// Starts the server and serves until SIGTERM or SIGINT.
pub fn serve(app: &App, args: ServeArgs) -> ExitCode {
    init_logging(&args.log_format);
    let code = start_and_serve(app, args);
    crate::log_lines::flush(LOG_FLUSH_LIMIT);
    code
}

fn start_and_serve(app: &App, args: ServeArgs) -> ExitCode {
    // Before any file is opened: a socket handed over is file descriptor 3.
    let handed = match crate::listen::inherited(args.dev) {
        Ok(socket) => socket,
        Err(e) => return fail(e),
    };
    let trusted = match TrustedProxies::parse(&args.trusted_proxies) {
        Ok(t) => t,
        Err(e) => return fail(format!("--trusted-proxies: {e}")),
    };
    let trusted = match ClientIpHeader::parse(&args.client_ip_header) {
        Ok(header) => trusted.with_header(header),
        Err(e) => return fail(format!("--client-ip-header: {e}")),
    };
    let location = Location::parse(&args.store);
    let store: Arc<dyn WorkspaceStore> = match location.open() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    for warning in store.warnings() {
        tracing::warn!("{warning}");
    }
    let secrets_key = match load_secrets_key(&args, &location, store.as_ref()) {
        Ok(k) => k,
        Err(e) => return fail(e),
    };
    let source = if args.dev {
        SecretSource::Environment
    } else {
        SecretSource::Store(store.as_ref(), secrets_key.as_ref())
    };
    let secrets = match Secrets::load(app.secrets, source) {
        Ok(s) => s,
        Err(e) => {
            let how = if args.test_mode {
                // `svc test` gives each test file a store of its own: `svc secrets set`
                // would change another store.
                "give them values in the test file's `secrets:` block (`secrets: { NAME: value }`)"
            } else if args.dev {
                "export them as environment variables"
            } else {
                "set them with `svc secrets set NAME`"
            };
            return fail(format!("{e}; {how}"));
        }
    };
    let keys = match store.index_keys() {
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
    rt.health_details = args.health_details;
    rt.limits = Limits {
        body_bytes: args.body_limit,
        timeout: Duration::from_secs(args.timeout),
        ipv6_prefix: args.rate_limit_ipv6_prefix,
        header_read_timeout: Duration::from_millis(args.header_read_timeout_ms),
        drain_timeout: Duration::from_millis(args.shutdown_timeout_ms),
        max_connections: args.max_connections,
        drain_window: Duration::from_millis(args.shutdown_drain_ms),
    };
    rt.test_mode = args.test_mode;
    if args.test_mode {
        crate::ratelimit::freeze_test_clock();
    }
    let mut trace_forwarder = None;
    if args.dev {
        rt.dev_trace = Some(match crate::dev_traces::from_env() {
            // Under `svc dev` with the Builder: the terminal line, and the trace to it.
            Some((sink, forwarder)) => {
                trace_forwarder = Some(forwarder);
                rt.dev_details = Some(Default::default());
                Arc::new(move |t: &Trace| {
                    print_trace(t);
                    sink.send(t);
                })
            }
            None => Arc::new(print_trace),
        });
        // `svc dev` keeps our stdin open while it runs: when it goes away, so do we.
        if std::env::var_os("SVC_EXIT_ON_STDIN_EOF").is_some() {
            std::thread::spawn(|| {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
                crate::log_lines::flush(LOG_FLUSH_LIMIT);
                std::process::exit(0);
            });
        }
    }
    crate::server::install_panic_hook(rt.redactor.clone());
    let runtime = match crate::scheduler::build() {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    // The shared limiter's connection is made inside the runtime that drives it.
    let _entered = runtime.enter();
    let shared_limiter = match shared_limiter(&args, &rt, store.as_ref(), secrets_key.as_ref()) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    rt.health.set_workspace(store.describe());
    rt.health.reloaded(keys.len());
    rt.metrics.stores.keys_loaded.set(keys.len() as i64);
    if let Some(limiter) = &shared_limiter {
        rt.health.set_rate_limit(limiter.clone());
    }
    let rt = Arc::new(rt);
    let routes = (app.router)(&RouteConfig {
        rate_limit_max_keys: args.rate_limit_max_keys,
        metrics: &rt.metrics,
        shared_limiter: shared_limiter.clone(),
        failure_policy: args.rate_limit_failure,
        // Read only in test mode, which no deployed server runs in.
        test_jwks: args
            .test_mode
            .then(|| std::env::var("SVC_TEST_JWKS").ok())
            .flatten()
            .map(|jwks| &*Box::leak(jwks.into_boxed_str())),
    });
    let service = crate::server::app(rt.clone(), routes);
    drop(_entered);

    runtime.block_on(async move {
        if let Some(forwarder) = trace_forwarder {
            tokio::spawn(forwarder.run());
        }
        if let Some(limiter) = &shared_limiter {
            match limiter.ping(Duration::from_secs(2)).await {
                Ok(()) => tracing::info!(store = limiter.display(), "rate limits shared in Redis"),
                Err(e) => tracing::error!(
                    store = limiter.display(),
                    "the shared rate-limit store does not answer ({e}); Rate Limit nodes use their failure policy until it does"
                ),
            }
        }
        let addr = format!(
            "{}:{}",
            args.addr.as_deref().unwrap_or(DEFAULT_ADDR),
            args.port.unwrap_or(DEFAULT_PORT)
        );
        let listener = match handed {
            // `--addr` and `--port` are the handed socket's business then.
            Some(socket) => match socket
                .set_nonblocking(true)
                .and_then(|()| tokio::net::TcpListener::from_std(socket))
            {
                Ok(l) => {
                    if args.addr.is_some() || args.port.is_some() {
                        let at = l.local_addr().map(|a| a.to_string()).unwrap_or_default();
                        tracing::warn!(
                            "--addr/--port (or SVC_ADDR/SVC_PORT) ignored: listening on the socket handed over ({FDS_ENV}), {at}",
                            FDS_ENV = crate::listen::FDS_ENV
                        );
                    }
                    l
                }
                Err(e) => return fail(format!("cannot listen on the socket handed over: {e}")),
            },
            None => match tokio::net::TcpListener::bind(&addr).await {
                Ok(l) => l,
                Err(e) => return fail(format!("cannot listen on {addr}: {e}")),
            },
        };
        // A key created after the last reload is looked up (bounded) before a 401.
        keys.look_up_misses_in(crate::apikey::lookup::MissLookup::new(store.clone(), rt.metrics.stores.clone()));
        let _reloader = crate::server::spawn_key_reloader(store, keys, rt);
        if args.dev {
            let loopback = listener.local_addr().is_ok_and(|a| a.ip().is_loopback());
            if let Err(e) = dev_mode_allowed(loopback, args.dev_beyond_loopback) {
                return fail(e);
            }
            // `svc dev` and `svc run` start servers in this mode on purpose, on loopback.
            if !loopback || std::env::var_os("SVC_EXIT_ON_STDIN_EOF").is_none() {
                tracing::warn!("{DEV_MODE_WARNING}");
            }
        }
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

/// The secrets key, from a flag, the environment, or the default file beside an SQLite
/// store; checked against the values the store holds, so that a wrong key stops the
/// server at start-up with a message that names the keys' ids, never a value.
fn load_secrets_key(
    args: &ServeArgs,
    location: &Location,
    store: &dyn WorkspaceStore,
) -> Result<Option<SecretsKey>, String> {
    let default_file = location.default_key_file();
    let found = KeySource::resolve(args.secrets_key_file.as_deref(), default_file.as_deref())?;
    let Some((key, source)) = found else {
        if !store.plaintext_secrets().map_err(|e| e.to_string())?.is_empty() {
            return Err(format!(
                "{} holds secret values in clear from an older svc; run `svc secrets list` once to seal them",
                store.describe()
            ));
        }
        return Ok(None);
    };
    let sealed = crate::secrets::prepare_store(store, &key).map_err(|e| format!("{e} (the key came from {source})"))?;
    if sealed > 0 {
        tracing::info!(sealed, "sealed secret values an older svc stored in clear");
    }
    Ok(Some(key))
}

/// The shared limiter named by `--rate-limit-store`, if any.
fn shared_limiter(
    args: &ServeArgs,
    rt: &Runtime,
    store: &dyn WorkspaceStore,
    key: Option<&SecretsKey>,
) -> Result<Option<Arc<RedisLimiter>>, String> {
    let url = args.rate_limit_store.trim();
    if url.is_empty() || url == "memory" {
        return Ok(None);
    }
    let schemes = [
        "redis://",
        "rediss://",
        "valkey://",
        "valkeys://",
        "redis+cluster://",
        "rediss+cluster://",
    ];
    if !schemes.iter().any(|s| url.starts_with(s)) {
        return Err(format!(
            "--rate-limit-store: `{}` is neither `memory` nor a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL",
            crate::url_redaction::redact_url(url)
        ));
    }
    if key.is_none() {
        tracing::warn!(
            "no secrets key: the client IPs and users that Rate Limit nodes count by are hashed into Redis keys without one; set SVC_SECRETS_KEY (the same on every instance)"
        );
    }
    let options = RedisOptions {
        url: url.replacen("valkey", "redis", 1),
        timeout: Duration::from_millis(args.rate_limit_timeout_ms),
        // Kept in the store, so that a rotation of the secrets key keeps every count.
        mac_key: key.map(|k| crate::secrets::rate_limit_mac_key(store, k)).transpose()?,
    };
    RedisLimiter::connect(&options, &rt.realm, rt.metrics.stores.clone()).map(Some)
}

const DEV_MODE_WARNING: &str = "DEVELOPMENT MODE (--dev / SVC_DEV): ctx.env shows nodes the whole process environment (SVC_SECRETS_KEY and store URLs included) and secrets come from environment variables; never run a production server this way";

/// `--dev` beyond loopback only when confirmed: every client could then reach nodes that
/// see the process environment.
fn dev_mode_allowed(loopback: bool, confirmed: bool) -> Result<(), String> {
    if loopback || confirmed {
        return Ok(());
    }
    Err(format!(
        "--dev (SVC_DEV) on an address beyond loopback: {DEV_MODE_WARNING}. Serve without it, or confirm with --dev-beyond-loopback"
    ))
}

/// The development trace: one line per request, then each node's logs (queued with the
/// log lines, whose order they keep).
fn print_trace(t: &Trace) {
    use std::io::Write;
    let steps: Vec<String> = t.steps.iter().map(|s| format!("{}→{}", s.node, s.outcome)).collect();
    let mut err = Vec::with_capacity(256);
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
    crate::log_lines::write(&err);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(["server", "serve"].iter().chain(args))
    }

    #[test]
    fn zero_deadlines_and_unknown_log_formats_are_refused_by_name() {
        for flag in ["--timeout", "--header-read-timeout-ms", "--rate-limit-timeout-ms"] {
            let error = parse(&[flag, "0"])
                .err()
                .unwrap_or_else(|| panic!("{flag} 0 was accepted"));
            assert!(error.to_string().contains(flag), "{flag}: {error}");
            assert!(parse(&[flag, "1"]).is_ok(), "{flag} 1");
        }
        let error = parse(&["--log-format", "yaml"])
            .err()
            .expect("--log-format yaml was accepted");
        assert!(error.to_string().contains("[possible values: text, json]"), "{error}");
        assert!(parse(&["--log-format", "json"]).is_ok());
    }

    #[test]
    fn dev_mode_beyond_loopback_needs_a_second_flag() {
        assert!(dev_mode_allowed(true, false).is_ok());
        let refused = dev_mode_allowed(false, false).unwrap_err();
        assert!(
            refused.contains("--dev-beyond-loopback") && refused.contains("SVC_SECRETS_KEY"),
            "{refused}"
        );
        assert!(dev_mode_allowed(false, true).is_ok());
        // The confirmation means nothing without --dev.
        assert!(parse(&["--dev-beyond-loopback"]).is_err());
        assert!(parse(&["--dev", "--dev-beyond-loopback"]).is_ok());
    }
}
