//! Code nodes under the runtime: the run context, failures, panics, secrets, logs, and
//! the promise that no API key, secret value or key hash reaches a log or a response.

mod common;

use axum::Router;
use axum::routing::get;
use common::nodes;
use common::{TestServer, captured_logs, client, handler, json_of, node_route};
use http::StatusCode;
use std::sync::Arc;
use svc_runtime::Runtime;
use svc_runtime::apikey::{KeyIndex, KeyLocation, KeyRecord, format, unix_now};
use svc_runtime::secrets::{LoadError, Requirement, SecretSource, Secrets};
use svc_runtime::store::{SqliteStore, WorkspaceStore};
use svc_sdk::Env;

const SECRET_VALUE: &str = "sk_live_9f8e7d6c5b4a3f2e1d0c";

/// Routes that run one node each, behind Check API Key (x-api-key) for `/ws/api/context`.
fn routes() -> Router<Arc<Runtime>> {
    Router::new()
        .route(
            "/ws/api/greet",
            node_route::<nodes::greet::Node>("greet", "greet", || nodes::greet::Inputs { name: "Ada".into() }),
        )
        .route(
            "/ws/api/fail",
            get(handler!("fail", |ex, metrics, _body| {
                let inputs = nodes::fail::Inputs {
                    code: Some("NO_PRICE".into()),
                };
                match ex
                    .run_node::<nodes::fail::Node>(&metrics.node("price", "code"), inputs, true)
                    .await
                {
                    Ok(out) => ex.json(StatusCode::OK, &out),
                    // With `on_fail` wired: the flow decides.
                    Err(e) if ex.uri.query() == Some("routed") => {
                        let body = serde_json::json!({"message": e.message(), "code": e.code()});
                        ex.json(StatusCode::UNPROCESSABLE_ENTITY, &body)
                    }
                    Err(e) => ex.node_error(e),
                }
            })),
        )
        .route(
            "/ws/api/panic",
            node_route::<nodes::panic::Node>("panic", "boom", || nodes::panic::Inputs {}),
        )
        .route(
            "/ws/api/busy",
            node_route::<nodes::busy::Node>("busy", "busy", || nodes::busy::Inputs {}),
        )
        .route(
            "/ws/api/leaky",
            node_route::<nodes::leaky::Node>("leaky", "leaky", || nodes::leaky::Inputs {}),
        )
        .route(
            "/ws/api/context",
            get(handler!("context", |ex, metrics, _body| {
                if ex
                    .check_api_key(&metrics.node("auth", "check-api-key"), &KeyLocation::HeaderXApiKey)
                    .await
                    .is_none()
                {
                    return ex.status(StatusCode::UNAUTHORIZED);
                }
                match ex
                    .run_node::<nodes::context::Node>(&metrics.node("ctx", "code"), nodes::context::Inputs {}, true)
                    .await
                {
                    Ok(out) => ex.json(StatusCode::OK, &out),
                    Err(e) => ex.node_error(e),
                }
            })),
        )
        .route(
            // A code node placed before Check API Key, whose keys come in a custom header
            // or the query: hidden from the start, as generated routes do.
            "/ws/api/context-first",
            get(handler!("context-first", |ex, metrics, _body| {
                static IN_HEADER: KeyLocation = KeyLocation::Header("x-partner-key");
                static IN_QUERY: KeyLocation = KeyLocation::Query("key");
                ex.hide_credentials(&[&IN_HEADER, &IN_QUERY]);
                let seen = match ex
                    .run_node::<nodes::context::Node>(&metrics.node("ctx", "code"), nodes::context::Inputs {}, true)
                    .await
                {
                    Ok(out) => out,
                    Err(e) => return ex.node_error(e),
                };
                if ex
                    .check_api_key(&metrics.node("auth", "check-api-key"), &IN_HEADER)
                    .await
                    .is_none()
                    && ex
                        .check_api_key(&metrics.node("auth2", "check-api-key"), &IN_QUERY)
                        .await
                        .is_none()
                {
                    return ex.status(StatusCode::UNAUTHORIZED);
                }
                ex.json(StatusCode::OK, &seen)
            })),
        )
}

async fn start(env: Env, secrets: Secrets, keys: Vec<KeyRecord>) -> TestServer {
    common::logs();
    svc_runtime::server::install_panic_hook(secrets.redactor());
    let rt = Runtime::new("ws/api", env, secrets, Arc::new(KeyIndex::new(keys)));
    TestServer::start(Arc::new(rt), routes()).await
}

fn secrets() -> Secrets {
    Secrets::from_values([("API_TOKEN", SECRET_VALUE.to_string())])
}

fn key_record(key: &str) -> KeyRecord {
    KeyRecord {
        id: "key_ci".into(),
        name: "ci".into(),
        owner: "alice".into(),
        prefix: format::display_prefix(key),
        hash: format::hash(key),
        created_at: unix_now(),
        expires_at: None,
        revoked_at: None,
    }
}

#[tokio::test]
async fn fail_is_a_structured_500_unless_the_flow_routes_it() {
    let server = start(Env::deployed("1.2.3", "abc"), secrets(), vec![]).await;
    let fail = |path: &str, request_id: &str| client().get(server.url(path)).header("x-request-id", request_id).send();
    let r = fail("/ws/api/fail", "fail-unrouted").await.unwrap();
    assert_eq!(r.status(), 500);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "NO_PRICE");
    assert_eq!(body["error"]["message"], "the order cannot be priced");
    assert_eq!(body["error"]["node"], "test.fail");
    assert!(body.get("never").is_none(), "no partial output");
    let r = fail("/ws/api/fail?routed", "fail-routed").await.unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap(),
        serde_json::json!({"message": "the order cannot be priced", "code": "NO_PRICE"})
    );
    // A failure left to svc is a warning; one the flow routes is an answer it chose,
    // written with the node's own lines (`svc::node`, off by default).
    let logs = captured_logs();
    let levels = |id: &str| -> Vec<(String, String)> {
        logs.lines()
            .filter(|l| l.contains(id) && l.contains("node failed"))
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|v| {
                (
                    v["level"].as_str().unwrap().to_string(),
                    v["target"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let unrouted = levels("fail-unrouted");
    assert!(
        unrouted.contains(&("WARN".into(), "svc_runtime::exchange".into())),
        "{unrouted:?}"
    );
    assert_eq!(levels("fail-routed"), [("INFO".to_string(), "svc::node".to_string())]);
}

#[tokio::test]
async fn a_panicking_node_is_a_500_and_the_server_keeps_serving() {
    let server = start(Env::deployed("1", "x"), secrets(), vec![]).await;
    for _ in 0..3 {
        let r = client().get(server.url("/ws/api/panic")).send().await.unwrap();
        assert_eq!(r.status(), 500);
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "internal_error");
        assert_eq!(body["error"]["node"], "test.panic");
        assert!(!body.to_string().contains(SECRET_VALUE));
    }
    let r = client().get(server.url("/ws/api/greet")).send().await.unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn logs_carry_route_node_and_request_id() {
    let server = start(Env::deployed("1", "x"), secrets(), vec![]).await;
    let body = json_of(
        client()
            .get(server.url("/ws/api/greet"))
            .header("x-request-id", "log-test-1"),
    )
    .await;
    assert_eq!(body["greeting"], "hello Ada");
    let logs = captured_logs();
    let line = logs
        .lines()
        .find(|l| l.contains("log-test-1") && l.contains("greeting Ada"))
        .expect("the node's log line");
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["fields"]["message"], "greeting Ada");
    assert_eq!(v["fields"]["route"], "greet");
    assert_eq!(v["fields"]["node"], "test.greet");
    assert_eq!(v["fields"]["request_id"], "log-test-1");
    assert!(
        logs.lines()
            .any(|l| l.contains("log-test-1") && l.contains("\"status\":200")),
        "an access log line"
    );
}

#[tokio::test]
async fn env_is_metadata_only_when_deployed_and_the_process_environment_in_dev() {
    let key = format::generate();
    let deployed = start(Env::deployed("1.2.3", "abc123"), secrets(), vec![key_record(&key)]).await;
    let body: serde_json::Value =
        json_of(client().get(deployed.url("/ws/api/context")).header("x-api-key", &key)).await;
    assert_eq!(
        body["env"],
        serde_json::json!({"isDev": false, "version": "1.2.3", "gitSha": "abc123", "HOME": null, "APP_TEST_VAR": null,
            "SVC_DEV_TRACE_TOKEN": null, "LISTEN_FDS": null})
    );
    let dev_env = Env::dev(
        "1.2.3",
        "abc123",
        [
            ("APP_TEST_VAR".to_string(), "from-dev".to_string()),
            ("HOME".to_string(), "/home/dev".to_string()),
            // svc's own: never a node's to read.
            ("SVC_DEV_TRACE_TOKEN".to_string(), "builder-token".to_string()),
            ("LISTEN_FDS".to_string(), "1".to_string()),
        ],
    );
    let dev = start(dev_env, secrets(), vec![key_record(&key)]).await;
    let body: serde_json::Value = json_of(client().get(dev.url("/ws/api/context")).header("x-api-key", &key)).await;
    assert_eq!(body["env"]["isDev"], true);
    assert_eq!(body["env"]["APP_TEST_VAR"], "from-dev");
    assert_eq!(body["env"]["HOME"], "/home/dev");
    assert_eq!(body["env"]["SVC_DEV_TRACE_TOKEN"], serde_json::Value::Null);
    assert_eq!(body["env"]["LISTEN_FDS"], serde_json::Value::Null);
}

#[tokio::test]
async fn ctx_request_never_carries_credentials() {
    let key = format::generate();
    let server = start(Env::deployed("1", "x"), secrets(), vec![key_record(&key)]).await;
    let r = client()
        .get(server.url("/ws/api/context?a=1"))
        .header("x-api-key", &key)
        .header("authorization", "Basic dXNlcjpwYXNz")
        .header("cookie", "session=abc")
        .header("x-trace", "t1")
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = r.json().await.unwrap();
    let request = &body["request"];
    assert_eq!(request["method"], "GET");
    assert_eq!(request["url"], "/ws/api/context?a=1");
    assert_eq!(request["headers"]["x-trace"], "t1");
    for h in ["x-api-key", "authorization", "cookie"] {
        assert!(request["headers"].get(h).is_none(), "{h} leaked into ctx.request");
    }
    assert!(!body.to_string().contains(&key));
}

/// A TypeScript call that found no room in the engine (`SVC_TS_CONCURRENCY`) is the
/// server's state, not the node's defect: 503 with `Retry-After`, the node named.
#[tokio::test]
async fn no_room_in_the_engine_is_a_503_to_retry() {
    let server = start(Env::deployed("1", "x"), secrets(), vec![]).await;
    let r = client().get(server.url("/ws/api/busy")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "1");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "node_busy", "{body}");
    assert_eq!(body["error"]["node"], "test.busy", "{body}");
}

/// The outside review: custom-header and query key locations were hidden from
/// `ctx.request` only once their check had run, so a node placed before it saw the key.
#[tokio::test]
async fn a_node_before_the_key_check_never_sees_the_key() {
    let key = format::generate();
    let server = start(Env::deployed("1", "x"), secrets(), vec![key_record(&key)]).await;
    for (header, query) in [(Some(key.as_str()), String::new()), (None, format!("&key={key}"))] {
        let mut request = client()
            .get(server.url(&format!("/ws/api/context-first?a=1{query}")))
            .header("x-trace", "t1");
        if let Some(k) = header {
            request = request.header("x-partner-key", k);
        }
        let r = request.send().await.unwrap();
        assert_eq!(r.status(), 200);
        let body: serde_json::Value = r.json().await.unwrap();
        let request = &body["request"];
        assert_eq!(request["url"], "/ws/api/context-first?a=1", "{body}");
        assert_eq!(request["headers"]["x-trace"], "t1");
        assert!(request["headers"].get("x-partner-key").is_none(), "{body}");
        assert!(!body.to_string().contains(&key), "{body}");
    }
}

#[test]
fn secrets_come_from_the_environment_in_dev_and_the_store_deployed() {
    let reqs = [
        Requirement {
            name: "SVC_RT_TEST_SECRET",
            required: true,
        },
        Requirement {
            name: "SVC_RT_TEST_OPTIONAL",
            required: false,
        },
    ];
    // Development: the environment variable of the same name.
    unsafe { std::env::set_var("SVC_RT_TEST_SECRET", "from-env") };
    let s = Secrets::load(&reqs, SecretSource::Environment).unwrap();
    assert_eq!(s.get("SVC_RT_TEST_SECRET").unwrap().expose(), "from-env");
    unsafe { std::env::remove_var("SVC_RT_TEST_SECRET") };
    // Deployed: the store; a required one missing refuses start-up and is named.
    let store = SqliteStore::in_memory().unwrap();
    let key = svc_runtime::seal::SecretsKey::generate();
    match Secrets::load(&reqs, SecretSource::Store(&store, Some(&key))) {
        Err(LoadError::Missing(m)) => assert_eq!(m.0, vec!["SVC_RT_TEST_SECRET"]),
        other => panic!("expected missing secrets, got {:?}", other.map(|_| ())),
    }
    store
        .set_secret("SVC_RT_TEST_SECRET", &key.seal("SVC_RT_TEST_SECRET", "from-store"), 1)
        .unwrap();
    assert_eq!(
        Secrets::load(&reqs, SecretSource::Store(&store, Some(&key)))
            .unwrap()
            .get("SVC_RT_TEST_SECRET")
            .unwrap()
            .expose(),
        "from-store"
    );
}

/// Exercises keys, secrets, failures and panics, then searches every captured log line
/// and every response for the secrets.
#[tokio::test]
async fn no_key_secret_or_hash_reaches_a_log_or_a_response() {
    let key = format::generate();
    let wrong_key = format::generate();
    let hash_hex: String = format::hash(&key).iter().map(|b| format!("{b:02x}")).collect();
    let wrong_hash_hex: String = format::hash(&wrong_key).iter().map(|b| format!("{b:02x}")).collect();
    let server = start(Env::deployed("1", "x"), secrets(), vec![key_record(&key)]).await;
    let c = client();
    let mut bodies = String::new();
    for (path, k) in [
        ("/ws/api/context", key.as_str()),
        ("/ws/api/context", wrong_key.as_str()),
        ("/ws/api/context", "svck_short"),
        ("/ws/api/leaky", key.as_str()),
        ("/ws/api/panic", key.as_str()),
        ("/ws/api/fail", key.as_str()),
        ("/nope", key.as_str()),
    ] {
        let r = c
            .get(server.url(path))
            .header("x-api-key", k)
            .header("authorization", format!("Bearer {k}"))
            .send()
            .await
            .unwrap();
        bodies.push_str(&format!("{:?}", r.headers()));
        bodies.push_str(&r.text().await.unwrap());
    }
    // Let the log writer catch up.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let logs = captured_logs();
    assert!(
        logs.contains("using token [redacted]"),
        "the careless node's log line is present, redacted"
    );
    assert!(
        logs.contains("panic: boom with [redacted]"),
        "the panic is logged, redacted"
    );
    for (what, needle) in [
        ("API key", key.as_str()),
        ("wrong API key", wrong_key.as_str()),
        ("secret", SECRET_VALUE),
        ("key hash", hash_hex.as_str()),
        ("wrong key hash", wrong_hash_hex.as_str()),
    ] {
        assert!(!logs.contains(needle), "the {what} appears in a log line");
        assert!(!bodies.contains(needle), "the {what} appears in a response");
    }
}
