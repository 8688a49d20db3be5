//! `examples/shop`: a write route behind Check Origin, Check API Key and Rate Limit by API
//! key, with code nodes that take and return structures, enums and arrays of structures.

use crate::harness::{client, error, error_of, run_to_exit_with, start};
use serde_json::json;

const ORDERS: &str = "/acme/shop/orders";

fn order(coupon: Option<&str>, quantity: f64, price: f64) -> serde_json::Value {
    let mut o = json!({
        "customerEmail": "ada@example.com",
        "currency": "EUR",
        "lines": [
            { "sku": "A1", "quantity": quantity, "unitPrice": price, "tags": ["new"] },
            { "sku": "B2", "quantity": 1, "unitPrice": 5.5 }
        ]
    });
    if let Some(c) = coupon {
        o["couponCode"] = json!(c);
    }
    o
}

#[tokio::test]
async fn every_output_of_every_protection_and_the_code_nodes() {
    every_output_of(EXAMPLE).await;
}

#[tokio::test]
async fn typed_bodies_reject_what_does_not_fit() {
    typed_bodies_of(EXAMPLE).await;
}

/// `examples/shop-ts`, the same shop with its config and nodes in TypeScript, answers
/// every request exactly as the Rust nodes do.
#[tokio::test]
async fn typescript_nodes_answer_as_rust_nodes_do() {
    every_output_of(TYPESCRIPT_EXAMPLE).await;
    typed_bodies_of(TYPESCRIPT_EXAMPLE).await;
}

/// A TypeScript engine limit that is not one stops the server at start-up, named, rather
/// than leaving every node with the default.
#[test]
fn a_typescript_limit_that_is_not_one_stops_the_server_at_start_up() {
    for (name, value) in [("SVC_TS_MEMORY_MB", "64MB"), ("SVC_TS_DEADLINE_MS", "0")] {
        let (code, stderr) = run_to_exit_with(TYPESCRIPT_EXAMPLE, &[(name, value)], |_| ());
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains(&format!("error: {name} is `{value}`: it must be a whole number")),
            "{stderr}"
        );
        assert!(!stderr.contains("listening"), "{stderr}");
    }
}

const EXAMPLE: &str = "shop";
const TYPESCRIPT_EXAMPLE: &str = "shop-ts";

async fn every_output_of(example: &str) {
    let (server, key) = start(example, &[], |s| s.key("ci", "alice"));
    let c = client();
    let post = |origin: Option<&str>, key: Option<&str>, body: serde_json::Value| {
        let mut r = c.post(server.url(ORDERS)).json(&body);
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        if let Some(k) = key {
            r = r.header("x-api-key", k);
        }
        r.send()
    };

    // allowed → valid → sequence-ok → price → decide → created
    let r = post(
        Some("https://eu.shop.example.com"),
        Some(&key),
        order(Some("WELCOME10"), 2.0, 10.0),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "https://eu.shop.example.com"
    );
    assert_eq!(r.headers()["vary"], "Origin");
    assert_eq!(r.headers()["x-quote-status"], "accepted");
    assert_eq!(r.headers()["ratelimit-policy"], "\"limit\";q=100;w=60");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(
        body,
        json!({
            "status": "accepted",
            "customer": "alice",
            "quote": {
                "currency": "EUR",
                "lines": [{ "sku": "A1", "quantity": 2, "lineTotal": 20 }, { "sku": "B2", "quantity": 1, "lineTotal": 5.5 }],
                "subtotal": 25.5, "discount": 2.55, "total": 22.95
            },
            "lineCount": 2
        })
    );
    // An enum value whose key differs from its wire value comes back as the wire value.
    let body: serde_json::Value = post(None, Some(&key), order(None, 100.0, 20.0))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["status"], "needs-review");

    // blocked
    let (s, body) = error(
        post(
            Some("https://shop.example.com.evil.com"),
            Some(&key),
            order(None, 1.0, 1.0),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!((s, body["error"]["code"].as_str()), (403, Some("forbidden")));
    // invalid: missing, malformed, unknown
    for k in [
        None,
        Some("svck_typo"),
        Some("svck_000000000000000000000000000000000000"),
    ] {
        let r = post(None, k, order(None, 1.0, 1.0)).await.unwrap();
        assert_eq!(
            r.headers()["www-authenticate"],
            "ApiKey realm=\"acme/shop\", header=\"X-API-Key\""
        );
        let (s, _) = error(r).await;
        assert_eq!(s, 401);
    }
    // on_fail: the node's failure is routed to a 422 carrying its code and message.
    let r = post(None, Some(&key), order(Some("FREE"), 1.0, 1.0)).await.unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap(),
        json!({"error": {"code": "UNKNOWN_COUPON", "message": "unknown coupon `FREE`"}})
    );
}

async fn typed_bodies_of(example: &str) {
    let (server, key) = start(example, &[], |s| s.key("ci", "alice"));
    let c = client();
    let send = |body: serde_json::Value| c.post(server.url(ORDERS)).header("x-api-key", &key).json(&body).send();
    let mut bad = order(None, 1.0, 1.0);
    bad["lines"][1]["quantity"] = json!("two");
    let (s, body) = error(send(bad).await.unwrap()).await;
    assert_eq!((s, body["error"]["field"].as_str()), (400, Some("lines[1].quantity")));
    let mut bad = order(None, 1.0, 1.0);
    // A real currency the shop does not accept.
    bad["currency"] = json!("CHF");
    let (s, body) = error(send(bad).await.unwrap()).await;
    assert_eq!((s, body["error"]["field"].as_str()), (400, Some("currency")));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown variant `CHF`")
    );
    let mut bad = order(None, 1.0, 1.0);
    bad["admin"] = json!(true);
    let (s, _) = error(send(bad).await.unwrap()).await;
    assert_eq!(s, 400);
    // A structure is a JSON object at every depth, never serde's positional array form:
    // the order as an array, a line as an array, both refused at their place.
    let positional = json!(["ada@example.com", "EUR", [["A1", 1, 10]]]);
    let (s, body) = error(send(positional).await.unwrap()).await;
    assert_eq!(s, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("invalid type: sequence"),
        "{body}"
    );
    let mut bad = order(None, 1.0, 1.0);
    bad["lines"][1] = json!(["B2", 1, 5.5]);
    let (s, body) = error(send(bad).await.unwrap()).await;
    assert_eq!((s, body["error"]["field"].as_str()), (400, Some("lines[1]")), "{body}");
    // A protection fails before the body is read: no key, bad body → 401, not 400.
    let (s, _) = error_of(c.post(server.url(ORDERS)).body("{not json")).await;
    assert_eq!(s, 401);
    let r = c.get(server.url(ORDERS)).send().await.unwrap();
    assert_eq!(r.headers()["allow"], "POST, OPTIONS");
    assert_eq!(error(r).await.0, 405);
}

#[tokio::test]
async fn a_key_works_the_moment_svc_keys_create_returns() {
    // The README's two lines, pasted together: no sleep, no reload in between.
    let (server, _) = start("shop", &[], |_| ());
    let c = client();
    for n in 0..3 {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_svc"))
            .args([
                "keys",
                "create",
                "--name",
                &format!("new{n}"),
                "--owner",
                "alice",
                "--store",
            ])
            .arg(server.store_path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let key = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let r = c
            .post(server.url(ORDERS))
            .header("x-api-key", &key)
            .json(&order(None, 1.0, 1.0))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "key {n}: {:?}", r.text().await);
    }
}

#[tokio::test]
async fn preflights() {
    let (server, _) = start("shop", &[], |_| ());
    let c = client();
    let preflight = |origin: &str| {
        c.request(reqwest::Method::OPTIONS, server.url(ORDERS))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type, x-api-key")
            .send()
    };
    let r = preflight("http://localhost:5173").await.unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(r.headers()["access-control-allow-methods"], "POST, OPTIONS");
    assert_eq!(r.headers()["access-control-allow-headers"], "content-type, x-api-key");
    assert_eq!(r.headers()["access-control-max-age"], "600");
    assert_eq!(preflight("https://evil.example").await.unwrap().status(), 403);
}

#[tokio::test]
async fn rate_limit_by_api_key_is_per_key() {
    let (server, (a, b)) = start("shop", &[], |s| (s.key("a", "alice"), s.key("b", "bob")));
    let c = client();
    let send = |k: &str| {
        c.post(server.url(ORDERS))
            .header("x-api-key", k)
            .json(&order(None, 1.0, 1.0))
            .send()
    };
    for _ in 0..100 {
        assert_eq!(send(&a).await.unwrap().status(), 201);
    }
    let r = send(&a).await.unwrap();
    assert!(r.headers().contains_key("retry-after"));
    assert_eq!(error(r).await.0, 429);
    assert_eq!(send(&b).await.unwrap().status(), 201, "another key has its own quota");
}
