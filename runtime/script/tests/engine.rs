//! The engine end to end: modules compiled with the real SDK, run with typed inputs,
//! outputs checked, failures, exceptions and limits.

use serde::{Deserialize, Serialize};
use std::panic::AssertUnwindSafe;
use svc_script::Engine;
use svc_sdk::__private::NodeAbort;
use svc_sdk::testing::{TestHost, block_on};
use svc_sdk::{NodeFailure, NodeResult};

const SDK: &str = include_str!("../../../sdk-ts/index.js");

const NODE: &str = r#"
import { defineCodeFunctionNode, t } from "@svc/sdk";
import { cents } from "src/money.ts";

export default defineCodeFunctionNode({
  nodeKey: "shop.price",
  name: "Price",
  inputs: { quantity: t.number(), unit: t.number(), mode: t.string() },
  outputs: { total: t.number(), label: t.string() },
  async run(ctx) {
    const { quantity, unit, mode } = ctx.inputs;
    ctx.log("pricing", { quantity });
    console.log("via console");
    switch (mode) {
      case "ok": return { total: cents(quantity * unit), label: `${quantity} x ${ctx.secret("API_TOKEN").length}` };
      case "fail": ctx.fail("out of stock", "OUT_OF_STOCK");
      case "throw": throw new TypeError("boom");
      case "extra": return { total: 1, label: "x", extra: true };
      case "wrong": return { total: "one", label: "x" };
      case "leak": return { total: ctx.secret("API_TOKEN"), label: "x" };
      case "missing": return { total: 1 };
      case "loop": for (;;) {}
      case "hog": { const a = []; for (;;) a.push(new Array(100000).fill(1)); }
      case "crumbs": { const a = []; for (let i = 0; ; i++) a.push("crumb " + i); }
      case "crumbs-caught": {
        try { const a = []; for (let i = 0; ; i++) a.push("crumb " + i); } catch (e) { return { total: 0, label: String(e) }; }
      }
      case "throw-null": throw null;
      case "recurse": { const deeper = (n) => deeper(n + 1) + 1; return { total: deeper(0), label: "x" }; }
      case "eval": return { total: eval("1"), label: "x" };
      case "function": return { total: new Function("return 1")(), label: "x" };
      case "pending": return new Promise(() => {});
      case "env": return { total: 0, label: `${ctx.env.isDev} ${ctx.env.version} ${ctx.request?.method}` };
      case "json": return { total: 2, label: { toJSON() { return "from toJSON"; } }, skipped: undefined, f() {} };
      case "getter": return { total: 1, get label() { throw new RangeError("getter boom"); } };
      case "sync-fail": { const { fail } = ctx; fail("no stock", "OUT"); }
      case "read-only": {
        const attempts = [() => { ctx.inputs = {}; }, () => { ctx.extra = 1; }, () => { ctx.log = null; }];
        const refused = attempts.filter((attempt) => { try { attempt(); return false; } catch { return true; } });
        return { total: refused.length, label: `${typeof ctx.inputs.mode} ${Object.isFrozen(ctx)}` };
      }
      // Each tries to leave something behind for the next call, which looks.
      case "pollute-prototype": Object.prototype.polluted = "yes"; return { total: 0, label: "x" };
      case "pollute-proto-json": {
        const merged = Object.assign({}, JSON.parse('{"__proto__": {"polluted": "yes"}}'));
        merged.__proto__.polluted = "yes";
        return { total: 0, label: "x" };
      }
      case "pollute-then": Object.prototype.then = (resolve) => resolve({ total: 666, label: "hijacked" }); return { total: 0, label: "x" };
      case "pollute-array": Array.prototype.map = () => ["hijacked"]; return { total: 0, label: "x" };
      case "pollute-global": globalThis.leaked = "yes"; return { total: 0, label: "x" };
      case "replace-global": JSON.stringify = () => "hijacked"; return { total: 0, label: "x" };
      case "late-job": Promise.resolve().then(() => ctx.log("late job")); return { total: 0, label: "x" };
      case "look": return { total: [1].map((x) => x + 1)[0], label: [
        ({}).polluted, typeof ({}).then, typeof globalThis.leaked, JSON.stringify({ a: 1 }),
      ].map(String).join(" ") };
      case "subclass": {
        class Refused extends Error { constructor(m) { super(m); this.name = "Refused"; } }
        const e = new Refused("no");
        const o = { toString() { return "own"; } };
        o.valueOf = () => 7;
        return { total: o.valueOf(), label: `${e.name}: ${e.message} ${String(o)} ${e instanceof Error}` };
      }
      case "request": return { total: Object.keys(ctx.request.headers).length,
        label: `${ctx.request.method} ${ctx.request.url} ${ctx.request.headers["x-trace"]}` };
    }
  },
});
"#;

const MONEY: &str = "export function cents(x) { return Math.round(x * 100) / 100; }";

static ENGINE: std::sync::LazyLock<&'static Engine> = std::sync::LazyLock::new(|| {
    let modules = vec![
        ("src/nodes/price.ts".to_string(), NODE.to_string()),
        ("src/money.ts".to_string(), MONEY.to_string()),
    ];
    let bundle = svc_script::compile(&modules, SDK).expect("compiles");
    Box::leak(Box::new(Engine::new(Box::leak(bundle.into_boxed_slice()))))
});

#[derive(Serialize)]
struct Inputs {
    quantity: f64,
    unit: f64,
    mode: String,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Outputs {
    total: f64,
    label: String,
}

fn outputs(total: f64, label: &str) -> Outputs {
    Outputs {
        total,
        label: label.into(),
    }
}

/// Runs the node in `mode`: outputs, a failure, or the abort it unwound with.
fn run(mode: &str) -> (Result<NodeResult<Outputs>, NodeAbort>, Vec<String>) {
    let host = TestHost::new().secret("API_TOKEN", "secret-value");
    let ctx = host.context(
        "shop.price",
        Inputs {
            quantity: 3.0,
            unit: 1.5,
            mode: mode.into(),
        },
    );
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        block_on(ENGINE.run::<Inputs, Outputs>("shop.price", "src/nodes/price.ts", &ctx))
    }));
    let result = result.map_err(|payload| *payload.downcast::<NodeAbort>().expect("a NodeAbort"));
    (result, ctx.logs())
}

#[test]
fn typed_inputs_in_checked_outputs_out_with_logs_and_secrets() {
    let (result, logs) = run("ok");
    assert_eq!(result.unwrap().unwrap(), outputs(4.5, "3 x 12"));
    assert_eq!(logs, ["pricing {\"quantity\":3}", "via console"]);
}

#[test]
fn ctx_fail_is_a_node_failure() {
    let (result, _) = run("fail");
    assert_eq!(
        result.unwrap().unwrap_err(),
        NodeFailure {
            message: "out of stock".into(),
            code: Some("OUT_OF_STOCK".into())
        }
    );
}

#[test]
fn exceptions_abort_with_the_detail_kept_for_the_log() {
    let abort = run("throw").0.unwrap_err();
    assert_eq!(abort.code, "internal_error");
    assert_eq!(abort.detail.as_deref(), Some("TypeError: boom"));
}

#[test]
fn outputs_that_do_not_fit_the_pins_are_named() {
    for (mode, names) in [("extra", "extra"), ("wrong", "`total`"), ("missing", "label")] {
        let abort = run(mode).0.unwrap_err();
        assert_eq!(abort.code, "node_output_invalid", "{mode}: {abort:?}");
        assert!(
            abort.message.contains("shop.price") && abort.message.contains(names),
            "{mode}: {abort:?}"
        );
    }
}

/// The outside review: one engine runtime serves every call on a thread, and nothing a
/// call did to what they share (prototypes, globals, its pending jobs) may reach the next.
#[test]
fn nothing_one_call_does_is_visible_to_the_next() {
    let clean = "undefined undefined undefined {\"a\":1}";
    assert_eq!(run("look").0.unwrap().unwrap().label, clean);
    for mode in [
        "pollute-prototype",
        "pollute-proto-json",
        "pollute-then",
        "pollute-array",
        "pollute-global",
        "replace-global",
    ] {
        // The attempt itself fails (a TypeError: shared objects are frozen), except the
        // merge of a JSON `__proto__`, which only gives the merged object a prototype of
        // its own ...
        let attempt = run(mode).0;
        if mode != "pollute-proto-json" {
            assert!(attempt.is_err(), "{mode}: the change was allowed: {attempt:?}");
        }
        // ... and the next call sees what it would have seen.
        let look = run("look").0.unwrap().unwrap();
        assert_eq!((look.total, look.label.as_str()), (2.0, clean), "after {mode}");
    }
    // A job the node queued and did not wait for runs in its own call, not the next.
    let (result, logs) = run("late-job");
    assert!(result.unwrap().is_ok());
    assert!(logs.iter().any(|l| l.contains("late job")), "{logs:?}");
    let (_, logs) = run("look");
    assert!(!logs.iter().any(|l| l.contains("late job")), "{logs:?}");
}

/// Freezing the shared prototypes must not break ordinary code: a subclass of `Error`
/// that names itself, an object that defines its own `toString` or `valueOf`.
#[test]
fn ordinary_code_still_sets_its_own_names_and_methods() {
    let out = run("subclass").0.unwrap().unwrap();
    assert_eq!((out.total, out.label.as_str()), (7.0, "Refused: no own true"));
}

/// The outside review: a node returning a secret in a number pin sent it to the client in
/// the 500's message. The answer names the pin and the types, the log's detail the rest.
#[test]
fn invalid_outputs_never_carry_the_value_into_the_answer() {
    for mode in ["wrong", "leak"] {
        let abort = run(mode).0.unwrap_err();
        assert_eq!(abort.code, "node_output_invalid", "{mode}: {abort:?}");
        assert!(
            abort.message.contains("`total`: invalid type: string, expected"),
            "{abort:?}"
        );
        for value in ["one", "secret-value"] {
            assert!(
                !abort.message.contains(value),
                "{mode}: the answer carries the value: {abort:?}"
            );
        }
        assert!(
            abort.detail.as_deref().unwrap_or("").contains("at `total`"),
            "{abort:?}"
        );
    }
}

#[test]
fn no_code_is_generated_at_run_time() {
    for mode in ["eval", "function"] {
        let abort = run(mode).0.unwrap_err();
        assert_eq!(abort.code, "internal_error", "{mode}: {abort:?}");
    }
}

#[test]
fn limits_stop_a_call_and_the_next_call_works() {
    let abort = run("loop").0.unwrap_err();
    assert_eq!(abort.code, "node_timeout", "{abort:?}");
    assert!(run("ok").0.unwrap().is_ok());
    let abort = run("hog").0.unwrap_err();
    assert_eq!(abort.code, "node_memory_limit", "{abort:?}");
    assert!(run("ok").0.unwrap().is_ok());
    let abort = run("pending").0.unwrap_err();
    assert_eq!(abort.code, "node_never_settled", "{abort:?}");
}

/// Small allocations fill the heap to the last byte, where QuickJS cannot even make the
/// "out of memory" error and throws `null` instead: still the memory limit, whether or
/// not the node caught it, and never mistaken for a node's own `throw null`.
#[test]
fn the_memory_limit_is_named_however_the_heap_filled_up() {
    for mode in ["crumbs", "crumbs-caught"] {
        let abort = run(mode).0.unwrap_err();
        assert_eq!(abort.code, "node_memory_limit", "{mode}: {abort:?}");
        assert!(run("ok").0.unwrap().is_ok(), "after {mode}");
    }
    let abort = run("throw-null").0.unwrap_err();
    assert_eq!(abort.code, "internal_error", "{abort:?}");
    assert_eq!(abort.detail.as_deref(), Some("null"));
}

/// Too deep a recursion is the exception JavaScript throws for it (a `RangeError` a node
/// may catch), within the stack limit: not a crash of the server's thread.
#[test]
fn too_deep_a_recursion_is_an_exception() {
    let abort = run("recurse").0.unwrap_err();
    assert_eq!(abort.code, "internal_error", "{abort:?}");
    assert_eq!(
        abort.detail.as_deref(),
        Some("RangeError: Maximum call stack size exceeded")
    );
    assert!(run("ok").0.unwrap().is_ok());
}

#[test]
fn env_is_metadata_and_request_is_absent_when_not_given() {
    let (result, _) = run("env");
    assert_eq!(result.unwrap().unwrap().label, "true 0.0.0-test undefined");
}

#[test]
fn request_is_what_the_runtime_has() {
    let meta = svc_sdk::RequestMeta {
        method: Some("POST".into()),
        url: Some("/acme/shop/orders".into()),
        // `__proto__` is a key like any other (as `JSON.parse` makes it), not the prototype.
        headers: Some(
            [("x-trace", "t1"), ("__proto__", "p")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
    };
    let ctx = svc_sdk::RunContext::new(
        "shop.price",
        Inputs {
            quantity: 1.0,
            unit: 1.0,
            mode: "request".into(),
        },
        Some(std::sync::Arc::new(meta)),
        std::sync::Arc::new(svc_sdk::Env::deployed("1.0.0", "abc")),
        std::sync::Arc::new(TestHost::new()),
    );
    let answer = block_on(ENGINE.run::<Inputs, Outputs>("shop.price", "src/nodes/price.ts", &ctx)).unwrap();
    assert_eq!(answer, outputs(2.0, "POST /acme/shop/orders t1"));
}

#[test]
fn outputs_are_read_as_json_stringify_writes_them() {
    let (result, _) = run("json");
    assert_eq!(result.unwrap().unwrap(), outputs(2.0, "from toJSON"));
    let abort = run("getter").0.unwrap_err();
    assert_eq!(abort.code, "node_output_invalid", "{abort:?}");
    // The getter's exception text is the node's data: in the log's detail, not the answer.
    assert!(!abort.message.contains("getter boom"), "{abort:?}");
    assert!(
        abort.detail.as_deref().unwrap_or("").contains("getter boom"),
        "{abort:?}"
    );
}

#[test]
fn ctx_is_read_only_and_its_functions_work_detached() {
    let (result, _) = run("read-only");
    assert_eq!(result.unwrap().unwrap(), outputs(3.0, "string true"));
    assert_eq!(
        run("sync-fail").0.unwrap().unwrap_err(),
        NodeFailure {
            message: "no stock".into(),
            code: Some("OUT".into())
        }
    );
}
