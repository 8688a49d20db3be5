//! The shared limiter: GCRA state in Redis (or Valkey), so that N instances of a server
//! count against one limit.
//!
//! - **One atomic step per check.** [`GCRA_SCRIPT`] reads the key's TAT, decides, and
//!   writes the new TAT in one server-side script, so concurrent checks from any number
//!   of instances are serialised by Redis itself: no read-then-write race (Kong#5311). It
//!   is sent with EVALSHA and loaded on `NOSCRIPT` (the `redis` crate's `Script`).
//! - **Redis's clock.** The script reads `TIME` on the Redis server, so the instances'
//!   clocks do not matter. Times are in microseconds (exact in Lua's doubles until the
//!   year 2255); the emission interval is rounded down to a whole microsecond, and the
//!   guarantee of [`super::gcra`] holds for the rounded interval.
//! - **Bounded memory.** Every key expires when its TAT has passed, which is exactly when
//!   its state becomes indistinguishable from a new key's: Redis holds only active keys.
//! - **Nothing in clear.** A key is `svc:rl:<realm>:<route>:<node>:<mac>`, where `<mac>`
//!   is a 128-bit keyed SipHash of what the request is counted by (client IP, user, key id
//!   or the SHA-256 of a presented key), keyed from the server's secrets key when it has
//!   one (see docs/security.md).
//! - **One connection.** Every check of the process is pipelined on one multiplexed
//!   connection (`ConnectionManager`, which reconnects by itself), the checks of one
//!   scheduler tick in one write ([`super::batch`]), or, for a Redis
//!   Cluster (`redis+cluster://`), one per node (`ClusterConnection`, which follows
//!   `MOVED` and slot changes). A check touches one key, so it never spans slots.
//! - **Failing fast.** Each check has a deadline (50 ms by default). After
//!   [`BREAKER_THRESHOLD`] failures in a row a circuit breaker opens: checks fail at once,
//!   without touching the network, and a probe pings Redis every [`PROBE_EVERY`] until it
//!   answers, when the breaker closes again. What a failed check means for the request is
//!   the node's [`super::FailurePolicy`].

use super::batch::Batcher;
use super::{Decision, LimitKey, Quota, StoreError};
use crate::metrics::StoreMetrics;
use crate::url_redaction::redact_url;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster::{ClusterClient, ClusterConfig};
use redis::cluster_async::ClusterConnection;
use siphasher::sip128::{Hasher128, SipHasher24};
use std::hash::Hasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

/// The GCRA step of [`super::gcra::step`], in Lua, on the Redis server's clock.
///
/// `KEYS[1]`: the limiter key. `ARGV[1]`: the emission interval T and `ARGV[2]`: the
/// tolerance τ, both in microseconds. Returns `{allowed, remaining, reset, retry_after}`
/// with times in microseconds.
pub const GCRA_SCRIPT: &str = r#"
-- Redis before 5 replicates scripts verbatim, which forbids a write after TIME.
if redis.replicate_commands then pcall(redis.replicate_commands) end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local allow_at = tat - tolerance
if now < allow_at then
  return {0, 0, tat - now, allow_at - now}
end
local new_tat = tat + interval
-- The key lives until its TAT has passed: after that it is the same as no key.
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
return {1, math.floor((now + tolerance + interval - new_tat) / interval), new_tat - now, 0}
"#;

/// Failures in a row that open the circuit breaker.
pub const BREAKER_THRESHOLD: u32 = 3;
/// How often a probe pings Redis while the breaker is open.
pub const PROBE_EVERY: Duration = Duration::from_millis(500);
/// The default deadline of one check.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(50);

/// How to reach the shared limiter.
#[derive(Debug, Clone)]
pub struct RedisOptions {
    /// `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS; a Redis Cluster
    /// as `redis+cluster://[user:password@]host:port[,host:port…]` (`rediss+cluster://`).
    /// With TLS, `?sslrootcert=PATH` trusts the CAs of that PEM file instead of the
    /// Mozilla roots ([`crate::tls_roots`]).
    pub url: String,
    /// The deadline of one check.
    pub timeout: Duration,
    /// Key material for the MAC of limiter keys; the same on every instance.
    pub mac_key: Option<[u8; 32]>,
}

/// The connection to the shared limiter of one server, used by all its Rate Limit nodes.
pub struct RedisLimiter {
    conn: Connection,
    /// The GCRA script, for a cluster's checks (a single Redis's batcher has its own).
    script: redis::Script,
    timeout: Duration,
    /// `svc:rl:<realm>:`.
    prefix: String,
    mac: (u64, u64),
    /// The URL without its password, for logs.
    display: String,
    breaker: Breaker,
    metrics: StoreMetrics,
}

/// The per-node part of every check: the key prefix and the quota in microseconds.
#[derive(Debug)]
pub struct RedisScope {
    /// `svc:rl:<realm>:<route>:<node>:`.
    prefix: Box<str>,
    interval_us: u64,
    tolerance_us: u64,
}

impl std::fmt::Debug for RedisLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RedisLimiter({})", self.display)
    }
}

#[derive(Default)]
struct Breaker {
    open: AtomicBool,
    failures: AtomicU32,
}

impl RedisLimiter {
    /// Prepares the connection (it is made on first use, and remade whenever it breaks).
    /// Must be called inside a tokio runtime. Fails only on a URL that cannot work.
    pub fn connect(options: &RedisOptions, realm: &str, metrics: StoreMetrics) -> Result<Arc<RedisLimiter>, String> {
        let script = redis::Script::new(GCRA_SCRIPT);
        let conn = Connection::open(&options.url, &script)?;
        // Without a configured key, every instance must still use the same one.
        let mac_key = options.mac_key.unwrap_or(*b"svc rate-limit keys, no secrets!");
        let half = |i: usize| u64::from_le_bytes(mac_key[i..i + 8].try_into().expect("8 bytes"));
        let (k0, k1) = (half(0), half(8));
        Ok(Arc::new(RedisLimiter {
            conn,
            script,
            timeout: options.timeout,
            prefix: format!("svc:rl:{realm}:"),
            mac: (k0, k1),
            display: redact_url(&options.url),
            breaker: Breaker::default(),
            metrics,
        }))
    }

    /// The URL without its password.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// Whether the circuit breaker is open (checks fail at once).
    pub fn breaker_open(&self) -> bool {
        self.breaker.open.load(Ordering::Relaxed)
    }

    /// Pings Redis within `deadline`.
    pub async fn ping(&self, deadline: Duration) -> Result<(), String> {
        match tokio::time::timeout(deadline, self.conn.ping()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} ms", deadline.as_millis())),
        }
    }

    /// What the node `scope` (`<route>:<node>`) with `quota` sends with each check, built
    /// once when its route is.
    pub fn scope(&self, scope: &str, quota: &Quota) -> RedisScope {
        let interval_us = (quota.interval().as_micros() as u64).max(1);
        RedisScope {
            prefix: format!("{}{scope}:", self.prefix).into_boxed_str(),
            interval_us,
            tolerance_us: interval_us.saturating_mul(u64::from(quota.burst) - 1),
        }
    }

    /// The Redis key of `key` for the node `scope` (`<route>:<node>`).
    pub fn redis_key(&self, scope: &str, key: &LimitKey<'_>) -> String {
        self.key_in(&format!("{}{scope}:", self.prefix), key)
    }

    /// `prefix` followed by the MAC of `key` in hex.
    fn key_in(&self, prefix: &str, key: &LimitKey<'_>) -> String {
        let mut h = SipHasher24::new_with_keys(self.mac.0, self.mac.1);
        match key {
            LimitKey::Ip(ip) => {
                h.write_u8(1);
                match ip {
                    std::net::IpAddr::V4(v4) => h.write(&v4.octets()),
                    std::net::IpAddr::V6(v6) => h.write(&v6.octets()),
                }
            }
            LimitKey::User(u) => {
                h.write_u8(2);
                h.write(u.as_bytes());
            }
            LimitKey::KeyId(id) => {
                h.write_u8(3);
                h.write(id.as_bytes());
            }
            LimitKey::PresentedKey(digest) => {
                h.write_u8(4);
                h.write(digest);
            }
            LimitKey::Text(t) => {
                h.write_u8(5);
                h.write(t.as_bytes());
            }
        }
        let mac = h.finish128().as_u128();
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = String::with_capacity(prefix.len() + 32);
        text.push_str(prefix);
        for shift in (0..32).rev() {
            text.push(HEX[(mac >> (shift * 4)) as usize & 0xf] as char);
        }
        text
    }

    /// One GCRA step for `key` in Redis, within the deadline.
    pub async fn check(self: &Arc<Self>, scope: &RedisScope, key: &LimitKey<'_>) -> Result<Decision, StoreError> {
        if self.breaker_open() {
            self.metrics.limit_error("breaker_open");
            return Err(StoreError(
                "the shared rate-limit store is unreachable (circuit breaker open)".into(),
            ));
        }
        let redis_key = self.key_in(&scope.prefix, key);
        let outcome = match &self.conn {
            Connection::Single { batcher, .. } => {
                let answer = batcher.submit(redis_key, scope.interval_us, scope.tolerance_us);
                tokio::time::timeout(self.timeout, async {
                    answer.await.unwrap_or_else(|_| {
                        Err(redis::RedisError::from((
                            redis::ErrorKind::Client,
                            "the batch was dropped",
                        )))
                    })
                })
                .await
            }
            Connection::Cluster(cluster) => {
                // EVALSHA, then SCRIPT LOAD (to every primary) and again on NOSCRIPT.
                let mut invocation = self.script.key(redis_key);
                invocation.arg(scope.interval_us).arg(scope.tolerance_us);
                tokio::time::timeout(self.timeout, invocation.invoke_async(&mut cluster.clone())).await
            }
        };
        let reply = match outcome {
            Ok(Ok(reply)) if reply.len() == 4 => reply,
            Ok(Ok(reply)) => return Err(self.failed("error", format!("the GCRA script answered {reply:?}"))),
            Ok(Err(e)) => return Err(self.failed("error", e.to_string())),
            Err(_) => {
                return Err(self.failed("timeout", format!("no answer within {} ms", self.timeout.as_millis())));
            }
        };
        self.breaker.failures.store(0, Ordering::Relaxed);
        let micros = |v: i64| Duration::from_micros(v.max(0) as u64);
        Ok(Decision {
            allowed: reply[0] == 1,
            remaining: reply[1].clamp(0, i64::from(u32::MAX)) as u32,
            reset: micros(reply[2]),
            retry_after: micros(reply[3]),
        })
    }

    /// Counts a request answered by its failure policy.
    pub fn count_failure(&self, policy: super::FailurePolicy) {
        self.metrics.limit_failure(policy.as_str());
    }

    /// Counts a failure, opens the breaker after enough in a row, and says what failed.
    fn failed(self: &Arc<Self>, kind: &'static str, detail: String) -> StoreError {
        self.metrics.limit_error(kind);
        let failures = self.breaker.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if failures >= BREAKER_THRESHOLD && !self.breaker.open.swap(true, Ordering::AcqRel) {
            self.metrics.limit_breaker_open.set(1);
            tracing::error!(
                store = %self.display,
                failures,
                "shared rate-limit store failing ({detail}); circuit breaker open, Rate Limit nodes answer with their failure policy"
            );
            let this = Arc::downgrade(self);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(PROBE_EVERY).await;
                    let Some(limiter) = this.upgrade() else { return };
                    if limiter.ping(PROBE_EVERY).await.is_ok() {
                        limiter.breaker.failures.store(0, Ordering::Relaxed);
                        limiter.breaker.open.store(false, Ordering::Release);
                        limiter.metrics.limit_breaker_open.set(0);
                        tracing::info!(store = %limiter.display, "shared rate-limit store answers again; circuit breaker closed");
                        return;
                    }
                }
            });
        }
        StoreError(format!("shared rate-limit store {}: {detail}", self.display))
    }
}

/// The one Redis, or the Redis Cluster, that holds the limiter's state.
enum Connection {
    /// A single Redis: its checks are coalesced per scheduler tick by `batcher`, which
    /// sends them on a clone of `manager`.
    Single {
        manager: ConnectionManager,
        batcher: Batcher,
    },
    Cluster(ClusterConnection),
}

impl Connection {
    /// Prepares the connection without connecting: a server starts while Redis is down,
    /// and its checks answer by their failure policy until Redis is up.
    fn open(url: &str, script: &redis::Script) -> Result<Connection, String> {
        let bad =
            |e: &dyn std::fmt::Display| format!("--rate-limit-store: `{}` is not a Redis URL: {e}", redact_url(url));
        refuse_insecure(url)?;
        let (url, root_cert) = crate::tls_roots::take_root_cert(url).map_err(|e| format!("--rate-limit-store: {e}"))?;
        if root_cert.is_some() && !url.starts_with("rediss") {
            return Err("--rate-limit-store: sslrootcert applies to TLS connections (rediss://) only".into());
        }
        let certificates = || redis::TlsCertificates {
            client_tls: None,
            root_cert: root_cert.as_ref().map(|ca| ca.pem.clone()),
        };
        if let Some(seeds) = cluster_seeds(&url) {
            let mut builder = ClusterClient::builder(seeds.map_err(|e| bad(&e))?)
                .retries(1)
                .min_retry_wait(50)
                .max_retry_wait(200);
            if root_cert.is_some() {
                builder = builder.certs(certificates());
            }
            let client = builder.build().map_err(|e| bad(&e))?;
            let config = ClusterConfig::new()
                .set_connection_timeout(Duration::from_millis(500))
                .set_response_timeout(Duration::from_secs(1));
            return Ok(Connection::Cluster(
                client.get_pending_async_connection_with_config(config),
            ));
        }
        let client = match &root_cert {
            None => redis::Client::open(url.as_str()),
            Some(_) => redis::Client::build_with_tls(url.as_str(), certificates()),
        }
        .map_err(|e| bad(&e))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(500)))
            .set_response_timeout(Some(Duration::from_secs(1)))
            .set_number_of_retries(2)
            .set_min_delay(Duration::from_millis(100))
            .set_max_delay(Duration::from_millis(500));
        let manager =
            ConnectionManager::new_lazy_with_config(client, config).map_err(|e| format!("--rate-limit-store: {e}"))?;
        let batcher = Batcher::start(manager.clone(), script.clone());
        Ok(Connection::Single { manager, batcher })
    }

    /// PING (in a cluster: every node must answer).
    async fn ping(&self) -> redis::RedisResult<()> {
        match self {
            Connection::Single { manager, .. } => redis::cmd("PING").query_async(&mut manager.clone()).await,
            Connection::Cluster(c) => redis::cmd("PING").query_async(&mut c.clone()).await,
        }
    }
}

/// The seed nodes of a Redis Cluster URL, `redis+cluster://[user[:password]@]host:port[,
/// host:port…][?query]` (`rediss+cluster://` for TLS), as one `redis://` URL per node
/// carrying the credentials and the query; `None` for any other URL. A cluster has only
/// database 0, so a path other than `/` or `/0` is an error.
pub fn cluster_seeds(url: &str) -> Option<Result<Vec<String>, String>> {
    let (scheme, rest) = if let Some(rest) = url.strip_prefix("redis+cluster://") {
        ("redis", rest)
    } else {
        ("rediss", url.strip_prefix("rediss+cluster://")?)
    };
    Some((|| {
        let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        let (path, query) = tail.split_once('?').map_or((tail, ""), |(p, q)| (p, q));
        if !matches!(path, "" | "/" | "/0") {
            return Err(format!("a Redis Cluster has only database 0, not `{path}`"));
        }
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((user, hosts)) => (Some(user), hosts),
            None => (None, authority),
        };
        let mut seeds = Vec::new();
        for host in hosts.split(',') {
            if host.is_empty() {
                return Err("expected host:port[,host:port…] after the scheme".into());
            }
            let mut seed = format!("{scheme}://");
            if let Some(user) = userinfo {
                seed.push_str(user);
                seed.push('@');
            }
            seed.push_str(host);
            if !query.is_empty() {
                seed.push_str("/?");
                seed.push_str(query);
            }
            seeds.push(seed);
        }
        Ok(seeds)
    })())
}

/// The redis client turns certificate checks off for `#insecure` (and, in cluster URLs,
/// `?insecure`): a man in the middle could then answer every check "allowed". svc's TLS
/// is always verified, so such a URL is refused, with what to write instead.
fn refuse_insecure(url: &str) -> Result<(), String> {
    let fragment = url.split_once('#').map(|(_, f)| f);
    let query = url
        .split('#')
        .next()
        .unwrap_or_default()
        .split_once('?')
        .map(|(_, q)| q);
    let in_query = query.is_some_and(|q| q.split('&').any(|p| p == "insecure" || p.starts_with("insecure=")));
    if fragment == Some("insecure") || in_query {
        return Err(format!(
            "--rate-limit-store: `{}` turns certificate checks off (`insecure`), which svc refuses: trust a private CA with `?sslrootcert=PATH` instead",
            redact_url(url)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_that_turn_certificate_checks_off_are_refused() {
        for url in [
            "rediss://h:6380/#insecure",
            "rediss+cluster://a:1,b:2/?insecure",
            "rediss://h/?insecure=true&x=1",
        ] {
            let e = refuse_insecure(url).unwrap_err();
            assert!(e.contains("sslrootcert"), "{e}");
        }
        for url in [
            "rediss://h:6380/0",
            "rediss://h/?sslrootcert=/ca.pem",
            "redis://insecure-host:1/",
        ] {
            refuse_insecure(url).unwrap();
        }
    }

    #[test]
    fn cluster_urls_become_one_seed_per_node() {
        assert!(cluster_seeds("redis://h:1").is_none());
        assert_eq!(
            cluster_seeds("redis+cluster://u:p@a:7000,b:7001").unwrap().unwrap(),
            ["redis://u:p@a:7000", "redis://u:p@b:7001"]
        );
        assert_eq!(
            cluster_seeds("rediss+cluster://a:7000/?insecure").unwrap().unwrap(),
            ["rediss://a:7000/?insecure"]
        );
        assert!(cluster_seeds("redis+cluster://a:1/3").unwrap().is_err());
        assert!(cluster_seeds("redis+cluster://a:1,,b:2").unwrap().is_err());
        assert!(cluster_seeds("redis+cluster://").unwrap().is_err());
    }
}
