//! `examples/hooks`: several routes, code nodes that read secrets, path and query
//! parameters, a body given as fields, key locations other than `X-API-Key`.

use crate::harness::{Server, Setup, answer_of, client, error, error_of, run_to_exit, start};
use crate::support::assert_contains;
use serde_json::json;

const SIGNING_KEY: &str = "whsec-e2e-0123456789abcdef";

/// The hooks server, its signing key set, and what `setup` adds to its store.
fn start_hooks<T>(setup: impl FnOnce(&Setup) -> T) -> (Server, T) {
    start("hooks", &[], |s| {
        s.secret("WEBHOOK_SIGNING_KEY", SIGNING_KEY);
        setup(s)
    })
}

#[tokio::test]
async fn sign_then_verify_with_secrets() {
    let (server, (sign_key, verify_key)) = start_hooks(|s| (s.key("signer", "carol"), s.key("verifier", "dave")));
    let c = client();
    let event = json!({"type": "order.created", "data": {"id": "o1", "total": 12.5}});
    let (status, signed) = answer_of(
        c.post(server.url("/acme/hooks/events/sign"))
            .bearer_auth(&sign_key)
            .json(&event),
    )
    .await;
    assert_eq!(status, 200, "{signed}");
    assert_eq!(signed["signedBy"], "carol");
    assert_eq!(signed["signature"]["algorithm"], "hmac-sha256");
    assert_eq!(signed["signature"]["keyId"].as_str().unwrap().len(), 16);
    let body = json!({"event": event, "signature": signed["signature"]});
    let verify = |body: serde_json::Value| {
        c.post(server.url("/acme/hooks/events/verify"))
            .header("x-hooks-key", &verify_key)
            .json(&body)
            .send()
    };
    let r: serde_json::Value = verify(body.clone()).await.unwrap().json().await.unwrap();
    assert_eq!(r, json!({"valid": true, "matchedKey": signed["signature"]["keyId"]}));
    let mut tampered = body.clone();
    tampered["event"]["data"]["total"] = json!(1000);
    let r: serde_json::Value = verify(tampered).await.unwrap().json().await.unwrap();
    assert_eq!(r, json!({"valid": false, "matchedKey": null}));
    // ctx.fail routed by on_fail to a 400.
    let mut bad = body.clone();
    bad["signature"]["timestamp"] = json!(1.5);
    let r = verify(bad).await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<serde_json::Value>().await.unwrap()["code"], "BAD_TIMESTAMP");
    // The wrong location for this route's key: 401 with a challenge naming the header.
    let r = c
        .post(server.url("/acme/hooks/events/verify"))
        .header("x-api-key", &verify_key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.headers()["www-authenticate"],
        "ApiKey realm=\"acme/hooks\", header=\"x-hooks-key\""
    );
    assert_eq!(error(r).await.0, 401);
    let r = c
        .post(server.url("/acme/hooks/events/sign"))
        .json(&event)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["www-authenticate"], "Bearer realm=\"acme/hooks\"");
}

#[tokio::test]
async fn public_status_and_path_parameters() {
    let (server, key) = start_hooks(|s| {
        s.secret("PREVIOUS_SIGNING_KEY", "whsec-old-key-0000");
        s.key("ci", "erin")
    });
    let c = client();
    let r = c.get(server.url("/acme/hooks/status")).send().await.unwrap();
    assert_eq!(r.headers()["cache-control"], "no-store");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["algorithm"], "hmac-sha256");
    assert_eq!(body["rotated"], true);
    let text = body.to_string();
    assert!(
        !text.contains(SIGNING_KEY) && !text.contains("whsec-old-key"),
        "a secret value in a response"
    );
    let (status, body) = answer_of(
        c.get(server.url("/acme/hooks/events/order.created/preview?sample=true"))
            .header("x-api-key", &key),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["event"],
        json!({"type": "order.created", "data": {"amount": 42, "id": "evt_123"}})
    );
    // A path parameter the node refuses: the flow's `on_fail`, a 400 with the node's code.
    let (status, body) = answer_of(
        c.get(server.url("/acme/hooks/events/bad%20type/preview"))
            .header("x-api-key", &key),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "BAD_EVENT_TYPE", "{body}");
    let (s, body) = error_of(
        c.get(server.url("/acme/hooks/events/x/preview?sample=maybe"))
            .header("x-api-key", &key),
    )
    .await;
    assert_eq!((s, body["error"]["field"].as_str()), (400, Some("query.sample")));
    // A path parameter that is not UTF-8 once percent-decoded: the JSON 400, not axum's
    // plain-text rejection.
    let (s, body) = error_of(
        c.get(server.url("/acme/hooks/events/%FF%FE/preview"))
            .header("x-api-key", &key),
    )
    .await;
    assert_eq!((s, body["error"]["code"].as_str()), (400, Some("invalid_parameter")));
}

#[tokio::test]
async fn rate_limit_by_user() {
    let (server, (k1, k2)) = start_hooks(|s| {
        // Two keys of the same owner share the owner's quota.
        (s.key("one", "frank"), s.key("two", "frank"))
    });
    let c = client();
    let event = json!({"type": "t", "data": {}});
    for i in 0..30 {
        let k = if i % 2 == 0 { &k1 } else { &k2 };
        assert_eq!(
            c.post(server.url("/acme/hooks/events/sign"))
                .bearer_auth(k)
                .json(&event)
                .send()
                .await
                .unwrap()
                .status(),
            200
        );
    }
    let r = c
        .post(server.url("/acme/hooks/events/sign"))
        .bearer_auth(&k2)
        .json(&event)
        .send()
        .await
        .unwrap();
    assert_eq!(error(r).await.0, 429);
}

#[test]
fn a_server_without_a_required_secret_refuses_to_start() {
    let (code, stderr) = run_to_exit("hooks", |_| ());
    assert_eq!(code, 1);
    assert_contains(
        &stderr,
        &["required secrets have no value: WEBHOOK_SIGNING_KEY", "svc secrets set"],
    );
}
