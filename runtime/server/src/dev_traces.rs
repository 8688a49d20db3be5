//! `serve --dev` under `svc dev` with the Builder: every finished request's trace is sent,
//! as JSON, to the Builder's `POST /api/traces` (its address and token in
//! [`URL_ENV`] and [`TOKEN_ENV`]), where it is shown on the canvas.
//!
//! Sending never slows a request: traces go through a bounded queue to one task that posts
//! them; when the queue is full (a flood of requests, a Builder that stopped answering)
//! traces are dropped, never requests. Over loopback only, to the process that started
//! this server.

use crate::exchange::Trace;
use std::time::Duration;
use tokio::sync::mpsc;

pub const URL_ENV: &str = "SVC_DEV_TRACE_URL";
pub const TOKEN_ENV: &str = "SVC_DEV_TRACE_TOKEN";

/// Traces waiting to be sent; past this, new ones are dropped.
const QUEUE: usize = 256;
/// A body larger than this is shown cut, and such a request cannot be replayed.
const BODY_SHOWN: usize = 64 * 1024;

/// Where traces go, and the task that sends them.
pub struct Sink {
    queue: mpsc::Sender<Vec<u8>>,
}

/// The sink the environment asks for, if any; the receiver is for [`forward`].
pub fn from_env() -> Option<(Sink, Forwarder)> {
    let url = std::env::var(URL_ENV).ok()?;
    let token = std::env::var(TOKEN_ENV).ok()?;
    let (queue, receiver) = mpsc::channel(QUEUE);
    Some((Sink { queue }, Forwarder { receiver, url, token }))
}

impl Sink {
    pub fn send(&self, trace: &Trace) {
        if let Ok(bytes) = serde_json::to_vec(&json(trace)) {
            let _ = self.queue.try_send(bytes);
        }
    }
}

/// Posts queued traces, one at a time, until the server stops.
pub struct Forwarder {
    receiver: mpsc::Receiver<Vec<u8>>,
    url: String,
    token: String,
}

impl Forwarder {
    pub async fn run(mut self) {
        let Ok(client) = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(2))
            .build()
        else {
            return;
        };
        while let Some(body) = self.receiver.recv().await {
            let _ = client
                .post(&self.url)
                .header("x-svc-token", &self.token)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await;
        }
    }
}

/// A trace as JSON. Headers and the body go as received: the Builder keeps them to replay
/// the request, and shows none of the credentials. Node inputs, outputs and logs are
/// redacted already (secret values).
pub fn json(t: &Trace) -> serde_json::Value {
    let headers: Vec<(String, String)> = t
        .headers
        .iter()
        .map(|(name, value)| (name.to_string(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect();
    let body = t.body.as_ref().map(|b| {
        let shown = &b[..b.len().min(BODY_SHOWN)];
        serde_json::json!({
            "text": String::from_utf8_lossy(shown),
            "bytes": b.len(),
            "cut": b.len() > BODY_SHOWN,
        })
    });
    let steps: Vec<serde_json::Value> = t
        .steps
        .iter()
        .map(|s| {
            let mut step = serde_json::json!({ "node": s.node, "outcome": s.outcome });
            if let Some(d) = &s.detail {
                step["finishedUs"] = (d.finished.as_micros() as u64).into();
                if let Some(inputs) = &d.inputs {
                    step["inputs"] = inputs.clone();
                }
                if let Some(outputs) = &d.outputs {
                    step["outputs"] = outputs.clone();
                }
                if let Some(f) = &d.failure {
                    step["failure"] = serde_json::json!({ "message": f.message, "code": f.code });
                }
            }
            step
        })
        .collect();
    serde_json::json!({
        "id": t.request_id.as_str(),
        "method": t.method.as_str(),
        "path": t.path,
        "query": t.query,
        "route": t.route,
        "status": t.status,
        "durationUs": t.duration.as_micros() as u64,
        "headers": headers,
        "body": body,
        "steps": steps,
        "logs": t.logs.iter().map(|l| serde_json::json!({ "node": l.node, "message": l.message })).collect::<Vec<_>>(),
    })
}
