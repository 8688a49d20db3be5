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
    /// How many leading bits of an IPv6 client address Rate Limit nodes count by: one
    /// host is usually given a whole /64, and rotating addresses inside it must not buy a
    /// fresh limit per address. IPv4 addresses (and IPv4-mapped IPv6) count whole.
    pub ipv6_prefix: u8,
    /// Longest time a client may take to send a request head, counted from when the
    /// server starts reading it (also the longest a keep-alive connection idles between
    /// requests); the connection is closed beyond.
    pub header_read_timeout: Duration,
    /// Longest a shutdown waits for open connections to finish their requests before it
    /// closes them and the server exits.
    pub drain_timeout: Duration,
    /// Most connections open at once; a connection past it is answered 503 and closed.
    pub max_connections: usize,
    /// After a shutdown signal, how long requests that arrive on open connections are
    /// still answered (with `Connection: close`), as Envoy drains: a keep-alive client
    /// that sent a request just as the signal came gets its answer, not a closed socket.
    pub drain_window: Duration,
}

/// The default of [`Limits::drain_window`].
pub const DEFAULT_DRAIN_WINDOW: Duration = Duration::from_millis(500);

/// The default of [`Limits::max_connections`]: far more than one instance serves well,
/// and far fewer than the file descriptors a server may hold.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// The default of [`Limits::header_read_timeout`].
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The default of [`Limits::drain_timeout`]: under the 30 s a supervisor such as
/// Kubernetes waits before it kills, with room for a pre-stop hook.
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

/// The default of [`Limits::ipv6_prefix`]: the /64 a subscriber or a host is assigned.
pub const DEFAULT_IPV6_PREFIX: u8 = 64;

impl Limits {
    /// The address a Rate Limit node counts `ip` by: IPv6 cut to the configured prefix.
    pub fn rate_limit_ip(&self, ip: std::net::IpAddr) -> std::net::IpAddr {
        use std::net::{IpAddr, Ipv6Addr};
        let IpAddr::V6(v6) = ip else { return ip };
        if let Some(v4) = v6.to_ipv4_mapped() {
            return IpAddr::V4(v4);
        }
        let bits = u32::from(self.ipv6_prefix.min(128));
        let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
        IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            body_bytes: 1024 * 1024,
            timeout: Duration::from_secs(30),
            ipv6_prefix: DEFAULT_IPV6_PREFIX,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            drain_window: DEFAULT_DRAIN_WINDOW,
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

/// What `serve --dev` keeps for the Builder's traces, when `svc dev` runs one: its
/// presence is what makes steps carry their details (inputs, outputs, timing), and it
/// holds the request bodies routes read until their trace is written (the Builder shows a
/// body and replays the request with it).
#[derive(Default)]
pub struct DevDetails(std::sync::Mutex<Vec<(crate::request_id::RequestId, bytes::Bytes)>>);

impl DevDetails {
    /// At most this many bodies wait for their trace (a request that never finishes, a
    /// panic, leaves its body behind; the oldest go first).
    const MAX: usize = 256;

    pub fn keep(&self, id: &crate::request_id::RequestId, body: bytes::Bytes) {
        let mut bodies = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if bodies.len() >= Self::MAX {
            bodies.remove(0);
        }
        bodies.push((id.clone(), body));
    }

    pub fn take(&self, id: &crate::request_id::RequestId) -> Option<bytes::Bytes> {
        let mut bodies = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = bodies.iter().position(|(k, _)| k == id)?;
        Some(bodies.swap_remove(at).1)
    }
}

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
    /// `serve --dev` under `svc dev` with the Builder: see [`DevDetails`].
    pub dev_details: Option<DevDetails>,
    /// `serve --test-mode`, for `svc test` only: each response says which way every
    /// check and node went (`x-svc-trace`), and a request may move the limiters' frozen
    /// clock forward (`x-svc-test-advance-ms`).
    pub test_mode: bool,
    /// The shared stores' state, for `/healthz`.
    pub health: Arc<crate::health::Health>,
    /// `/healthz` shows the stores' state (`serve --health-details`), not only `ok`.
    pub health_details: bool,
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
            dev_details: None,
            test_mode: false,
            health: Arc::default(),
            health_details: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    #[test]
    fn ipv6_clients_count_by_their_prefix() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let limits = Limits::default();
        assert_eq!(limits.rate_limit_ip(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(
            limits.rate_limit_ip(ip("2001:db8:1:2:ffff:1:2:3")),
            limits.rate_limit_ip(ip("2001:db8:1:2::9"))
        );
        assert_ne!(
            limits.rate_limit_ip(ip("2001:db8:1:3::1")),
            limits.rate_limit_ip(ip("2001:db8:1:2::1"))
        );
        assert_eq!(limits.rate_limit_ip(ip("203.0.113.7")), ip("203.0.113.7"));
        assert_eq!(limits.rate_limit_ip(ip("::ffff:203.0.113.7")), ip("203.0.113.7"));
        let whole = Limits {
            ipv6_prefix: 128,
            ..Limits::default()
        };
        assert_eq!(whole.rate_limit_ip(ip("2001:db8::1")), ip("2001:db8::1"));
        let zero = Limits {
            ipv6_prefix: 0,
            ..Limits::default()
        };
        assert_eq!(zero.rate_limit_ip(ip("2001:db8::1")), ip("::"));
    }
}
