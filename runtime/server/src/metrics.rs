//! Prometheus metrics, served at `/metrics`:
//!
//! | metric | labels |
//! |--------|--------|
//! | `svc_http_requests_total` | `route`, `method`, `status` |
//! | `svc_http_request_duration_seconds` (histogram) | `route` |
//! | `svc_protection_outcomes_total` | `route`, `node`, `check`, `outcome` |
//! | `svc_node_runs_total` | `route`, `node`, `outcome` (`ok`, `failed`, `panicked`) |
//!
//! `route` is the flow's route (`orders/{id}`), never the raw path, so the number of
//! series stays bounded whatever clients send; unmatched requests count as `route="-"`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
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

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    protections: Family<ProtectionLabels, Counter>,
    nodes: Family<NodeLabels, Counter>,
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
        Metrics {
            registry,
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

impl Metrics {
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

    pub fn protection(&self, route: &'static str, node: &'static str, check: &'static str, outcome: &'static str) {
        self.protections
            .get_or_create(&ProtectionLabels {
                route,
                node,
                check,
                outcome,
            })
            .inc();
    }

    pub fn node(&self, route: &'static str, node: &'static str, outcome: &'static str) {
        self.nodes.get_or_create(&NodeLabels { route, node, outcome }).inc();
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
