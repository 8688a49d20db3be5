//! The shared limiter against a real `redis-server`: exact under concurrency across
//! several connections (as several instances would hold), bounded and anonymous keys,
//! the script reloaded after a flush, and each failure policy while Redis is down, with
//! the shared limit back after a restart.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use svc_runtime::metrics::Metrics;
use svc_runtime::ratelimit::{
    Checked, FailurePolicy, LimitKey, MemoryStore, Quota, RateLimiter, RedisLimiter, RedisOptions,
};
use svc_testkit::{Redis, TestCa};

fn limiter(redis: &Redis, timeout: Duration) -> Arc<RedisLimiter> {
    limiter_counted(redis, timeout, &Metrics::default())
}

fn limiter_counted(redis: &Redis, timeout: Duration, metrics: &Metrics) -> Arc<RedisLimiter> {
    limiter_at(&redis.url(), timeout, metrics)
}

fn limiter_at(url: &str, timeout: Duration, metrics: &Metrics) -> Arc<RedisLimiter> {
    let options = RedisOptions {
        url: url.to_string(),
        timeout,
        mac_key: Some([7; 32]),
    };
    RedisLimiter::connect(&options, "ws/api", metrics.stores.clone()).unwrap()
}

/// 100 clients, 4 checks each, spread over `instances` of one node with a burst of 50
/// an hour: how many passed.
async fn burst_over(instances: &Arc<Vec<RateLimiter>>, key: &'static str) -> usize {
    let mut tasks = Vec::new();
    for client in 0..100 {
        let instances = instances.clone();
        tasks.push(tokio::spawn(async move {
            let mut passed = 0;
            for i in 0..4 {
                let limiter = &instances[(client + i) % instances.len()];
                if allowed(limiter.check(&LimitKey::Text(key)).await) {
                    passed += 1;
                }
            }
            passed
        }));
    }
    let mut passed = 0;
    for t in tasks {
        passed += t.await.unwrap();
    }
    passed
}

fn node(shared: &Arc<RedisLimiter>, quota: Quota, policy: FailurePolicy) -> RateLimiter {
    RateLimiter::new("limit", quota, MemoryStore::default()).shared(shared.clone(), "orders:limit".into(), policy)
}

fn allowed(c: Checked) -> bool {
    match c {
        Checked::Decided(d) => d.allowed,
        other => panic!("expected a decision, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_the_burst_passes_across_instances_under_concurrency() {
    let redis = Redis::start();
    // Three "instances": three connections, three limiters for the same node.
    let instances: Vec<RateLimiter> = (0..3)
        .map(|_| {
            node(
                &limiter(&redis, Duration::from_secs(2)),
                Quota::per(50, Duration::from_secs(3600)),
                FailurePolicy::Closed,
            )
        })
        .collect();
    let instances = Arc::new(instances);
    let passed = burst_over(&instances, "fresh-key").await;
    // T = 72 s: no second emission within the test, so exactly the burst of 50 passes.
    assert_eq!(passed, 50, "400 checks from 100 clients over 3 instances");
    // Every instance sees the shared state: the next check is refused with Retry-After.
    match instances[1].check(&LimitKey::Text("fresh-key")).await {
        Checked::Decided(d) => {
            assert!(!d.allowed);
            assert_eq!(d.remaining, 0);
            let retry = d.retry_after.as_secs_f64();
            assert!(retry > 60.0 && retry <= 72.0, "retry after {retry} s");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn decisions_count_down_like_the_in_memory_limiter() {
    let redis = Redis::start();
    let shared = limiter(&redis, Duration::from_secs(2));
    let quota = Quota::per(5, Duration::from_secs(10)); // T = 2 s
    let a = node(&shared, quota, FailurePolicy::Closed);
    let b = node(&limiter(&redis, Duration::from_secs(2)), quota, FailurePolicy::Closed);
    let key = LimitKey::User("alice");
    let mut remaining = Vec::new();
    for i in 0..5 {
        let limiter = if i % 2 == 0 { &a } else { &b };
        match limiter.check(&key).await {
            Checked::Decided(d) => {
                assert!(d.allowed);
                remaining.push(d.remaining);
                // `t`: until the key is back to a full burst.
                let reset = d.reset.as_secs_f64();
                let expected = 2.0 * (i + 1) as f64;
                assert!((reset - expected).abs() < 0.2, "reset {reset} after {} passes", i + 1);
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(remaining, [4, 3, 2, 1, 0]);
    match a.check(&key).await {
        Checked::Decided(d) => {
            assert!(!d.allowed);
            assert!((d.retry_after.as_secs_f64() - 2.0).abs() < 0.2, "{:?}", d.retry_after);
        }
        other => panic!("{other:?}"),
    }
    // The headers say the same as for the in-memory limiter.
    let mut headers = http::HeaderMap::new();
    if let Checked::Decided(d) = b.check(&key).await {
        b.decorate(&d, &mut headers);
    }
    assert_eq!(headers["ratelimit-policy"], "\"limit\";q=5;w=10");
    assert!(headers["ratelimit"].to_str().unwrap().starts_with("\"limit\";r=0;t="));
    assert_eq!(headers["retry-after"], "2");
}

#[tokio::test]
async fn keys_expire_name_no_client_and_survive_a_script_flush() {
    let redis = Redis::start();
    let shared = limiter(&redis, Duration::from_secs(2));
    let limiter = node(&shared, Quota::per(10, Duration::from_secs(60)), FailurePolicy::Closed);
    let ip = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 7));
    assert!(allowed(limiter.check(&LimitKey::Ip(ip)).await));
    assert!(allowed(limiter.check(&LimitKey::PresentedKey([9; 32])).await));
    let keys = redis.command(&["KEYS", "*"]).unwrap();
    assert!(keys.starts_with("*2\r\n"), "one key per counted client: {keys}");
    assert!(!keys.contains("203.0.113.7") && !keys.contains("203-0-113-7"), "{keys}");
    let name = shared.redis_key("orders:limit", &LimitKey::Ip(ip));
    assert!(name.starts_with("svc:rl:ws/api:orders:limit:"), "{name}");
    assert!(keys.contains(&name), "the key is the MAC of the client: {keys}");
    let name = name.as_str();
    let ttl = redis.command(&["PTTL", name]).unwrap();
    let ttl: i64 = ttl.trim().trim_start_matches(':').parse().unwrap();
    assert!(
        ttl > 0 && ttl <= 6_000,
        "a key lives until its TAT has passed: {ttl} ms"
    );

    // After SCRIPT FLUSH, EVALSHA answers NOSCRIPT and the script is loaded again.
    assert!(redis.command(&["SCRIPT", "FLUSH"]).unwrap().starts_with("+OK"));
    assert!(allowed(limiter.check(&LimitKey::Ip(ip)).await));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_down_each_policy_answers_at_once_and_the_shared_limit_comes_back() {
    let mut redis = Redis::start();
    let timeout = Duration::from_millis(50);
    let metrics = Metrics::default();
    let shared = limiter_counted(&redis, timeout, &metrics);
    let quota = Quota::per(3, Duration::from_secs(3600));
    let open = node(&shared, quota, FailurePolicy::Open);
    let closed = node(&shared, quota, FailurePolicy::Closed);
    let local = node(&shared, quota, FailurePolicy::Local);
    assert!(allowed(closed.check(&LimitKey::Text("k")).await));

    redis.stop();
    let mut took = Vec::new();
    for _ in 0..10 {
        let answer = timed(&mut took, open.check(&LimitKey::Text("k"))).await;
        assert_eq!(answer, Checked::Unchecked);
        let answer = timed(&mut took, closed.check(&LimitKey::Text("k"))).await;
        assert_eq!(answer, Checked::Unavailable);
    }
    // `local` counts in this instance's memory with the node's quota: 3 pass, then 429s.
    let local_passes = {
        let mut n = 0;
        for _ in 0..6 {
            if allowed(local.check(&LimitKey::Text("k")).await) {
                n += 1;
            }
        }
        n
    };
    assert_eq!(local_passes, 3);
    assert!(shared.breaker_open(), "the breaker opened after failures in a row");
    assert_within_timeout(&took, timeout);
    let text = metrics.render();
    assert!(text.contains("svc_rate_limit_store_breaker_open 1"), "{text}");
    assert!(
        text.contains(r#"svc_rate_limit_store_failures_total{policy="open"} 10"#),
        "{text}"
    );
    assert!(
        text.contains(r#"svc_rate_limit_store_failures_total{policy="closed"} 10"#),
        "{text}"
    );
    assert!(
        text.contains(r#"svc_rate_limit_store_errors_total{kind="breaker_open"}"#),
        "{text}"
    );

    // Back: within 5 s the checks are shared again (counted in Redis, which restarted empty).
    redis.restart();
    let back = until_decided(&closed, "k").await;
    assert!(!shared.breaker_open());
    assert!(metrics.render().contains("svc_rate_limit_store_breaker_open 0"));
    eprintln!("shared limiter resumed {back:?} after Redis restarted");
    let keys = redis.command(&["KEYS", "*"]).unwrap();
    assert!(keys.starts_with("*1\r\n"), "counted in Redis again: {keys}");
}

/// Awaits `check`, adding how long it took to `took`.
async fn timed<T>(took: &mut Vec<Duration>, check: impl std::future::Future<Output = T>) -> T {
    let start = Instant::now();
    let answer = check.await;
    took.push(start.elapsed());
    answer
}

/// No check waits longer than the store timeout. The median must sit within a few
/// milliseconds of it; the slowest gets room for a loaded 2-core CI machine descheduling
/// the test (what this guards against is the seconds-long waits of a client without one).
fn assert_within_timeout(took: &[Duration], timeout: Duration) {
    let mut sorted = took.to_vec();
    sorted.sort();
    let (median, slowest) = (sorted[sorted.len() / 2], sorted[sorted.len() - 1]);
    assert!(
        median <= timeout + Duration::from_millis(25),
        "the median check waited {median:?} (timeout {timeout:?}): {took:?}"
    );
    assert!(
        slowest <= timeout + Duration::from_millis(400),
        "a check waited {slowest:?} (timeout {timeout:?}): {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_redis_costs_each_check_at_most_the_timeout() {
    // Frozen, not gone: the connection stays open and nothing answers, so only the
    // deadline (and then the breaker) stands between a request and a wait without end.
    let redis = Redis::start();
    let timeout = Duration::from_millis(50);
    let metrics = Metrics::default();
    let shared = limiter_counted(&redis, timeout, &metrics);
    let quota = Quota::per(100, Duration::from_secs(3600));
    let local = node(&shared, quota, FailurePolicy::Local);
    assert!(allowed(local.check(&LimitKey::Text("k")).await));

    redis.pause();
    let mut took = Vec::new();
    for _ in 0..8 {
        let answer = timed(&mut took, local.check(&LimitKey::Text("k"))).await;
        assert!(allowed(answer), "counted locally");
    }
    assert_within_timeout(&took, timeout);
    assert!(shared.breaker_open(), "three timeouts in a row open the breaker");
    assert!(
        metrics
            .render()
            .contains(r#"svc_rate_limit_store_errors_total{kind="timeout"}"#),
        "{}",
        metrics.render()
    );

    redis.resume();
    until_decided(&node(&shared, quota, FailurePolicy::Closed), "k").await;
    assert!(!shared.breaker_open());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_cluster_url_shares_the_limit_too() {
    // One node that owns every slot speaks the whole cluster protocol (CLUSTER SLOTS,
    // MOVED); each check touches one key, so the script runs on that key's primary.
    let mut redis = Redis::start_cluster();
    let metrics = Metrics::default();
    let quota = Quota::per(50, Duration::from_secs(3600));
    let connect = || limiter_at(&redis.cluster_url(), Duration::from_secs(2), &metrics);
    let shared: Vec<Arc<RedisLimiter>> = (0..3).map(|_| connect()).collect();
    let instances: Vec<RateLimiter> = shared.iter().map(|s| node(s, quota, FailurePolicy::Closed)).collect();
    assert_eq!(burst_over(&Arc::new(instances), "fresh-key").await, 50);
    let keys = redis.command(&["KEYS", "*"]).unwrap();
    assert!(keys.starts_with("*1\r\n"), "one key: {keys}");

    // The script is loaded again after a flush, through the cluster client.
    assert!(redis.command(&["SCRIPT", "FLUSH"]).unwrap().starts_with("+OK"));
    let limiter = node(&shared[0], quota, FailurePolicy::Closed);
    assert!(allowed(limiter.check(&LimitKey::Text("another")).await));

    // A restarted cluster (empty, slots assigned anew) is found again without a restart.
    redis.stop();
    assert_eq!(limiter.check(&LimitKey::Text("another")).await, Checked::Unavailable);
    redis.restart();
    until_decided(&limiter, "another").await;
}

/// Checks `key` every 50 ms until the shared store decides again, within 5 s (the
/// promise after Redis returns); how long it took.
async fn until_decided(limiter: &RateLimiter, key: &str) -> Duration {
    let back = Instant::now();
    loop {
        if let Checked::Decided(_) = limiter.check(&LimitKey::Text(key)).await {
            return back.elapsed();
        }
        assert!(
            back.elapsed() < Duration::from_secs(5),
            "the shared limiter did not resume within 5 s of Redis answering again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rediss_verifies_the_server_against_the_ca_of_sslrootcert() {
    let ca = TestCa::new();
    let redis = Redis::start_tls(&ca);
    let quota = Quota::per(3, Duration::from_secs(3600));
    let trusted = format!("{}/?sslrootcert={}", redis.tls_url(), ca.ca_pem().display());
    let shared = limiter_at(&trusted, Duration::from_secs(2), &Metrics::default());
    let limit = node(&shared, quota, FailurePolicy::Closed);
    let mut passes = Vec::new();
    for _ in 0..4 {
        passes.push(allowed(limit.check(&LimitKey::Text("over-tls")).await));
    }
    assert_eq!(passes, [true, true, true, false], "the shared limit over TLS");

    // The Mozilla roots do not know this CA: every check fails, none is let through.
    let metrics = Metrics::default();
    let untrusted = node(
        &limiter_at(&redis.tls_url(), Duration::from_secs(2), &metrics),
        quota,
        FailurePolicy::Closed,
    );
    match untrusted.check(&LimitKey::Text("over-tls")).await {
        Checked::Unavailable => {}
        other => panic!("a certificate of an unknown CA must fail the check, got {other:?}"),
    }

    // The parameter means TLS: on a plain URL it is a start-up error, as is a missing file.
    let options = |url: String| RedisOptions {
        url,
        timeout: Duration::from_secs(1),
        mac_key: None,
    };
    let plain = RedisLimiter::connect(
        &options(format!("{}/?sslrootcert={}", redis.url(), ca.ca_pem().display())),
        "ws/api",
        metrics.stores.clone(),
    );
    assert!(plain.unwrap_err().contains("rediss://"));
    let missing = RedisLimiter::connect(
        &options(format!("{}/?sslrootcert=/nonexistent.pem", redis.tls_url())),
        "ws/api",
        metrics.stores.clone(),
    );
    assert!(missing.unwrap_err().contains("/nonexistent.pem"));
}
