//! The web globals a node may use (issue 12): each one exercised from a compiled module,
//! and `fetch` through the host, as the server's HTTP client would answer it.

use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use svc_script::Engine;
use svc_sdk::fetch::{FetchError, Headers, Request, Response};
use svc_sdk::testing::{TestHost, block_on};

const SDK: &str = include_str!("../../../sdk-ts/index.js");

const NODE: &str = r#"
import { defineCodeFunctionNode, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "web.probe",
  name: "Probe",
  inputs: { mode: t.string(), payload: t.any().optional() },
  outputs: { report: t.any() },
  async run(ctx) {
    switch (ctx.inputs.mode) {
      case "echo":
        return { report: { payload: ctx.inputs.payload, types: Object.values(ctx.inputs.payload).map((v) => typeof v) } };
      case "url": {
        const u = new URL("../b/c?x=1&y=a+b#top", "https://user:pw@example.com:8443/a/z");
        u.searchParams.append("z", "é &");
        const p = new URLSearchParams({ q: "svc rocks", n: "1" });
        p.sort();
        const relative = URL.canParse("/only/a/path");
        const set = new URL("http://example.com/");
        set.pathname = "/p q";
        set.hash = "h";
        set.port = "81";
        return { report: { href: u.href, host: u.host, origin: u.origin, search: u.search, y: u.searchParams.get("y"),
          params: p.toString(), relative, set: set.href, json: JSON.stringify({ u: set }) } };
      }
      case "invalid-url":
        try { new URL("not a url"); return { report: "accepted" }; } catch (e) { return { report: `${e.name}: ${e.message}` }; }
      case "text": {
        const bytes = new TextEncoder().encode("h€llo 😀");
        const back = new TextDecoder().decode(bytes);
        const lenient = new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0x62]));
        let fatal = "accepted";
        try { new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xc3])); } catch (e) { fatal = e.name; }
        return { report: { length: bytes.length, back, lenient, fatal, b64: btoa("hello\xff"), unb64: atob("aGVsbG8="), } };
      }
      case "crypto": {
        const a = crypto.getRandomValues(new Uint8Array(32));
        const b = crypto.getRandomValues(new Uint32Array(4));
        const uuid = crypto.randomUUID();
        return { report: { distinct: a.some((x) => x !== a[0]), words: b.length, uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(uuid) } };
      }
      case "clone": {
        const original = { when: new Date(0), list: [1, { deep: true }], map: new Map([["k", new Set([1])]]) };
        original.self = original;
        const copy = structuredClone(original);
        let fn = "accepted";
        try { structuredClone({ f() {} }); } catch (e) { fn = e.name; }
        return { report: { same: copy !== original && copy.self === copy && copy.list[1] !== original.list[1],
          date: copy.when instanceof Date && copy.when.getTime() === 0, set: copy.map.get("k").has(1), fn } };
      }
      case "fetch": {
        const response = await fetch("https://api.example.com/items?limit=2", {
          method: "post",
          headers: { "x-trace": "t1", "content-type": "application/json" },
          body: JSON.stringify({ name: "é" }),
        });
        const body = await response.json();
        let again = "accepted";
        try { await response.text(); } catch (e) { again = e.name; }
        return { report: { status: response.status, ok: response.ok, type: response.headers.get("content-type"), body, again,
          url: response.url } };
      }
      case "fetch-error":
        try { await fetch("https://down.example.com/"); return { report: "accepted" }; } catch (e) { return { report: `${e.name}: ${e.message}` }; }
      case "json-rules": {
        const url = new URL("https://example.com/a b");
        return { report: { date: new Date(0), url, list: [undefined, () => 1, NaN, Infinity, -0, 2 ** 53],
          nested: { skip: undefined, fn() {}, keep: 1.5 }, map: new Map([["a", 1]]) } };
      }
      case "cycle": {
        const a = {};
        a.self = a;
        return { report: a };
      }
      case "response": {
        const r = Response.json({ a: 1 }, { status: 201, headers: { "x-a": "b" } });
        const h = new Headers([["B", "2"], ["a", "1"], ["a", "3"]]);
        const req = new Request("https://example.com/x", { method: "PUT", body: new URLSearchParams({ a: "b c" }) });
        return { report: { status: r.status, type: r.headers.get("content-type"), text: await r.text(), headers: [...h],
          reqType: req.headers.get("content-type"), reqBody: await req.text() } };
      }
    }
  },
});
"#;

static ENGINE: std::sync::LazyLock<&'static Engine> = std::sync::LazyLock::new(|| {
    let modules = vec![("src/nodes/probe.ts".to_string(), NODE.to_string())];
    let bundle = svc_script::compile(&modules, SDK).expect("compiles");
    Box::leak(Box::new(Engine::new(Box::leak(bundle.into_boxed_slice()))))
});

#[derive(Serialize)]
struct Inputs {
    mode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Outputs {
    report: serde_json::Value,
}

fn probe_with(host: TestHost, mode: &str) -> serde_json::Value {
    let ctx = host.context(
        "web.probe",
        Inputs {
            mode: mode.into(),
            payload: None,
        },
    );
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        block_on(ENGINE.run::<Inputs, Outputs>("web.probe", "src/nodes/probe.ts", &ctx))
    }));
    match run {
        Ok(result) => result.expect("the probe returns").report,
        Err(payload) => {
            let abort = payload
                .downcast::<svc_sdk::__private::NodeAbort>()
                .expect("a NodeAbort");
            panic!("the probe `{mode}` stopped: {} {:?}", abort.message, abort.detail)
        }
    }
}

fn probe(mode: &str) -> serde_json::Value {
    probe_with(TestHost::new(), mode)
}

#[test]
fn url_and_search_params_follow_the_whatwg_rules() {
    let r = probe("url");
    assert_eq!(
        r["href"],
        "https://user:pw@example.com:8443/b/c?x=1&y=a+b&z=%C3%A9+%26#top"
    );
    assert_eq!(r["host"], "example.com:8443");
    assert_eq!(r["origin"], "https://example.com:8443");
    assert_eq!(r["search"], "?x=1&y=a+b&z=%C3%A9+%26");
    assert_eq!(r["y"], "a b");
    assert_eq!(r["params"], "n=1&q=svc+rocks");
    assert_eq!(r["relative"], false);
    assert_eq!(r["set"], "http://example.com:81/p%20q#h");
    assert_eq!(r["json"], r#"{"u":"http://example.com:81/p%20q#h"}"#);
    assert_eq!(probe("invalid-url"), "TypeError: Invalid URL: not a url");
}

#[test]
fn text_encoding_and_base64() {
    let r = probe("text");
    assert_eq!(r["length"], 12);
    assert_eq!(r["back"], "h€llo 😀");
    assert_eq!(r["lenient"], "a\u{fffd}b");
    assert_eq!(r["fatal"], "TypeError");
    assert_eq!(r["b64"], "aGVsbG//");
    assert_eq!(r["unb64"], "hello");
}

#[test]
fn crypto_gives_random_values_and_v4_uuids() {
    let r = probe("crypto");
    assert_eq!(r, serde_json::json!({ "distinct": true, "words": 4, "uuid": true }));
}

#[test]
fn structured_clone_copies_deeply_and_refuses_functions() {
    let r = probe("clone");
    assert_eq!(
        r,
        serde_json::json!({ "same": true, "date": true, "set": true, "fn": "DataCloneError" })
    );
}

#[test]
fn fetch_goes_through_the_host_with_method_headers_and_body() {
    let seen: Arc<Mutex<Option<Request>>> = Arc::default();
    let record = seen.clone();
    let host = TestHost::new().on_fetch(move |request| {
        *record.lock().unwrap() = Some(request);
        let mut headers = Headers::new();
        headers.set("content-type", "application/json");
        Ok(Response::new(
            200,
            headers,
            "https://api.example.com/items?limit=2",
            br#"{"items":["a","b"]}"#.to_vec(),
        ))
    });
    let r = probe_with(host, "fetch");
    assert_eq!(
        r,
        serde_json::json!({ "status": 200, "ok": true, "type": "application/json",
            "body": { "items": ["a", "b"] }, "again": "TypeError", "url": "https://api.example.com/items?limit=2" })
    );
    let request = seen.lock().unwrap().take().expect("the host was asked");
    assert_eq!(request.method, "POST");
    assert_eq!(request.url, "https://api.example.com/items?limit=2");
    assert_eq!(request.headers.get("x-trace"), Some("t1"));
    assert_eq!(request.body.as_deref(), Some(r#"{"name":"é"}"#.as_bytes()));
    // The node's deadline bounds the request.
    assert!(
        request
            .timeout
            .is_some_and(|t| t <= svc_script::DEFAULT_LIMITS.deadline)
    );

    let host = TestHost::new().on_fetch(|_| Err(FetchError::Network("connection refused".into())));
    assert_eq!(
        probe_with(host, "fetch-error"),
        "TypeError: fetch failed: network error: connection refused"
    );
}

/// Outputs are read as `JSON.stringify` writes them (no JSON text crosses: convert.rs).
#[test]
fn outputs_follow_json_stringify() {
    assert_eq!(
        probe("json-rules"),
        serde_json::json!({ "date": "1970-01-01T00:00:00.000Z", "url": "https://example.com/a%20b",
            "list": [null, null, null, null, 0, 9007199254740992.0_f64], "nested": { "keep": 1.5 }, "map": {} })
    );
    let ctx = TestHost::new().context(
        "web.probe",
        Inputs {
            mode: "cycle".into(),
            payload: None,
        },
    );
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        block_on(ENGINE.run::<Inputs, Outputs>("web.probe", "src/nodes/probe.ts", &ctx))
    }));
    let abort = run
        .expect_err("a cycle cannot be read")
        .downcast::<svc_sdk::__private::NodeAbort>()
        .expect("a NodeAbort");
    assert_eq!(abort.code, "node_output_invalid");
    assert!(
        abort.message.contains("nested too deeply (or is circular)") && abort.message.len() < 300,
        "{}",
        abort.message
    );
}

/// Inputs reach the node as JavaScript values (no JSON text: convert.rs's `Writer`).
#[test]
fn inputs_arrive_as_the_values_they_are() {
    let payload = serde_json::json!({ "n": 3, "x": 1.5, "big": 4_000_000_000u64, "s": "é", "b": true,
        "nothing": null, "list": [1, "two", { "three": [3] }] });
    let ctx = TestHost::new().context(
        "web.probe",
        Inputs {
            mode: "echo".into(),
            payload: Some(payload.clone()),
        },
    );
    let report = block_on(ENGINE.run::<Inputs, Outputs>("web.probe", "src/nodes/probe.ts", &ctx))
        .expect("echoed")
        .report;
    assert_eq!(report["payload"], payload);
    assert_eq!(
        report["types"],
        // In the order the keys were written (n, x, big, s, b, nothing, list), as
        // JavaScript keeps them.
        serde_json::json!(["number", "number", "number", "string", "boolean", "object", "object"])
    );
}

#[test]
fn headers_requests_and_responses() {
    let r = probe("response");
    assert_eq!(
        r,
        serde_json::json!({ "status": 201, "type": "application/json", "text": "{\"a\":1}",
            "headers": [["a", "1, 3"], ["b", "2"]],
            "reqType": "application/x-www-form-urlencoded;charset=UTF-8", "reqBody": "a=b+c" })
    );
}
