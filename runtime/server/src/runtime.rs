//! The state a server shares across requests, built once at start-up.

use crate::apikey::KeyIndex;
use crate::client_ip::TrustedProxies;
use crate::fetch::{FetchLimits, Fetcher};
use crate::metrics::Metrics;
use crate::secrets::{Redactor, Secrets};
use std::sync::Arc;
use std::time::Duration;
use svc_sdk::context::BoxFuture;
use svc_sdk::fetch::{FetchError, Request, Response};
use svc_sdk::{Env, Host, Secret};

/// Limits applied to every request.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest accepted request body (413 beyond).
    pub body_bytes: usize,
    /// Longest time to answer a request (408 beyond).
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            body_bytes: 1024 * 1024,
            timeout: Duration::from_secs(30),
        }
    }
}

/// What nodes get through `ctx.secret` and `ctx.fetch`.
pub struct RuntimeHost {
    secrets: Secrets,
    fetcher: Fetcher,
}

impl RuntimeHost {
    pub fn new(secrets: Secrets, limits: FetchLimits) -> Self {
        RuntimeHost {
            secrets,
            fetcher: Fetcher::new(limits),
        }
    }
}

impl Host for RuntimeHost {
    fn secret(&self, name: &str) -> Option<Secret> {
        self.secrets.get(name)
    }

    fn fetch(&self, request: Request) -> BoxFuture<'_, Result<Response, FetchError>> {
        Box::pin(self.fetcher.fetch(request))
    }
}

/// Receives one line per request in development (`svc dev` prints them).
pub type DevTrace = Arc<dyn Fn(&crate::exchange::Trace) + Send + Sync>;

/// Shared server state.
pub struct Runtime {
    /// `<workspace_id>/<api_id>`: the realm of `WWW-Authenticate` challenges.
    pub realm: String,
    pub env: Arc<Env>,
    pub host: Arc<dyn Host>,
    pub keys: Arc<KeyIndex>,
    pub metrics: Metrics,
    pub redactor: Redactor,
    pub trusted_proxies: TrustedProxies,
    pub limits: Limits,
    pub dev_trace: Option<DevTrace>,
    /// The shared stores' state, for `/healthz`.
    pub health: Arc<crate::health::Health>,
}

impl Runtime {
    /// A runtime for tests and embedding: no keys, no secrets, deployed environment.
    pub fn for_tests(realm: &str) -> Runtime {
        Runtime::new(
            realm,
            Env::deployed("0.0.0", "test"),
            Secrets::default(),
            Arc::new(KeyIndex::default()),
        )
    }

    pub fn new(realm: &str, env: Env, secrets: Secrets, keys: Arc<KeyIndex>) -> Runtime {
        let redactor = secrets.redactor();
        Runtime {
            realm: realm.to_string(),
            env: Arc::new(env),
            host: Arc::new(RuntimeHost::new(secrets, FetchLimits::default())),
            keys,
            metrics: Metrics::default(),
            redactor,
            trusted_proxies: TrustedProxies::default(),
            limits: Limits::default(),
            dev_trace: None,
            health: Arc::default(),
        }
    }
}
