//! What `/healthz` reports: whether the shared stores answer, and what the server does
//! meanwhile.
//!
//! `/healthz` answers 200 whenever the process serves: with the workspace store down, the
//! server still verifies keys against the index it last loaded, and with Redis down each
//! Rate Limit node answers with its failure policy, so taking the instance out of a load
//! balancer would only turn a degraded service into an outage. The body says which
//! (`"status": "degraded"`), for dashboards and alerts (the same facts are metrics).
//!
//! The details are for operators only (`serve --health-details`): `/healthz` is public,
//! and which store a server uses, how many keys it holds, or that a Redis breaker is open
//! (so that an `open` failure policy has stopped limiting) are an attacker's facts too.
//! Without the flag, `/healthz` answers `{"status":"ok"}` whenever the process serves.

use crate::ratelimit::RedisLimiter;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The shared stores' state, updated by the key reloader and the limiter's breaker.
#[derive(Debug)]
pub struct Health {
    workspace: OnceLock<String>,
    reachable: AtomicBool,
    /// Unix seconds of the last successful reload (0: none yet).
    last_reload: AtomicI64,
    keys: AtomicUsize,
    rate_limit: OnceLock<Arc<RedisLimiter>>,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            workspace: OnceLock::new(),
            reachable: AtomicBool::new(true),
            last_reload: AtomicI64::new(0),
            keys: AtomicUsize::new(0),
            rate_limit: OnceLock::new(),
        }
    }
}

impl Health {
    /// Names the workspace store (once, at start-up).
    pub fn set_workspace(&self, describe: String) {
        let _ = self.workspace.set(describe);
    }

    /// Names the shared limiter (once, at start-up).
    pub fn set_rate_limit(&self, limiter: Arc<RedisLimiter>) {
        let _ = self.rate_limit.set(limiter);
    }

    /// A reload of the key index worked.
    pub fn reloaded(&self, keys: usize) {
        self.reachable.store(true, Ordering::Release);
        self.keys.store(keys, Ordering::Relaxed);
        self.last_reload.store(crate::apikey::unix_now(), Ordering::Relaxed);
    }

    /// A read of the workspace store failed; returns whether it was reachable before.
    pub fn unreachable(&self) -> bool {
        self.reachable.swap(false, Ordering::AcqRel)
    }

    pub fn workspace_reachable(&self) -> bool {
        self.reachable.load(Ordering::Acquire)
    }

    /// The public `/healthz` body: the process serves, nothing more.
    pub fn public_json() -> serde_json::Value {
        serde_json::json!({ "status": "ok" })
    }

    /// The operators' `/healthz` body: each shared store, and `degraded` when one fails.
    pub fn detailed_json(&self) -> serde_json::Value {
        let reachable = self.workspace_reachable();
        let last = self.last_reload.load(Ordering::Relaxed);
        let mut body = serde_json::json!({ "status": "ok" });
        let mut degraded = !reachable;
        if let Some(workspace) = self.workspace.get() {
            body["workspace_store"] = serde_json::json!({
                "store": workspace,
                "reachable": reachable,
                "keys_loaded": self.keys.load(Ordering::Relaxed),
                "last_reload_unix": if last > 0 { serde_json::json!(last) } else { serde_json::Value::Null },
            });
        }
        if let Some(limiter) = self.rate_limit.get() {
            let open = limiter.breaker_open();
            degraded |= open;
            body["rate_limit_store"] = serde_json::json!({
                "store": limiter.display(),
                "breaker": if open { "open" } else { "closed" },
            });
        }
        if degraded {
            body["status"] = "degraded".into();
        }
        body
    }
}
