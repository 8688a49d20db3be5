//! `ctx.fetch` against a real local HTTP server.

mod common;

use axum::Router;
use axum::routing::{get, post};
use common::nodes::fetcher;
use std::sync::Arc;
use std::time::Duration;
use svc_runtime::Runtime;
use svc_runtime::secrets::Secrets;
use svc_sdk::{CodeFunctionNode, RunContext};

/// An upstream service the node calls.
async fn upstream() -> String {
    let app = Router::new()
        .route("/json", get(|| async { axum::Json(serde_json::json!({"answer": 42})) }))
        .route(
            "/echo",
            post(|headers: http::HeaderMap, body: String| async move {
                let auth = headers
                    .get("authorization")
                    .map(|v| v.to_str().unwrap().to_string())
                    .unwrap_or_default();
                format!("{auth} | {body}")
            }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(3)).await;
                "late"
            }),
        )
        .route("/big", get(|| async { "x".repeat(100_000) }))
        .route(
            "/redirect",
            get(|| async { axum::response::Redirect::temporary("/json") }),
        );
    common::upstream(app).await
}

async fn run(rt: &Runtime, inputs: fetcher::Inputs) -> Result<fetcher::Outputs, svc_sdk::NodeFailure> {
    let ctx = RunContext::new(fetcher::NODE_KEY, inputs, None, rt.env.clone(), rt.host.clone());
    fetcher::Node::run(&ctx).await
}

fn runtime() -> Runtime {
    Runtime::new(
        "ws/api",
        svc_sdk::Env::deployed("1", "x"),
        Secrets::from_values([("API_TOKEN", "tok-123".to_string())]),
        Arc::new(Default::default()),
    )
}

fn inputs(url: String) -> fetcher::Inputs {
    fetcher::Inputs {
        url,
        timeout_ms: None,
        max_bytes: None,
        post: false,
    }
}

#[tokio::test]
async fn fetches_json_and_follows_redirects() {
    let base = upstream().await;
    let rt = runtime();
    let out = run(&rt, inputs(format!("{base}/json"))).await.unwrap();
    assert_eq!(out.status, 200.0);
    assert_eq!(out.body, r#"{"answer":42}"#);
    let out = run(&rt, inputs(format!("{base}/redirect"))).await.unwrap();
    assert_eq!(out.body, r#"{"answer":42}"#);
}

#[tokio::test]
async fn posts_with_credentials_from_secrets() {
    let base = upstream().await;
    let rt = runtime();
    let out = run(
        &rt,
        fetcher::Inputs {
            post: true,
            ..inputs(format!("{base}/echo"))
        },
    )
    .await
    .unwrap();
    assert_eq!(out.body, r#"Bearer tok-123 | {"hello":"world"}"#);
}

#[tokio::test]
async fn times_out_and_limits_response_size() {
    let base = upstream().await;
    let rt = runtime();
    let started = std::time::Instant::now();
    let mut slow = inputs(format!("{base}/slow"));
    slow.timeout_ms = Some(300.0);
    let e = run(&rt, slow).await.unwrap_err();
    assert!(e.message.contains("no response within 300 ms"), "{}", e.message);
    assert!(started.elapsed() < Duration::from_secs(2));
    let mut big = inputs(format!("{base}/big"));
    big.max_bytes = Some(1000.0);
    let e = run(&rt, big).await.unwrap_err();
    assert!(e.message.contains("larger than 1000 bytes"), "{}", e.message);
    let out = run(&rt, inputs(format!("{base}/big"))).await.unwrap();
    assert_eq!(out.body.len(), 100_000, "the default limit (10 MiB) lets it through");
}

#[tokio::test]
async fn refuses_what_is_not_http() {
    let rt = runtime();
    for url in ["file:///etc/passwd", "not a url", "ftp://example.com/x"] {
        let e = run(&rt, inputs(url.to_string())).await.unwrap_err();
        assert!(e.message.starts_with("invalid request"), "{url}: {}", e.message);
    }
    let e = run(&rt, inputs("http://127.0.0.1:1/".to_string())).await.unwrap_err();
    assert!(e.message.contains("network error"), "{}", e.message);
}
