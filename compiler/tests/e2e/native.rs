//! TypeScript nodes compiled to Rust answer exactly as the engine does: the project in
//! `compiler/tests/native-ts` (nodes that use every construct svc compiles) is built once
//! and served twice, as compiled and with `SVC_TYPESCRIPT=engine`, and every request of
//! a table that covers numbers' formatting and arithmetic, strings, optionals, lookups,
//! callbacks, failures, and values only the engine decides (non-ASCII case mapping, an
//! output that is not a finite number, a string that is not an enum value) must get the
//! same status and JSON from both.

use crate::harness::{client, project_binary, repo, start_binary};
use serde_json::{Value, json};

const PROJECT: &str = "native-ts";

fn requests() -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    let numbers = [
        (0.0, 0.0),
        (-0.0, 1.0),
        (1.0, 3.0),
        (0.1, 0.2),
        (2.5, -2.5),
        (-2.5, 0.5),
        (0.49999999999999994, 7.0),
        (1e21, 1e-7),
        (123456789012.345, 1e-6),
        (5e-324, 1.7976931348623157e308),
        (1.7976931348623157e308, 1.7976931348623157e308),
        (-7.0, 0.0),
        (42.0, 42.0),
        (1e300, -1e-300),
    ];
    for (a, b) in numbers {
        out.push(("numbers", json!({ "a": a, "b": b })));
    }
    for (s, t) in [
        ("abc", "ABC"),
        ("  padded\t", "\nx "),
        ("straße", "Kind"),
        ("plain", "plain"),
        ("", "fancy-one"),
        ("z", "é"),
        ("\u{1F600}", "\u{FF21}"),
        ("fail", "reason"),
        ("a", ""),
    ] {
        out.push(("strings", json!({ "s": s, "t": t })));
    }
    for maybe in [
        json!({}),
        json!({ "label": "x" }),
        json!({ "label": "", "n": 2.5, "kind": "fancy-one" }),
        json!({ "n": -1, "kind": "plain" }),
    ] {
        out.push(("maybe", maybe.clone()));
        out.push(("maybe?extra=e&count=3", maybe.clone()));
        out.push(("maybe?extra=&count=0", maybe));
    }
    let item = |name: &str, price: f64, kind: &str, tags: Option<&[&str]>| {
        let mut v = json!({ "name": name, "price": price, "kind": kind });
        if let Some(tags) = tags {
            v["tags"] = json!(tags);
        }
        v
    };
    for basket in [
        json!({ "items": [] }),
        json!({ "items": [item("a", 10.0, "plain", None), item("b", 0.1, "fancy-one", Some(&["sale"]))] }),
        json!({ "items": [item("a", 150.0, "plain", Some(&[]))], "code": " save " }),
        json!({ "items": [item("a", 1.0, "plain", None)], "code": "half" }),
        json!({ "items": [item("a", 1.0, "plain", Some(&["x", "stop", "yy"])), item("b", 2.0, "plain", Some(&["zz"]))] }),
        json!({ "items": [item("a", 1.0, "plain", None)], "code": "nope" }),
        json!({ "items": [item("a", 1.0, "plain", None)], "code": "constructor" }),
        json!({ "items": [item("a", 1.0, "plain", None)], "code": "ſave" }),
        json!({ "items": [item("a", -1.0, "plain", None)] }),
        json!({ "items": (0..6).map(|i| item(&format!("i{i}"), 1.0, "plain", None)).collect::<Vec<_>>() }),
        json!({ "items": [item("a", 1e308, "plain", None), item("b", 1e308, "plain", None)] }),
    ] {
        out.push(("basket", basket));
    }
    out
}

/// Status and JSON, without what differs between any two answers (the request id).
async fn answer(r: reqwest::Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let mut body: Value = r.json().await.unwrap();
    if let Some(error) = body.get_mut("error").and_then(Value::as_object_mut) {
        error.remove("request_id");
    }
    (status, body)
}

#[tokio::test]
async fn compiled_typescript_answers_as_the_engine_does() {
    let dir = repo().join("compiler").join("tests").join(PROJECT);
    let bin = project_binary(PROJECT, &dir);
    // Every node of the project is compiled: none falls back to the engine unseen.
    let nodes = std::fs::read_to_string(dir.join(".svc/server/src/nodes.rs")).unwrap();
    assert_eq!(nodes.matches("compiled to Rust (`native`)").count(), 4, "{nodes}");

    let (compiled, _) = start_binary(PROJECT, &bin, &[], &[], |_| ());
    let (engine, _) = start_binary(PROJECT, &bin, &[], &[("SVC_TYPESCRIPT", "engine")], |_| ());
    let c = client();
    let mut statuses = std::collections::BTreeSet::new();
    for (route, body) in requests() {
        let path = format!("/svc/conformance/{route}");
        let a = answer(c.post(compiled.url(&path)).json(&body).send().await.unwrap()).await;
        let b = answer(c.post(engine.url(&path)).json(&body).send().await.unwrap()).await;
        assert_eq!(a, b, "{route} {body}: compiled (left) and engine (right) differ");
        statuses.insert(a.0);
    }
    // The table reaches answers, failures, and the engine's own refusals.
    assert_eq!(
        statuses.into_iter().collect::<Vec<_>>(),
        [200, 422, 500],
        "the table should cover every kind of answer"
    );
}
