//! The run context (spec §2.6): what `run(ctx)` can see and do.

use crate::failure::{FailureCode, NodeFailure};
use crate::fetch;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// Request metadata (`ctx.request`). Every field is optional: the runtime fills what it has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestMeta {
    pub method: Option<String>,
    pub url: Option<String>,
    /// Header names in lowercase. Credentials (`authorization`, `cookie`, the API key
    /// header) are not included: code nodes get credentials only from `ctx.secret`.
    pub headers: Option<BTreeMap<String, String>>,
}

/// Runtime metadata (`ctx.env`).
///
/// Deployed, it holds only `isDev`, `version` and `gitSha`. In local development it
/// mirrors the process environment as well. It is never a pass-through to the engine's
/// own environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    pub is_dev: bool,
    pub version: String,
    pub git_sha: String,
    vars: BTreeMap<String, String>,
}

impl Env {
    /// The deployed environment: metadata only.
    pub fn deployed(version: impl Into<String>, git_sha: impl Into<String>) -> Self {
        Env {
            is_dev: false,
            version: version.into(),
            git_sha: git_sha.into(),
            vars: BTreeMap::new(),
        }
    }

    /// The development environment: metadata plus a snapshot of the process environment,
    /// less svc's own variables ([`Env::is_svc_own`]).
    pub fn dev(
        version: impl Into<String>,
        git_sha: impl Into<String>,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Self {
        Env {
            is_dev: true,
            version: version.into(),
            git_sha: git_sha.into(),
            vars: vars.into_iter().filter(|(name, _)| !Env::is_svc_own(name)).collect(),
        }
    }

    /// Whether `name` is a variable of svc's, never shown to nodes: `SVC_…` (the
    /// server's flags, such as a store URL with its password, the secrets key, and the
    /// Builder's token for traces under `svc dev`) and systemd's socket hand-over
    /// (`LISTEN_FDS`, `LISTEN_PID`, `LISTEN_FDNAMES`).
    pub fn is_svc_own(name: &str) -> bool {
        name.starts_with("SVC_") || matches!(name, "LISTEN_FDS" | "LISTEN_PID" | "LISTEN_FDNAMES")
    }

    /// Looks a variable up. `isDev`, `version` and `gitSha` are always present; other
    /// names only in development.
    pub fn get(&self, name: &str) -> Option<String> {
        match name {
            "isDev" => Some(self.is_dev.to_string()),
            "version" => Some(self.version.clone()),
            "gitSha" => Some(self.git_sha.clone()),
            _ => self.vars.get(name).cloned(),
        }
    }

    /// Every variable visible to nodes.
    pub fn vars(&self) -> BTreeMap<String, String> {
        let mut all = self.vars.clone();
        all.insert("isDev".into(), self.is_dev.to_string());
        all.insert("version".into(), self.version.clone());
        all.insert("gitSha".into(), self.git_sha.clone());
        all
    }
}

/// A secret value. It prints as `[redacted]` so that it cannot reach a log by accident;
/// use [`Secret::expose`] where the value is really needed (a request header, a signature).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret's value.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// A boxed future, for the [`Host`] trait.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the runtime provides to nodes: secrets and outbound HTTP. The server runtime,
/// `svc dev`, and [`crate::testing::TestHost`] implement it.
pub trait Host: Send + Sync + 'static {
    /// The value of a secret, if the runtime has it.
    fn secret(&self, name: &str) -> Option<Secret>;

    /// Performs an outbound HTTP request.
    fn fetch(&self, request: fetch::Request) -> BoxFuture<'_, Result<fetch::Response, fetch::FetchError>>;
}

/// One `ctx.log(...)` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub node_key: &'static str,
    pub message: String,
}

/// The context a node's `run` receives.
pub struct RunContext<I> {
    /// The resolved input values, typed by the node's declared input pins.
    pub inputs: I,
    /// Request metadata, when the node runs for an HTTP request.
    pub request: Option<Arc<RequestMeta>>,
    /// Runtime metadata.
    pub env: Arc<Env>,
    host: Arc<dyn Host>,
    node_key: &'static str,
    logs: Mutex<Vec<String>>,
    /// Whether anyone reads the log lines: when not, `log` does not even format them.
    keep_logs: bool,
}

impl<I> RunContext<I> {
    /// Builds a context. Called by the runtime (and by tests through
    /// [`crate::testing::TestHost::context`]).
    pub fn new(
        node_key: &'static str,
        inputs: I,
        request: Option<Arc<RequestMeta>>,
        env: Arc<Env>,
        host: Arc<dyn Host>,
    ) -> Self {
        RunContext {
            inputs,
            request,
            env,
            host,
            node_key,
            logs: Mutex::new(Vec::new()),
            keep_logs: true,
        }
    }

    /// Makes [`RunContext::log`] drop its lines unformatted. The runtime sets this when
    /// no log subscriber and no trace wants a node's lines, so a node that logs on every
    /// request costs nothing for it.
    pub fn discarding_logs(mut self) -> Self {
        self.keep_logs = false;
        self
    }

    /// Whether [`RunContext::log`] keeps lines, for engines that run node code written in
    /// another language (they skip formatting too). Not for node code.
    #[doc(hidden)]
    pub fn keeps_logs(&self) -> bool {
        self.keep_logs
    }

    /// The runtime's host (secrets, fetch), for engines that run node code written in
    /// another language. Not for node code.
    #[doc(hidden)]
    pub fn host(&self) -> &Arc<dyn Host> {
        &self.host
    }

    /// The key of the node being run.
    pub fn node_key(&self) -> &'static str {
        self.node_key
    }

    /// Reads a secret declared in `svc.config.yaml`. In development it comes from the
    /// environment variable of the same name; deployed, from the workspace secret store.
    /// The compiler checks that `name` is declared.
    pub fn secret(&self, name: &str) -> Result<Secret, NodeFailure> {
        self.host.secret(name).ok_or_else(|| NodeFailure {
            message: format!("secret `{name}` is not available"),
            code: Some("SECRET_MISSING".into()),
        })
    }

    /// Writes a debug log line. `svc dev` prints the lines after each run; servers emit
    /// them through `tracing` with the route, node and request id.
    pub fn log(&self, message: impl fmt::Display) {
        if !self.keep_logs {
            return;
        }
        let line = message.to_string();
        match self.logs.lock() {
            Ok(mut logs) => logs.push(line),
            Err(poisoned) => poisoned.into_inner().push(line),
        }
    }

    /// A structured failure: `return Err(ctx.fail("out of stock", "OUT_OF_STOCK"))`.
    /// The code is optional: pass `None` or `()` for none.
    pub fn fail(&self, message: impl Into<String>, code: impl Into<FailureCode>) -> NodeFailure {
        NodeFailure::new(message, code)
    }

    /// Web-style outbound HTTP (spec §4.3): `ctx.fetch(Request::get(url)).await`.
    /// Sockets are otherwise off limits to node code.
    pub async fn fetch(&self, request: fetch::Request) -> Result<fetch::Response, fetch::FetchError> {
        self.host.fetch(request).await
    }

    /// The lines logged so far.
    pub fn logs(&self) -> Vec<String> {
        match self.logs.lock() {
            Ok(logs) => logs.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Takes the logged lines (the runtime calls this after `run`).
    pub fn take_logs(&self) -> Vec<LogLine> {
        let lines = match self.logs.lock() {
            Ok(mut logs) => std::mem::take(&mut *logs),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        lines
            .into_iter()
            .map(|message| LogLine {
                node_key: self.node_key,
                message,
            })
            .collect()
    }
}
