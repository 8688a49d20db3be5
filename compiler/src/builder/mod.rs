//! The Builder: the project in the browser, served by `svc dev` and `svc studio`.
//!
//! - [`model`]: the project as the browser sees it, read through the same pipeline as
//!   `svc check` (routes as nodes, pins and wires; the palette; assets; diagnostics).
//! - [`guard`]: who may use it (the token in the printed URL, the `Host` and `Origin`
//!   checks).
//! - [`api`]: the HTTP API under `/api/` (the project, API keys, secrets, positions).
//! - [`edit`]: edits of a flow file, made on its text and refused when it changed since
//!   the Builder read it; [`flow_ops`]: a node added, renamed or deleted, as such edits;
//!   [`wiring`]: a wire drawn, checked by the checker's own rules first; [`files`]: how
//!   flow and layout files are read and written without following a link out of the
//!   project (the project is read through [`svc_frontend::vfs::Confined`]).
//! - The web app itself is `builder/app/` at the top of the repository, embedded in the
//!   binary by `compiler/build.rs` and served as written by `api/app.rs`: plain
//!   JavaScript modules and SVG, nothing to build, nothing fetched from elsewhere.

pub mod api;
pub mod code;
pub mod dev_status;
pub mod edit;
pub mod files;
pub mod flow_ops;
pub mod guard;
pub mod model;
pub mod traces;
pub mod wiring;

use crate::workspace::Workspace;
use std::path::PathBuf;
use std::sync::Arc;


/// The Builder's port when none is given.
pub const DEFAULT_PORT: u16 = 4400;

/// The Builder's connection limits (the accept loop reads only these; the request limits
/// are a server's defaults, unused): 5 seconds to send a request head, which is also how
/// long a connection may idle (a browser on this machine sends a head at once, and opens
/// a new connection when an idle one was closed), and far fewer connections than a
/// server's, since one person's browser uses a handful.
pub const LIMITS: svc_runtime::runtime::Limits = svc_runtime::runtime::Limits {
    body_bytes: 1024 * 1024,
    timeout: std::time::Duration::from_secs(30),
    ipv6_prefix: svc_runtime::runtime::DEFAULT_IPV6_PREFIX,
    header_read_timeout: std::time::Duration::from_secs(5),
    drain_timeout: std::time::Duration::from_secs(1),
    max_connections: 128,
    drain_window: std::time::Duration::from_millis(100),
};

/// What the Builder serves.
pub struct Options {
    pub dir: PathBuf,
    pub addr: String,
    pub port: u16,
    /// When `port` is taken, listen on any free port instead of failing (`svc dev`
    /// without `--builder-port`: a second `svc dev` should still start).
    pub any_port_if_taken: bool,
    pub workspace: Workspace,
    /// The dev server's address (`http://127.0.0.1:8080`) under `svc dev`: its requests
    /// are traced in the Builder, and can be replayed.
    pub server: Option<String>,
    /// What the dev loop is doing (building, serving, failed), under `svc dev`.
    pub dev_status: Option<dev_status::Reporter>,
}

/// A running Builder.
pub struct Running {
    /// The address to open, token included.
    pub url: String,
    /// What to say when the socket it listens on is reachable beyond this machine.
    pub exposure_warning: Option<String>,
    /// Where a dev server posts its traces, and the token it sends: one that may post
    /// traces and do nothing else.
    pub traces_url: String,
    pub traces_token: String,
    thread: std::thread::JoinHandle<()>,
}

impl Running {
    /// Serves until the process ends.
    pub fn wait(self) {
        let _ = self.thread.join();
    }
}

/// Starts the Builder on its own thread and runtime; returns once it listens.
pub fn start(options: Options) -> Result<Running, String> {
    let bind = |port: u16| std::net::TcpListener::bind((options.addr.as_str(), port));
    let listener = match bind(options.port) {
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && options.any_port_if_taken => bind(0),
        other => other,
    }
    .map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrInUse {
            format!(
                "{}:{} is in use (another `svc dev` or `svc studio`?); choose another port with --builder-port",
                options.addr, options.port
            )
        } else {
            format!("the Builder cannot listen on {}:{}: {e}", options.addr, options.port)
        }
    })?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let guard = guard::Guard::new(addr.port());
    // A URL that reaches the socket: every interface includes loopback.
    let host = match addr.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => format!("127.0.0.1:{}", addr.port()),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => format!("[::1]:{}", addr.port()),
        std::net::IpAddr::V6(ip) => format!("[{ip}]:{}", addr.port()),
        ip => format!("{ip}:{}", addr.port()),
    };
    let exposure_warning = exposure_warning(addr);
    let url = format!("http://{host}/?token={}", guard.token());
    let traces_url = format!("http://{host}/api/traces");
    let traces_token = guard.traces_token().to_string();
    let state = Arc::new(api::State::new(
        options.dir,
        options.workspace,
        guard,
        options.server,
        options.dev_status.map(|r| r.subscribe()),
    ));
    let thread = std::thread::Builder::new()
        .name("svc-builder".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the Builder");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
                let app = api::router(state);
                // The accept loop of generated servers: a request-head deadline, idle
                // connections closed, a cap on open ones. The Builder shares `svc dev`'s
                // descriptors, and a page that cannot connect loses the user's work.
                let served = svc_runtime::server::serve_with_limits(listener, app, &LIMITS, std::future::pending());
                if let Err(e) = served.await {
                    eprintln!("error: the Builder stopped: {e}");
                }
            });
        })
        .map_err(|e| e.to_string())?;
    Ok(Running {
        url,
        exposure_warning,
        traces_url,
        traces_token,
        thread,
    })
}

/// What `svc studio` and `svc dev` say about listening beyond loopback: decided on the
/// socket's bound address, not on what `--addr` said (`0`, `0.0.0.0`, `::`, a host name).
fn exposure_warning(bound: std::net::SocketAddr) -> Option<String> {
    (!bound.ip().is_loopback()).then(|| {
        format!(
            "warning: the Builder listens on {bound}, beyond this machine: anyone who can reach it and learns the URL's token can create API keys and set secrets. Prefer the default (127.0.0.1) and an SSH tunnel."
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_exposure_warning_is_decided_on_the_bound_address() {
        let warned = |a: &str| super::exposure_warning(a.parse().unwrap()).is_some();
        assert!(!warned("127.0.0.1:4400") && !warned("[::1]:4400") && !warned("127.0.0.2:1"));
        assert!(warned("0.0.0.0:4400") && warned("[::]:4400") && warned("192.168.1.20:4400"));
    }
}
