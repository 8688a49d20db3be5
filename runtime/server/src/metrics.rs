//! Prometheus metrics, served at `/metrics`:
//!
//! | metric | labels |
//! |--------|--------|
//! | `svc_http_requests_total` | `route`, `method`, `status` |
//! | `svc_http_request_duration_seconds` (histogram) | `route` |
//! | `svc_protection_outcomes_total` | `route`, `node`, `check`, `outcome` |
//! | `svc_node_runs_total` | `route`, `node`, `outcome` (`ok`, `failed`, `panicked`) |
//! | `svc_rate_limit_store_errors_total` | `kind` (`error`, `timeout`, `breaker_open`) |
//! | `svc_rate_limit_store_failures_total` | `policy` (`open`, `closed`, `local`): requests answered by the failure policy |
//! | `svc_rate_limit_store_breaker_open` (gauge) | 1 while the shared limiter's circuit breaker is open |
//! | `svc_workspace_store_up` (gauge) | 1 when the last read of the workspace store worked |
//! | `svc_workspace_store_errors_total` | failed reads of the workspace store |
//! | `svc_api_keys_reloads_total` | times the key index was reloaded |
//! | `svc_api_keys_loaded` (gauge) | keys in the index |
//! | `svc_jwks_fetches_total` | `outcome` (`ok`, `error`): fetches of a provider's signing keys for Check JWT |
//! | `svc_log_lines_dropped_total` | log lines dropped because stderr was not read ([`crate::log_lines`]) |
//!
//! `route` is the flow's route (`orders/{id}`), never the raw path, so the number of
//! series stays bounded whatever clients send; unmatched requests count as `route="-"`.
//!
//! Generated routes resolve their series once, at start-up ([`Metrics::route`],
//! [`RouteMetrics::node`]): counting on the request path is then an atomic add, with no
//! label hashing or map lookup, and every series a route can produce is exported (at 0)
//! before its first request, so alerts on `rate()` work from the start.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: &'static str,
    method: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProtectionLabels {
    route: &'static str,
    node: &'static str,
    check: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NodeLabels {
    route: &'static str,
    node: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PolicyLabels {
    policy: &'static str,
}

/// The health of the shared stores (Redis for rate limits, the workspace store for keys):
/// counted off the request path, so that operators can alert on an outage.
#[derive(Clone, Debug, Default)]
pub struct StoreMetrics {
    limit_errors: Family<KindLabels, Counter>,
    limit_failures: Family<PolicyLabels, Counter>,
    /// 1 while the circuit breaker in front of the shared limiter is open.
    pub limit_breaker_open: Gauge,
    /// 1 when the last read of the workspace store worked.
    pub workspace_up: Gauge,
    pub workspace_errors: Counter,
    pub key_reloads: Counter,
    pub keys_loaded: Gauge,
    key_lookups: Family<OutcomeLabels, Counter>,
    jwks_fetches: Family<OutcomeLabels, Counter>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

impl StoreMetrics {
    /// A failed call to the shared limiter: `error`, `timeout` or `breaker_open`.
    pub fn limit_error(&self, kind: &'static str) {
        self.limit_errors.get_or_create(&KindLabels { kind }).inc();
    }

    /// A request answered by the failure policy `policy` because the shared limiter failed.
    pub fn limit_failure(&self, policy: &'static str) {
        self.limit_failures.get_or_create(&PolicyLabels { policy }).inc();
    }

    /// An API key the index did not know: `found` or `absent` in the store, `cached`
    /// (absent a moment ago), `throttled` (over the lookup budget) or `error`.
    pub fn key_lookup(&self, outcome: &'static str) {
        self.key_lookups.get_or_create(&OutcomeLabels { outcome }).inc();
    }

    /// A fetch of a provider's signing keys for Check JWT: `ok` or `error`.
    pub fn jwks_fetch(&self, outcome: &'static str) {
        self.jwks_fetches.get_or_create(&OutcomeLabels { outcome }).inc();
    }

    fn register(&self, registry: &mut Registry) {
        for outcome in ["ok", "error"] {
            let _ = self.jwks_fetches.get_or_create(&OutcomeLabels { outcome });
        }
        registry.register(
            "svc_jwks_fetches",
            "Fetches of an identity provider's signing keys (Check JWT), by outcome",
            self.jwks_fetches.clone(),
        );
        for outcome in ["found", "absent", "cached", "throttled", "error"] {
            let _ = self.key_lookups.get_or_create(&OutcomeLabels { outcome });
        }
        registry.register(
            "svc_api_key_store_lookups",
            "Well-formed API keys the index did not know, looked up in the workspace store, by outcome",
            self.key_lookups.clone(),
        );
        for kind in ["error", "timeout", "breaker_open"] {
            let _ = self.limit_errors.get_or_create(&KindLabels { kind });
        }
        for policy in ["open", "closed", "local"] {
            let _ = self.limit_failures.get_or_create(&PolicyLabels { policy });
        }
        self.workspace_up.set(1);
        registry.register(
            "svc_rate_limit_store_errors",
            "Failed calls to the shared rate-limit store, by kind",
            self.limit_errors.clone(),
        );
        registry.register(
            "svc_rate_limit_store_failures",
            "Requests answered by the failure policy because the shared rate-limit store failed",
            self.limit_failures.clone(),
        );
        let gauges = [
            (
                "svc_rate_limit_store_breaker_open",
                "1 while the circuit breaker in front of the shared rate-limit store is open",
                &self.limit_breaker_open,
            ),
            (
                "svc_workspace_store_up",
                "1 when the last read of the workspace store worked",
                &self.workspace_up,
            ),
            ("svc_api_keys_loaded", "API keys in the index", &self.keys_loaded),
        ];
        for (name, help, gauge) in gauges {
            registry.register(name, help, gauge.clone());
        }
        let counters = [
            (
                "svc_workspace_store_errors",
                "Failed reads of the workspace store",
                &self.workspace_errors,
            ),
            (
                "svc_api_keys_reloads",
                "Reloads of the API key index",
                &self.key_reloads,
            ),
        ];
        for (name, help, counter) in counters {
            registry.register(name, help, counter.clone());
        }
    }
}

pub struct Metrics {
    registry: Registry,
    /// The shared stores' health.
    pub stores: StoreMetrics,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    protections: Family<ProtectionLabels, Counter>,
    nodes: Family<NodeLabels, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn latency_histogram() -> Histogram {
    // 0.1 ms … 3.3 s
    Histogram::new(exponential_buckets(0.0001, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        let protections = Family::<ProtectionLabels, Counter>::default();
        let nodes = Family::<NodeLabels, Counter>::default();
        registry.register(
            "svc_http_requests",
            "HTTP requests by route, method and status",
            requests.clone(),
        );
        registry.register(
            "svc_http_request_duration_seconds",
            "Time to answer a request, by route",
            latency.clone(),
        );
        registry.register(
            "svc_protection_outcomes",
            "Outcomes of protection nodes",
            protections.clone(),
        );
        registry.register("svc_node_runs", "Code node runs by outcome", nodes.clone());
        registry.register(
            "svc_log_lines_dropped",
            "Log lines dropped because stderr was not read fast enough",
            crate::log_lines::DROPPED.clone(),
        );
        let stores = StoreMetrics::default();
        stores.register(&mut registry);
        Metrics {
            registry,
            stores,
            requests,
            latency,
            protections,
            nodes,
        }
    }
}

/// Method names as `'static` strings (others count as `OTHER`).
pub fn method_label(m: &http::Method) -> &'static str {
    match *m {
        http::Method::GET => "GET",
        http::Method::POST => "POST",
        http::Method::PUT => "PUT",
        http::Method::PATCH => "PATCH",
        http::Method::DELETE => "DELETE",
        http::Method::HEAD => "HEAD",
        http::Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

/// The `check` label and the outcomes of a protection of type `node_type` (pass, fail,
/// and a second way to fail if it has one: Check JWT's `forbidden`): its row's metric
/// name and sequence outputs ([`svc_types::builtin_nodes`]). `None` for a code node.
fn protection_outcomes(node_type: &str) -> Option<(&'static str, &'static str, &'static str, Option<&'static str>)> {
    let row = svc_types::builtin_nodes::node_type(node_type)?;
    match row.outputs {
        [pass, fail] => Some((row.metric_check?, pass.pin, fail.pin, None)),
        [pass, fail, other] => Some((row.metric_check?, pass.pin, fail.pin, Some(other.pin))),
        _ => None,
    }
}

/// The series of one route, resolved once.
#[derive(Clone)]
pub struct RouteMetrics {
    route: &'static str,
    latency: Histogram,
    /// `(method, status)` pairs the route is expected to answer, resolved in advance.
    expected: Box<[(&'static str, u16, Counter)]>,
    requests: Family<RequestLabels, Counter>,
    protections: Family<ProtectionLabels, Counter>,
    nodes: Family<NodeLabels, Counter>,
}

impl RouteMetrics {
    /// The flow's route (`orders/{id}`).
    pub fn route(&self) -> &'static str {
        self.route
    }

    /// Counts one answered request.
    pub fn request(&self, method: &http::Method, status: u16, seconds: f64) {
        let method = method_label(method);
        match self.expected.iter().find(|(m, s, _)| *s == status && *m == method) {
            Some((_, _, counter)) => {
                counter.inc();
            }
            None => {
                self.requests
                    .get_or_create(&RequestLabels {
                        route: self.route,
                        method,
                        status,
                    })
                    .inc();
            }
        }
        self.latency.observe(seconds);
    }

    /// The counters of node `node` of this route, a node of the built-in type
    /// `node_type` (`rate-limit`, `code`): a protection counts its outcomes under its
    /// check's name, a code node `ok`, `failed` and `panicked`.
    pub fn node(&self, node: &'static str, node_type: &str) -> NodeCounters {
        let route = self.route;
        let (pass, fail, panicked) = match protection_outcomes(node_type) {
            Some((check, pass, fail, other)) => {
                let counter = |outcome| {
                    self.protections
                        .get_or_create(&ProtectionLabels {
                            route,
                            node,
                            check,
                            outcome,
                        })
                        .clone()
                };
                (counter(pass), counter(fail), other.map(counter))
            }
            None => {
                let counter = |outcome| self.nodes.get_or_create(&NodeLabels { route, node, outcome }).clone();
                (counter("ok"), counter("failed"), Some(counter("panicked")))
            }
        };
        NodeCounters {
            node,
            pass,
            fail,
            panicked,
        }
    }
}

/// The outcome counters of one node of one route.
#[derive(Clone, Debug)]
pub struct NodeCounters {
    node: &'static str,
    pass: Counter,
    fail: Counter,
    /// A code node's `panicked`, or a protection's second way to fail.
    panicked: Option<Counter>,
}

impl NodeCounters {
    /// The node's id in the flow.
    pub fn node(&self) -> &'static str {
        self.node
    }

    /// The check passed (`allowed`, `sequence-ok`, `valid`) or the code node returned.
    pub fn passed(&self) {
        self.pass.inc();
    }

    /// The check failed (`blocked`, `sequence-limited`, `invalid`) or the code node failed.
    pub fn failed(&self) {
        self.fail.inc();
    }

    /// The check failed its second way (Check JWT's `forbidden`: a token without a
    /// required scope).
    pub fn failed_other(&self) {
        match &self.panicked {
            Some(c) => c.inc(),
            None => self.fail.inc(),
        };
    }

    /// The code node panicked.
    pub fn panicked(&self) {
        match &self.panicked {
            Some(c) => c.inc(),
            None => self.fail.inc(),
        };
    }
}

impl Metrics {
    /// The series of `route`, expected to answer `methods` with `statuses`.
    pub fn route(&self, route: &'static str, methods: &[&'static str], statuses: &[u16]) -> RouteMetrics {
        let mut expected = Vec::new();
        for &method in methods {
            for &status in statuses {
                let counter = self
                    .requests
                    .get_or_create(&RequestLabels { route, method, status })
                    .clone();
                expected.push((method, status, counter));
            }
        }
        RouteMetrics {
            route,
            latency: self.latency.get_or_create(&RouteLabels { route }).clone(),
            expected: expected.into_boxed_slice(),
            requests: self.requests.clone(),
            protections: self.protections.clone(),
            nodes: self.nodes.clone(),
        }
    }

    /// Counts a request no route answered (a panic outside a route, a timeout).
    pub fn request(&self, route: &'static str, method: &http::Method, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                route,
                method: method_label(method),
                status,
            })
            .inc();
        self.latency.get_or_create(&RouteLabels { route }).observe(seconds);
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_contains(text: &str, series: &[&str]) {
        for line in series {
            assert!(text.contains(line), "no `{line}` in:\n{text}");
        }
    }

    #[test]
    fn resolved_series_are_exported_at_zero_and_count_into_the_families() {
        let metrics = Metrics::default();
        let route = metrics.route("orders", &["POST"], &[201, 429]);
        let limit = route.node("limit", "rate-limit");
        let price = route.node("price", "code");
        let text = metrics.render();
        assert_contains(
            &text,
            &[
                r#"svc_http_requests_total{route="orders",method="POST",status="201"} 0"#,
                r#"svc_protection_outcomes_total{route="orders",node="limit",check="rate_limit",outcome="sequence-limited"} 0"#,
                r#"svc_node_runs_total{route="orders",node="price",outcome="panicked"} 0"#,
            ],
        );

        route.request(&http::Method::POST, 201, 0.001);
        // A status the route did not announce still counts, through the family.
        route.request(&http::Method::POST, 418, 0.001);
        limit.failed();
        price.passed();
        price.panicked();
        let text = metrics.render();
        assert_contains(
            &text,
            &[
                r#"svc_http_requests_total{route="orders",method="POST",status="201"} 1"#,
                r#"svc_http_requests_total{route="orders",method="POST",status="418"} 1"#,
                r#"svc_protection_outcomes_total{route="orders",node="limit",check="rate_limit",outcome="sequence-limited"} 1"#,
                r#"svc_node_runs_total{route="orders",node="price",outcome="ok"} 1"#,
                r#"svc_node_runs_total{route="orders",node="price",outcome="panicked"} 1"#,
                r#"svc_http_request_duration_seconds_count{route="orders"} 2"#,
            ],
        );
    }
}
