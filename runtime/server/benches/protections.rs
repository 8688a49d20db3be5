//! The protection nodes' costs, with the `governor` crate's keyed GCRA limiter beside
//! ours in the same run.
//!
//! `cargo bench -p svc-runtime --bench protections`
//!
//! Limiter benchmarks cycle through N distinct client IPs (so each check looks a key up
//! in a table of N keys) and report time per check; "2 threads" runs two threads on the
//! same limiter and reports wall time per check (lower than one thread means it scales).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use governor::{Quota as GovQuota, RateLimiter as GovLimiter};
use http::{HeaderMap, HeaderValue};
use std::net::{IpAddr, Ipv4Addr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};
use svc_runtime::apikey::{KeyIndex, KeyRecord, format};
use svc_runtime::cors::{OriginConfig, OriginPolicy};
use svc_runtime::ratelimit::{LimitKey, MemoryStore, Quota, clock};

const KEY_COUNTS: [usize; 3] = [1, 10_000, 1_000_000];

fn ips(n: usize) -> Vec<IpAddr> {
    (0..n as u32)
        .map(|i| IpAddr::V4(Ipv4Addr::from(i.wrapping_mul(2_654_435_761))))
        .collect()
}

/// Runs `iters` operations split over `threads` threads; returns the wall time.
fn parallel<F: Fn(usize) + Sync>(iters: u64, threads: usize, op: F) -> Duration {
    let per = (iters as usize).div_ceil(threads);
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let op = &op;
            s.spawn(move || {
                for i in 0..per {
                    op(t * per + i);
                }
            });
        }
    });
    start.elapsed()
}

fn limiters(c: &mut Criterion) {
    let mut group = c.benchmark_group("limiter");
    group.sample_size(20).measurement_time(Duration::from_secs(3));
    for &n in &KEY_COUNTS {
        let keys = Arc::new(ips(n));
        // Ours: 100 per minute, the in-memory store.
        let store = Arc::new(MemoryStore::default());
        let quota = Quota::per(100, Duration::from_secs(60));
        for &k in keys.iter() {
            store.check_now(store.hash(&LimitKey::Ip(k)), &quota, clock());
        }
        // governor: the same quota, its default keyed limiter (DashMap).
        let gov = Arc::new(GovLimiter::keyed(GovQuota::per_minute(NonZeroU32::new(100).unwrap())));
        for k in keys.iter() {
            let _ = gov.check_key(k);
        }
        for threads in [1usize, 2] {
            let label = format!("{n}_keys/{threads}_thread");
            group.bench_function(BenchmarkId::new("svc", &label), |b| {
                let (store, keys) = (store.clone(), keys.clone());
                b.iter_custom(|iters| {
                    parallel(iters, threads, |i| {
                        let key = LimitKey::Ip(keys[i % keys.len()]);
                        std::hint::black_box(store.check_now(store.hash(&key), &quota, clock()));
                    })
                })
            });
            group.bench_function(BenchmarkId::new("governor", &label), |b| {
                let (gov, keys) = (gov.clone(), keys.clone());
                b.iter_custom(|iters| {
                    parallel(iters, threads, |i| {
                        let _ = std::hint::black_box(gov.check_key(&keys[i % keys.len()]));
                    })
                })
            });
        }
    }
    group.finish();
}

fn api_keys(c: &mut Criterion) {
    let mut group = c.benchmark_group("api_key");
    let good: Vec<String> = (0..1000).map(|_| format::generate()).collect();
    let records: Vec<KeyRecord> = good
        .iter()
        .enumerate()
        .map(|(i, k)| KeyRecord {
            id: format!("key_{i}"),
            name: "n".into(),
            owner: "o".into(),
            prefix: format::display_prefix(k),
            hash: format::hash(k),
            created_at: 0,
            expires_at: None,
            revoked_at: None,
        })
        .collect();
    // A key's first request takes the full path (checksum, SHA-256, lookup by digest);
    // its later ones are found by their MAC.
    group.bench_function("verify_valid_first", |b| {
        b.iter_batched(
            || KeyIndex::new(vec![records[7].clone()]),
            |index| std::hint::black_box(index.verify(Some(&good[7]), 10)).is_ok(),
            criterion::BatchSize::SmallInput,
        )
    });
    let index = KeyIndex::new(records);
    let unknown = format::generate();
    group.bench_function("verify_valid", |b| {
        b.iter(|| std::hint::black_box(index.verify(Some(&good[7]), 10)))
    });
    group.bench_function("verify_unknown", |b| {
        b.iter(|| std::hint::black_box(index.verify(Some(&unknown), 10)))
    });
    group.bench_function("verify_malformed", |b| {
        b.iter(|| std::hint::black_box(index.verify(Some("svck_typo"), 10)))
    });
    group.finish();
}

/// The shop's origin policy, and a request from one of its subdomains.
fn shop_origins() -> (OriginPolicy, HeaderMap) {
    let policy = OriginPolicy::new(OriginConfig {
        allowed_origins: &[
            "https://shop.example.com",
            "https://*.shop.example.com",
            "http://localhost:5173",
        ],
        missing_origin_allowed: true,
        methods: &["POST"],
        ..Default::default()
    })
    .unwrap();
    let mut allowed = HeaderMap::new();
    allowed.insert(
        http::header::ORIGIN,
        HeaderValue::from_static("https://eu.shop.example.com"),
    );
    (policy, allowed)
}

fn origins(c: &mut Criterion) {
    let mut group = c.benchmark_group("origin");
    let (policy, allowed) = shop_origins();
    let mut blocked = HeaderMap::new();
    blocked.insert(
        http::header::ORIGIN,
        HeaderValue::from_static("https://shop.example.com.evil.com"),
    );
    group.bench_function("allowed_wildcard", |b| {
        b.iter(|| std::hint::black_box(policy.check(&allowed)))
    });
    group.bench_function("blocked", |b| b.iter(|| std::hint::black_box(policy.check(&blocked))));
    group.finish();
}

/// The response headers each protection adds, into a fresh map like a request's.
fn headers(c: &mut Criterion) {
    let mut group = c.benchmark_group("headers");
    let (policy, request) = shop_origins();
    let decision = policy.check(&request);
    group.bench_function("cors", |b| {
        b.iter(|| {
            let mut out = HeaderMap::with_capacity(12);
            policy.decorate(decision.clone(), &mut out);
            std::hint::black_box(out)
        })
    });
    let limiter =
        svc_runtime::ratelimit::RateLimiter::in_memory("limit", Quota::per(1_000_000_000, Duration::from_secs(1)));
    let limited = svc_runtime::ratelimit::Decision {
        allowed: true,
        remaining: 999_999_999,
        reset: Duration::from_millis(1),
        retry_after: Duration::ZERO,
    };
    group.bench_function("ratelimit", |b| {
        b.iter(|| {
            let mut out = HeaderMap::with_capacity(12);
            limiter.decorate(&limited, &mut out);
            std::hint::black_box(out)
        })
    });
    for capacity in [8, 12] {
        group.bench_function(BenchmarkId::new("empty_map", capacity), |b| {
            b.iter(|| std::hint::black_box(HeaderMap::<HeaderValue>::with_capacity(capacity)))
        });
    }
    group.finish();
}

criterion_group!(benches, limiters, api_keys, origins, headers);
criterion_main!(benches);
