//! Rate Limit: N requests per window, keyed by client IP, user or API key, one limiter per
//! node. The algorithm is GCRA ([`gcra`], where the guarantee is stated and proved); the
//! state lives in memory by default ([`memory`], behind [`RateLimitStore`]), or in Redis
//! for N instances sharing one limit ([`redis`]), with a [`FailurePolicy`] for when
//! Redis cannot answer.

mod batch;
pub mod gcra;
pub mod memory;
pub mod policy;
pub mod redis;

pub use gcra::{Decision, Quota};
pub use memory::MemoryStore;
pub use policy::FailurePolicy;
pub use redis::{RedisLimiter, RedisOptions};

use http::{HeaderMap, HeaderName, HeaderValue};
use std::future::Future;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What a request is counted by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
///
/// It borrows what it names: a store needs the key only while it checks it (the memory
/// store keeps a hash), so building one per request copies and counts nothing.
pub enum LimitKey<'a> {
    Ip(IpAddr),
    /// The owner of a verified API key.
    User(&'a str),
    /// A verified API key, by id.
    KeyId(&'a str),
    /// An API key not verified yet, by the SHA-256 of what was presented (never the key).
    PresentedKey([u8; 32]),
    Text(&'a str),
}

/// A store failure (a shared store may be unreachable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

/// Where limiter state lives.
pub trait RateLimitStore: Send + Sync + 'static {
    /// One GCRA step for `key` at `now` (nanoseconds on [`clock`]).
    fn check(
        &self,
        key: &LimitKey<'_>,
        quota: &Quota,
        now: u64,
    ) -> impl Future<Output = Result<Decision, StoreError>> + Send;
}

/// Nanoseconds since the process started, on the monotonic clock.
pub fn clock() -> u64 {
    clock_at(Instant::now())
}

/// [`clock`] at `instant` (0 for an instant before the clock started), or the test clock
/// when `serve --test-mode` froze it.
pub fn clock_at(instant: Instant) -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let frozen = TEST_CLOCK.load(Ordering::Relaxed);
    if frozen != 0 {
        return frozen;
    }
    instant
        .saturating_duration_since(*START.get_or_init(Instant::now))
        .as_nanos() as u64
}

/// The limiters' clock under `serve --test-mode`: frozen (0: not frozen, the real clock
/// runs), so that a flow test's rate limits depend on its requests and its `advance`
/// steps only, never on how fast the machine is.
static TEST_CLOCK: AtomicU64 = AtomicU64::new(0);

/// Stops the limiters' clock where it is (`serve --test-mode` only).
pub fn freeze_test_clock() {
    let now = clock_at(Instant::now()).max(1);
    TEST_CLOCK.store(now, Ordering::Relaxed);
}

/// Moves a frozen clock forward, so that a flow test sees a window pass without
/// sleeping (the `x-svc-test-advance-ms` header of `serve --test-mode`).
pub fn advance_test_clock(by: Duration) {
    let _ = TEST_CLOCK.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
        (t != 0).then(|| t + by.as_nanos() as u64)
    });
}

/// The limiter of one Rate Limit node.
pub struct RateLimiter<S: RateLimitStore = MemoryStore> {
    /// The node id: the policy name in the RateLimit headers.
    pub name: &'static str,
    pub quota: Quota,
    /// This instance's own state: the limiter's store without a shared one, else the
    /// fallback of the `local` failure policy.
    store: S,
    shared: Option<Shared>,
    policy_header: HeaderValue,
}

/// The shared limiter of a node, and what to do when it fails.
struct Shared {
    limiter: std::sync::Arc<RedisLimiter>,
    /// The node's key prefix and quota in Redis's terms, built once.
    scope: redis::RedisScope,
    policy: FailurePolicy,
}

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// The limiter decided (the shared one, or this instance's own).
    Decided(Decision),
    /// The shared limiter failed and the policy is `open`: the request passes uncounted.
    Unchecked,
    /// The shared limiter failed and the policy is `closed`: answer 503.
    Unavailable,
}

impl RateLimiter<MemoryStore> {
    pub fn in_memory(name: &'static str, quota: Quota) -> Self {
        RateLimiter::new(name, quota, MemoryStore::default())
    }
}

impl<S: RateLimitStore> RateLimiter<S> {
    pub fn new(name: &'static str, quota: Quota, store: S) -> Self {
        let policy = format!("\"{name}\";q={};w={}", quota.limit, quota.window.as_secs().max(1));
        RateLimiter {
            name,
            quota,
            store,
            shared: None,
            policy_header: crate::header_value_for_life(policy).unwrap_or(HeaderValue::from_static("\"limit\"")),
        }
    }

    /// Counts in the shared `limiter` under `scope` (`<route>:<node>`, the same on every
    /// instance), answering with `policy` when it fails; the limiter's own store becomes
    /// the fallback of the `local` policy.
    pub fn shared(mut self, limiter: std::sync::Arc<RedisLimiter>, scope: String, policy: FailurePolicy) -> Self {
        self.shared = Some(Shared {
            scope: limiter.scope(&scope, &self.quota),
            limiter,
            policy,
        });
        self
    }

    /// The failure policy, when the limiter is shared.
    pub fn failure_policy(&self) -> Option<FailurePolicy> {
        self.shared.as_ref().map(|s| s.policy)
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    /// Checks one request.
    pub async fn check(&self, key: &LimitKey<'_>) -> Checked {
        self.check_at(key, clock()).await
    }

    /// [`RateLimiter::check`] at `now` on [`clock`]: the server passes the time the request
    /// arrived, which it has read already (a clock read costs as much as the check). A
    /// request that reaches the limiter late is counted at its arrival, which can only
    /// make the limit stricter, never looser. (A shared limiter counts on Redis's clock.)
    pub async fn check_at(&self, key: &LimitKey<'_>, now: u64) -> Checked {
        let Some(shared) = &self.shared else {
            return self.check_here(key, now).await;
        };
        // Boxed: a round trip to Redis costs far more than the allocation, and held inline
        // its future would make every route's request future 450 bytes larger, shared
        // limiter or not, and axum copies that future on every request.
        match Box::pin(shared.limiter.check(&shared.scope, key)).await {
            Ok(d) => Checked::Decided(d),
            Err(e) => {
                let policy = shared.policy;
                tracing::debug!(limiter = self.name, %policy, error = %e.0, "shared rate limit failed; answering with the failure policy");
                shared.limiter.count_failure(policy);
                match policy {
                    FailurePolicy::Open => Checked::Unchecked,
                    FailurePolicy::Closed => Checked::Unavailable,
                    FailurePolicy::Local => self.check_here(key, now).await,
                }
            }
        }
    }

    /// A check of this instance's own store, which fails only if it is shared itself:
    /// then the request passes, logged.
    async fn check_here(&self, key: &LimitKey<'_>, now: u64) -> Checked {
        match self.store.check(key, &self.quota, now).await {
            Ok(d) => Checked::Decided(d),
            Err(e) => {
                tracing::error!(limiter = self.name, error = %e.0, "rate limit store failed; letting the request through");
                Checked::Unchecked
            }
        }
    }

    /// Adds `RateLimit-Policy` and `RateLimit` (IETF draft-ietf-httpapi-ratelimit-headers)
    /// for `decision`, and `Retry-After` for a rejection.
    pub fn decorate(&self, decision: &Decision, headers: &mut HeaderMap) {
        const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
        const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
        headers.append(RATELIMIT_POLICY, self.policy_header.clone());
        // `"<name>";r=<remaining>;t=<reset>`, written without the formatting machinery
        // into an exactly sized `Vec` (one with spare capacity would cost `Bytes` a second
        // allocation), which becomes the header's bytes as it is.
        let (mut remaining, mut reset) = (itoa::Buffer::new(), itoa::Buffer::new());
        let parts = [
            b"\"".as_slice(),
            self.name.as_bytes(),
            b"\";r=",
            remaining.format(decision.remaining).as_bytes(),
            b";t=",
            reset.format(whole_seconds_up(decision.reset)).as_bytes(),
        ];
        let mut value = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
        for part in parts {
            value.extend_from_slice(part);
        }
        if let Ok(v) = HeaderValue::from_maybe_shared(bytes::Bytes::from(value)) {
            headers.append(RATELIMIT, v);
        }
        if !decision.allowed {
            let retry = whole_seconds_up(decision.retry_after).max(1);
            headers.insert(http::header::RETRY_AFTER, HeaderValue::from(retry));
        }
    }
}

/// The answer of a Rate Limit node whose shared store failed under the `closed` policy:
/// 503 in the one error shape, with `Retry-After: 1` (the breaker probes the store twice a
/// second).
pub fn unavailable() -> crate::ApiError {
    crate::ApiError::new(
        http::StatusCode::SERVICE_UNAVAILABLE,
        "rate_limit_unavailable",
        "the rate limiter is unavailable; retry shortly",
    )
    .retry_after(1)
}

/// A duration in whole seconds, rounded up (the headers count seconds; a client told 0
/// would retry too early).
fn whole_seconds_up(d: std::time::Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn headers_count_whole_seconds_rounded_up() {
        let limiter = RateLimiter::in_memory("per-key", Quota::per(10, Duration::from_secs(60)));
        let mut headers = HeaderMap::new();
        let passed = Decision {
            allowed: true,
            remaining: 7,
            reset: Duration::from_millis(1200),
            retry_after: Duration::ZERO,
        };
        limiter.decorate(&passed, &mut headers);
        assert_eq!(headers["ratelimit-policy"], "\"per-key\";q=10;w=60");
        assert_eq!(headers["ratelimit"], "\"per-key\";r=7;t=2");
        assert!(!headers.contains_key("retry-after"));

        let mut headers = HeaderMap::new();
        let limited = Decision {
            allowed: false,
            remaining: 0,
            reset: Duration::from_secs(6),
            retry_after: Duration::from_millis(300),
        };
        limiter.decorate(&limited, &mut headers);
        assert_eq!(headers["ratelimit"], "\"per-key\";r=0;t=6");
        assert_eq!(
            headers["retry-after"], "1",
            "never 0: a client told 0 would retry at once"
        );
        assert_eq!(whole_seconds_up(Duration::ZERO), 0);
        assert_eq!(whole_seconds_up(Duration::from_nanos(1)), 1);
    }
}
