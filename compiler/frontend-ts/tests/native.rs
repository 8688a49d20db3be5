//! Which TypeScript nodes svc compiles to Rust, and why the others are not: each refusal
//! is a located reason (the node then runs in the engine). What the compiled Rust
//! answers is tested against the engine end to end (compiler/tests/e2e/shop.rs, and
//! runtime/script/tests/js_semantics.rs for the semantics it relies on).

use svc_frontend::FileId;
use svc_frontend_ts::native::{NotNative, Source, translate};
use svc_types::{Assets, NodeManifest};

const ASSETS: &str = r#"{
  "enums": [{ "name": "Currency", "values": ["EUR", "USD"] }],
  "structures": [
    { "name": "Line", "fields": [
      { "name": "sku", "type": "string", "required": true },
      { "name": "quantity", "type": "number", "required": true },
      { "name": "tags", "type": "string:array" },
      { "name": "note", "type": "string" }
    ]},
    { "name": "Order", "fields": [
      { "name": "currency", "type": "enum-value:Currency", "required": true },
      { "name": "lines", "type": "object:Line:array", "required": true },
      { "name": "coupon", "type": "string" }
    ]}
  ]
}"#;

const MANIFEST: &str = r#"{
  "nodeKey": "t.node", "name": "Node", "category": "code-function",
  "inputs": {
    "order": { "type": "object:Order" },
    "factor": { "type": "number", "default": 2 },
    "note": { "type": "string", "optional": true }
  },
  "outputs": {
    "total": { "type": "number" },
    "label": { "type": "string" },
    "currency": { "type": "enum-value:Currency" }
  }
}"#;

fn node(run: &str) -> String {
    format!(
        r#"import {{ defineCodeFunctionNode, t }} from "@svc/sdk";
import {{ twice }} from "./util.ts";
const RATES = {{ EUR: 1, USD: 0.9 }} as const;
export default defineCodeFunctionNode({{
  nodeKey: "t.node",
  name: "Node",
  inputs: {{ order: t.struct("Order"), factor: t.number().default(2), note: t.string().optional() }},
  outputs: {{ total: t.number(), label: t.string(), currency: t.enumValue("Currency") }},
  {run}
}});
"#
    )
}

const UTIL: &str = "export function twice(x: number): number { return x * 2; }\n\
                    export function loop(x: number): number { return loop(x); }\n";

fn compile(run: &str) -> Result<String, NotNative> {
    compile_with(run, UTIL)
}

fn compile_with(run: &str, util: &str) -> Result<String, NotNative> {
    let assets: Assets = serde_json::from_str(ASSETS).unwrap();
    let manifest: NodeManifest = serde_json::from_str(MANIFEST).unwrap();
    let text = node(run);
    let imports = vec![("./util.ts".to_string(), "src/util.ts".to_string())];
    let sources = [
        Source {
            name: "src/nodes/node.ts",
            file: FileId(0),
            text: &text,
            imports: &imports,
        },
        Source {
            name: "src/util.ts",
            file: FileId(1),
            text: util,
            imports: &[],
        },
    ];
    let mut translated = translate(&sources, &assets, &[("src/nodes/node.ts", &manifest)]);
    translated.pop().expect("one node").map(|tokens| tokens.to_string())
}

#[track_caller]
fn refused(run: &str, reason: &str) -> NotNative {
    match compile(run) {
        Ok(code) => panic!("compiled, but should not have been:\n{run}\n{code}"),
        Err(not) => {
            assert!(
                not.reason.contains(reason),
                "the reason `{}` does not mention `{reason}`",
                not.reason
            );
            not
        }
    }
}

#[test]
fn straight_line_nodes_compile() {
    let code = compile(
        r#"run(ctx) {
    const { order, factor } = ctx.inputs;
    if (order.lines.length === 0) ctx.fail("no lines", "EMPTY");
    const total = order.lines.reduce((sum, l) => sum + twice(l.quantity), 0) * factor * RATES[order.currency];
    let label = `${order.lines.length} lines`;
    if (order.coupon !== undefined) {
      label = label + " with " + order.coupon.toUpperCase();
    }
    const tagged = order.lines.filter((l) => l.tags !== undefined && l.tags.some((t) => t === "x"));
    ctx.log(`total ${total}`, tagged.length);
    return { total: Math.round(total * 100) / 100, label, currency: order.currency };
  },"#,
    )
    .unwrap();
    // The helper from another module, the lookup table, the narrowed optional.
    assert!(code.contains("fn h0_twice"), "{code}");
    assert!(code.contains("\"USD\" => 0.9f64"), "{code}");
    assert!(code.contains("js :: to_upper_case"), "{code}");
}

#[test]
fn arrow_runs_and_expression_bodies_compile() {
    compile(r#"run: (ctx) => ({ total: ctx.inputs.factor, label: "x", currency: "EUR" }),"#).unwrap();
    compile(
        r#"run: async (ctx) => {
    const s = ctx.inputs.note ?? "none";
    return { total: s.length, label: s, currency: ctx.inputs.factor > 1 ? "USD" : "EUR" };
  },"#,
    )
    .unwrap();
}

#[test]
fn what_is_not_compiled_says_what_and_where() {
    let not = refused(
        r#"async run(ctx) {
    const r = await fetch("https://example.com");
    return { total: 1, label: "x", currency: "EUR" };
  },"#,
        "`await` is not compiled",
    );
    assert_eq!((not.span.file, not.span.line), (FileId(0), 10), "{not:?}");
    refused(
        r#"run(ctx) {
    for (let i = 0; i < 3; i++) {}
    return { total: 1, label: "x", currency: "EUR" };
  },"#,
        "a `for` loop other than `for (const x of array)`",
    );
    refused(
        r#"run(ctx) { return { total: ctx.secret("K").length, label: "x", currency: "EUR" }; },"#,
        "`ctx.secret(…)` in an expression",
    );
    refused(
        r#"run(ctx) { return { total: 1, label: "x", currency: "EUR", extra: 1 }; },"#,
        "`extra`, which the outputs do not have",
    );
    refused(
        r#"run(ctx) { return { total: 1, currency: "EUR" }; },"#,
        "without `label`",
    );
    refused(
        r#"run(ctx) { return { total: ctx.inputs.order.coupon.length, label: "x", currency: "EUR" }; },"#,
        "`.length` of string or undefined",
    );
    refused(
        r#"run(ctx) { ctx.inputs.order.lines.push(ctx.inputs.order.lines[0]); return { total: 1, label: "x", currency: "EUR" }; },"#,
        "a call whose value is not used",
    );
}

#[test]
fn work_stays_linear_in_the_input() {
    // Each line against every line: quadratic in what the client sends.
    refused(
        r#"run(ctx) {
    const o = ctx.inputs.order;
    const n = o.lines.reduce((s, a) => s + o.lines.filter((b) => b.sku === a.sku).length, 0);
    return { total: n, label: "x", currency: "EUR" };
  },"#,
        "not part of its element",
    );
    refused(
        r#"run(ctx) {
    let n = 0;
    for (const a of ctx.inputs.order.lines) {
      for (const b of ctx.inputs.order.lines) { n += 1; }
    }
    return { total: n, label: "x", currency: "EUR" };
  },"#,
        "not part of its element",
    );
    // A loop over what its element holds is linear.
    compile(
        r#"run(ctx) {
    let n = 0;
    for (const a of ctx.inputs.order.lines) {
      if (a.quantity < 0) continue;
      if (a.tags === undefined) break;
      for (const t of a.tags) { n += t.length; }
    }
    return { total: n, label: "x", currency: "EUR" };
  },"#,
    )
    .unwrap();
    refused(
        r#"run(ctx) {
    let s = "x";
    for (const l of ctx.inputs.order.lines) { s = s + s; }
    return { total: 1, label: s, currency: "EUR" };
  },"#,
        "assigning `s` (string) in a loop it was declared outside of",
    );
    // A copy of something the client sent at each turn: quadratic memory.
    refused(
        r#"run(ctx) {
    const o = ctx.inputs.order;
    const copies = o.lines.map((l) => o.coupon ?? "");
    return { total: copies.length, label: "x", currency: "EUR" };
  },"#,
        "copying a string, array or object from outside a callback or loop",
    );
    refused(
        r#"run(ctx) {
    const o = ctx.inputs.order;
    const all = o.lines.map((l) => `${l.sku}${ctx.inputs.note}`);
    return { total: all.length, label: "x", currency: "EUR" };
  },"#,
        "copying a string, array or object from outside a callback or loop",
    );
    // Reading it is fine, and so is copying the element's own data.
    compile(
        r#"run(ctx) {
    const wanted = ctx.inputs.note ?? "";
    const skus = ctx.inputs.order.lines.filter((l) => l.sku === wanted).map((l) => l.sku);
    return { total: skus.length, label: wanted, currency: "EUR" };
  },"#,
    )
    .unwrap();
    compile(
        r#"run(ctx) {
    const notes = ctx.inputs.order.lines.map((l) => `${l.sku}: ${l.note}`);
    return { total: notes.length, label: "x", currency: "EUR" };
  },"#,
    )
    .unwrap();
    // A string accumulator can double at each step.
    refused(
        r#"run(ctx) {
    const s = ctx.inputs.order.lines.reduce((acc, l) => acc + acc, "x");
    return { total: 1, label: s, currency: "EUR" };
  },"#,
        "a `reduce` over anything but a number or a boolean",
    );
    refused(
        r#"run(ctx) { return { total: loop(1), label: "x", currency: "EUR" }; },"#,
        "`loop`",
    );
    let not = compile_with(
        r#"run(ctx) { return { total: twice(1), label: "x", currency: "EUR" }; },"#,
        "export function twice(x: number): number { return twice(x); }\n",
    )
    .unwrap_err();
    assert!(not.reason.contains("the recursive function `twice`"), "{not:?}");
}

#[test]
fn modules_with_effects_at_load_are_not_compiled() {
    // State that outlives a call in the engine.
    let not = compile_with(
        r#"run(ctx) { return { total: twice(1), label: "x", currency: "EUR" }; },"#,
        "let calls = 0;\nexport function twice(x: number): number { calls += 1; return x * 2; }\n",
    )
    .unwrap_err();
    assert_eq!((not.span.file, not.span.line), (FileId(1), 1), "{not:?}");
    assert!(not.reason.contains("does more when it loads"), "{not:?}");
}

#[test]
fn optionals_are_narrowed_by_their_truthiness() {
    let code = compile(
        r#"run(ctx) {
    const o = ctx.inputs.order;
    let label = "none";
    if (o.coupon) {
      label = o.coupon.toUpperCase();
    }
    if (!ctx.inputs.note) {
      return { total: 0, label, currency: "EUR" };
    }
    return { total: ctx.inputs.note.length, label, currency: "EUR" };
  },"#,
    )
    .unwrap();
    assert!(code.contains("is_empty"), "{code}");
}

#[test]
fn names_rust_cannot_spell_are_not_compiled() {
    let not = compile_with(
        r#"run(ctx) { return { total: $twice(1), label: "x", currency: "EUR" }; },"#,
        "export function $twice(x: number): number { return x * 2; }\n",
    )
    .unwrap_err();
    assert!(not.reason.contains("`$twice`"), "{not:?}");
    let not =
        compile(r#"run(ctx) { const café = 1; return { total: café, label: "x", currency: "EUR" }; },"#).unwrap_err();
    assert!(not.reason.contains("the name `café`"), "{not:?}");
}

#[test]
fn literals_rust_has_no_literal_for_compile() {
    let code = compile(r#"run: (ctx) => ({ total: 1e999 - -1e999, label: `${1e999}`, currency: "EUR" }),"#).unwrap();
    assert!(code.contains("f64 :: INFINITY"), "{code}");
}

#[test]
fn types_come_from_values_not_annotations() {
    // `as` changes nothing at run time: a number stays a number, whatever it claims.
    refused(
        r#"run(ctx) { const s = ctx.inputs.factor as unknown as string; return { total: 1, label: s, currency: "EUR" }; },"#,
        "number where `string` is expected",
    );
}
