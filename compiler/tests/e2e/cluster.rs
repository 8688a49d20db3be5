//! Three instances of the generated shop server against one real Redis and one real
//! PostgreSQL, as behind a load balancer: keys made with `svc keys --store postgres://`
//! work everywhere, a revocation reaches all three within 2 s, the limit is exact across
//! them, each failure policy answers as documented while Redis is down and the shared
//! limit is back after it restarts, and with PostgreSQL down the servers keep answering
//! from the keys they loaded and catch up when it returns.

use crate::harness::{binary, client, error, listening_url};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use svc_testkit::{Postgres, Redis, TempDir};

const ORDERS: &str = "/acme/shop/orders";
const EXPORTS: &str = "/acme/shop/exports";

/// One instance, with its log lines kept for the test to read.
struct Instance {
    child: Child,
    base: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Instance {
    fn start(args: &[&str]) -> Instance {
        let mut child = Command::new(binary("shop"))
            .args(["serve", "--port", "0", "--health-details"])
            .args(args)
            .env("SVC_LOG", "warn")
            .env_remove("SVC_SECRETS_KEY")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().unwrap();
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        let Some(base) = listening_url(&mut child, Duration::from_secs(30)) else {
            let _ = child.kill();
            panic!("an instance did not start: {:?}", log.lock().unwrap());
        };
        Instance { child, base, log }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Whether the instance logged `text`, waiting up to 3 s for the line: its stderr is
    /// read by another thread, which may not have seen a line just written.
    fn logged(&self, text: &str) -> bool {
        let start = Instant::now();
        loop {
            if self.log.lock().unwrap().iter().any(|l| l.contains(text)) {
                return true;
            }
            if start.elapsed() > Duration::from_secs(3) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Runs `svc` itself (keys, secrets) against the shared store.
fn svc(args: &[&str]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_svc"));
    command.args(args).env_remove("SVC_STORE").env_remove("SVC_SECRETS_KEY");
    svc_testkit::run_ok(&mut command).trim().to_string()
}

fn order() -> serde_json::Value {
    serde_json::json!({"customerEmail": "ada@example.com", "currency": "EUR",
                       "lines": [{"sku": "A1", "quantity": 1, "unitPrice": 10}]})
}

async fn post(c: &reqwest::Client, url: String, key: &str) -> reqwest::Response {
    c.post(url)
        .header("x-api-key", key)
        .json(&order())
        .send()
        .await
        .unwrap()
}

/// An instance's `/healthz` body.
async fn health_of(c: &reqwest::Client, i: &Instance) -> serde_json::Value {
    c.get(i.url("/healthz")).send().await.unwrap().json().await.unwrap()
}

/// Waits until `url` answers `status` with `key` on every instance; returns the time.
async fn until_everywhere(instances: &[Instance], path: &str, key: &str, status: u16, within: Duration) -> Duration {
    let c = client();
    let start = Instant::now();
    for i in instances {
        loop {
            if post(&c, i.url(path), key).await.status().as_u16() == status {
                break;
            }
            assert!(
                start.elapsed() < within,
                "{path} did not answer {status} on {} within {within:?}",
                i.base
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_instances_share_keys_limits_and_revocations() {
    let pg = Postgres::start();
    let mut redis = Redis::start();
    let dir = TempDir::new("cluster");
    let key_file = dir.path().join("secrets.key");
    std::fs::write(&key_file, svc(&["secrets", "keygen"])).unwrap();
    let store = pg.url();
    let shared = |k: &str| svc(&["keys", "create", "--store", &store, "--name", k, "--owner", k]);
    let alice = shared("alice");
    let key_file = key_file.to_str().unwrap();
    // A secret set once for everybody (the shop declares none; this proves the servers
    // start with a sealed shared store and the key).
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .args([
            "secrets",
            "set",
            "SHARED_TOKEN",
            "--store",
            &store,
            "--secrets-key-file",
            key_file,
        ])
        .stdin(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"shared-token-value")?;
            c.wait()
        })
        .unwrap();
    assert!(out.success());

    // Each instance has its own failure policy, to see all three answers at once.
    let redis_url = redis.url();
    let instances: Vec<Instance> = ["open", "local", "closed"]
        .iter()
        .map(|policy| {
            Instance::start(&[
                "--store",
                &store,
                "--secrets-key-file",
                key_file,
                "--rate-limit-store",
                &redis_url,
                "--rate-limit-failure",
                policy,
                // Exactness holds for checks Redis answers in time; a loaded CI machine
                // stalls for longer than the 50 ms default (docs/deploy.md).
                "--rate-limit-timeout-ms",
                "1000",
            ])
        })
        .collect();
    let c = client();

    // 1. A key created with `svc keys create --store postgres://` works on all three.
    for i in &instances {
        let r = post(&c, i.url(ORDERS), &alice).await;
        assert_eq!(r.status(), 201, "{}", i.base);
    }

    // 2. The limit is exact across the three: 100 clients, 3 requests each, spread over
    //    the instances, on a fresh user whose limit is 20 an hour (T = 3 min): exactly the
    //    burst passes, and the RateLimit headers count down through the shared state.
    let bob = shared("bob");
    // A key created now reaches the instances through PostgreSQL's notifications, in
    // milliseconds but not at once: wait for it on the orders route, whose limit is
    // another node's, so the exports budget stays whole.
    until_everywhere(&instances, ORDERS, &bob, 201, Duration::from_secs(2)).await;
    let bases: Arc<Vec<String>> = Arc::new(instances.iter().map(|i| i.url(EXPORTS)).collect());
    let mut tasks = Vec::new();
    for client_no in 0..100usize {
        let (bases, bob, c) = (bases.clone(), bob.clone(), c.clone());
        tasks.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            for n in 0..3 {
                let r = c
                    .post(&bases[(client_no + n) % 3])
                    .header("x-api-key", &bob)
                    .send()
                    .await
                    .unwrap();
                let Some(limit) = r.headers().get("ratelimit") else {
                    let status = r.status();
                    panic!("no RateLimit header on a {status}: {:?}", r.text().await);
                };
                let limit = limit.to_str().unwrap().to_string();
                let retry = r.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
                seen.push((r.status().as_u16(), limit, retry));
            }
            seen
        }));
    }
    let mut passed = Vec::new();
    let mut limited = 0;
    for t in tasks {
        for (status, limit, retry) in t.await.unwrap() {
            match status {
                202 => passed.push(limit),
                429 => {
                    limited += 1;
                    let retry: u64 = retry.expect("a 429 says when to retry").parse().unwrap();
                    assert!((1..=180).contains(&retry), "retry after {retry}");
                    assert!(limit.contains(";r=0;"), "{limit}");
                }
                other => panic!("unexpected status {other}"),
            }
        }
    }
    assert_eq!(
        passed.len(),
        20,
        "exactly the burst of 20 passes across three instances"
    );
    assert_eq!(limited, 280);
    let mut remaining: Vec<u32> = passed
        .iter()
        .map(|h| {
            h.split(";r=")
                .nth(1)
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    remaining.sort();
    assert_eq!(remaining, (0..20).collect::<Vec<_>>(), "each pass saw the shared count");

    // 3. A revocation through the shared store reaches every instance within 2 s.
    let carol = shared("carol");
    until_everywhere(&instances, ORDERS, &carol, 201, Duration::from_secs(2)).await;
    svc(&["keys", "revoke", "carol", "--store", &store]);
    let took = until_everywhere(&instances, ORDERS, &carol, 401, Duration::from_secs(2)).await;
    eprintln!("revocation reached 3 instances in {took:?}");

    // 4. Redis stops mid-run: each policy answers at once, nothing else becomes a 5xx.
    redis.stop();
    for round in 0..5 {
        let start = Instant::now();
        let open = post(&c, instances[0].url(ORDERS), &alice).await;
        assert_eq!(open.status(), 201, "open: through, unchecked");
        assert!(
            !open.headers().contains_key("ratelimit"),
            "nothing counted, nothing claimed"
        );
        let local = post(&c, instances[1].url(ORDERS), &alice).await;
        assert_eq!(local.status(), 201, "local: counted by the instance");
        assert!(local.headers().contains_key("ratelimit"));
        let closed = post(&c, instances[2].url(ORDERS), &alice).await;
        assert_eq!(closed.headers()["retry-after"], "1");
        let (status, body) = error(closed).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (503, Some("rate_limit_unavailable"))
        );
        // The exports node overrides every server's policy with `closed`.
        for i in &instances {
            let r = c.post(i.url(EXPORTS)).header("x-api-key", &alice).send().await.unwrap();
            assert_eq!(r.status(), 503, "{}", i.base);
        }
        // The first round may meet a reconnecting client (at most the 1 s timeout per
        // instance); once the breakers are open the answers come at once.
        let bound = Duration::from_secs(if round == 0 { 4 } else { 1 });
        assert!(
            start.elapsed() < bound,
            "six requests with Redis down took {:?}",
            start.elapsed()
        );
    }
    let health = health_of(&c, &instances[2]).await;
    assert_eq!(health["status"], "degraded", "{health}");
    assert_eq!(health["rate_limit_store"]["breaker"], "open", "{health}");
    let metrics = c
        .get(instances[2].url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("svc_rate_limit_store_breaker_open 1"), "{metrics}");
    assert!(instances[2].logged("circuit breaker open"));

    // 5. Redis back: the shared limit resumes within 5 s without a restart.
    redis.restart();
    let back = until_everywhere(&instances[2..], ORDERS, &alice, 201, Duration::from_secs(5)).await;
    eprintln!("shared limiter back {back:?} after Redis restarted");
    let r = post(&c, instances[0].url(ORDERS), &alice).await;
    assert!(r.headers().contains_key("ratelimit"), "counted in Redis again");
    let health = health_of(&c, &instances[0]).await;
    assert_eq!(health["status"], "ok", "{health}");

    // 6. PostgreSQL stops: keys loaded before still work everywhere, /healthz says the
    //    store is unreachable; when it is back, a revocation made then reaches everyone.
    pg.stop();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for i in &instances {
        assert_eq!(post(&c, i.url(ORDERS), &alice).await.status(), 201);
        let health = health_of(&c, i).await;
        assert_eq!(health["workspace_store"]["reachable"], false, "{health}");
        assert_eq!(health["status"], "degraded");
    }
    assert!(instances[0].logged("cannot read the workspace store"));
    pg.restart();
    svc(&["keys", "revoke", "alice", "--store", &store]);
    let took = until_everywhere(&instances, ORDERS, &alice, 401, Duration::from_secs(5)).await;
    eprintln!("after PostgreSQL restarted, a revocation reached 3 instances in {took:?}");
    for i in &instances {
        let health = health_of(&c, i).await;
        assert_eq!(health["workspace_store"]["reachable"], true, "{health}");
    }

    // Nothing secret reached a log: not a key, not the secret value.
    for i in &instances {
        for line in i.log.lock().unwrap().iter() {
            for secret in [&alice, &bob, &carol, &"shared-token-value".to_string()] {
                assert!(!line.contains(secret.as_str()), "{line}");
            }
        }
    }
}
