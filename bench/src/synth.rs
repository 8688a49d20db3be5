//! Synthetic projects of any size, shaped like real ones: each route has the three
//! protections, two code nodes with structure and enum wires, and four responses.

use std::fmt::Write as _;
use std::path::Path;

const CONFIG: &str = r#"project_name: synth
workspace_id: bench
api_id: synth
enums:
  - name: Currency
    values: [EUR, USD, GBP]
  - name: Status
    values: [accepted, { key: needs_review, value: needs-review, label: Needs review }]
structures:
  - name: Line
    fields:
      - { name: sku, type: string, required: true }
      - { name: quantity, type: number, required: true }
      - { name: unitPrice, type: number, required: true }
  - name: Order
    fields:
      - { name: customer, type: string, required: true }
      - { name: currency, type: "enum-value:Currency", required: true }
      - { name: lines, type: "object:Line:array", required: true }
      - { name: note, type: string }
secrets:
  - { name: PRICING_TOKEN }
"#;

fn node(key: &str, module: &str) -> String {
    format!(
        r#"use svc_sdk::prelude::*;

define_code_function_node! {{
    node_key: "synth.{key}",
    name: "{module}",
    inputs: {{
        order: t::structure("Order"),
        factor: t::number().default(1),
    }},
    outputs: {{
        total: t::number(),
        currency: t::enum_value("Currency"),
        status: t::enum_value("Status"),
    }},
    run: |ctx| async move {{
        let _token = ctx.secret("PRICING_TOKEN")?;
        let total: f64 = ctx.inputs.order.lines.iter().map(|l| l.quantity * l.unit_price).sum();
        Ok(Outputs {{ total: total * ctx.inputs.factor, currency: ctx.inputs.order.currency, status: crate::assets::Status::Accepted }})
    }},
}}
"#
    )
}

fn flow(i: usize, nodes: usize) -> String {
    let a = i % nodes;
    let b = (i + 1) % nodes;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"route: orders/r{i}/{{id}}
methods: [POST]
request:
  body: object:Order
  query:
    dry_run: {{ type: boolean, required: false }}
start: origin
nodes:
  origin:
    type: check-origin
    allowed_origins: [https://app.example.com, "https://*.example.com"]
    allowed: auth
    blocked: forbidden
  auth: {{ type: check-api-key, location: header-x-api-key, valid: limit, invalid: unauthorized }}
  limit: {{ type: rate-limit, limit: 100, window: 1m, by: api-key, sequence-ok: first, sequence-limited: too-many }}
  first:
    type: code
    node: synth.n{a}
    inputs:
      order: {{ from: request.body }}
      factor: 2
    next: second
    on_fail: failed
  second:
    type: code
    node: synth.n{b}
    inputs:
      order: {{ from: request.body }}
    next: ok
  ok:
    type: return-json
    status: 200
    headers: {{ x-status: {{ from: second.status }} }}
    body:
      id: {{ from: request.params.id }}
      first: {{ from: first.total }}
      second: {{ from: second.total }}
      currency: {{ from: first.currency }}
      customer: {{ from: request.body.customer }}
      owner: {{ from: auth.user }}
  failed: {{ type: return-json, status: 422, body: {{ error: {{ from: first.failure.message }} }} }}
  unauthorized: {{ type: return-json, status: 401 }}
  forbidden: {{ type: return-json, status: 403 }}
  too-many: {{ type: return-json, status: 429 }}
"#
    );
    s
}

/// Writes a project with `routes` routes and `nodes` code nodes into `dir`.
pub fn write_project(dir: &Path, routes: usize, nodes: usize) -> std::io::Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("flows"))?;
    std::fs::create_dir_all(dir.join("src/nodes"))?;
    std::fs::write(dir.join("svc.config.yaml"), CONFIG)?;
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"synth-nodes\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
    )?;
    std::fs::write(dir.join("src/lib.rs"), "svc_sdk::include_assets!();\npub mod nodes;\n")?;
    let mut mods = String::new();
    for n in 0..nodes {
        let _ = writeln!(mods, "pub mod n{n};");
        std::fs::write(
            dir.join(format!("src/nodes/n{n}.rs")),
            node(&format!("n{n}"), &format!("n{n}")),
        )?;
    }
    std::fs::write(dir.join("src/nodes/mod.rs"), mods)?;
    for i in 0..routes {
        std::fs::write(dir.join(format!("flows/r{i:05}.yaml")), flow(i, nodes))?;
    }
    Ok(())
}

/// The shapes of one large flow file, each the worst case of one step of `svc check`.
pub const LARGE_SHAPES: [&str; 4] = ["keys", "array", "wires", "nodes"];

/// Writes a project of one route whose flow is large in one direction (`shape`, one of
/// [`LARGE_SHAPES`]) with `n` elements: a Return JSON body with `n` literal keys, a body
/// holding an array of `n` numbers, `n` wires into one Return JSON, or a chain of `n`
/// Check Origin nodes. Returns the size of the flow file in bytes.
pub fn write_large_flow(dir: &Path, shape: &str, n: usize) -> std::io::Result<usize> {
    write_project(dir, 0, 1)?;
    let mut flow = String::from("route: large\nmethods: [GET]\n");
    match shape {
        "keys" => {
            flow.push_str("start: ok\nnodes:\n  ok:\n    type: return-json\n    status: 200\n    body:\n");
            for i in 0..n {
                let _ = writeln!(flow, "      key_number_{i:07}: \"value {i}\"");
            }
        }
        "array" => {
            flow.push_str(
                "start: ok\nnodes:\n  ok:\n    type: return-json\n    status: 200\n    body:\n      items:\n",
            );
            for i in 0..n {
                let _ = writeln!(flow, "        - {i}");
            }
        }
        "wires" => {
            flow.push_str("request:\n  query:\n    name: { type: string, required: true }\n");
            flow.push_str("start: ok\nnodes:\n  ok:\n    type: return-json\n    status: 200\n    body:\n");
            for i in 0..n {
                let _ = writeln!(flow, "      k{i}: {{ from: request.query.name }}");
            }
        }
        "nodes" => {
            flow.push_str("start: n0\nnodes:\n");
            for i in 0..n {
                let next = i + 1;
                let _ = writeln!(
                    flow,
                    "  n{i}: {{ type: check-origin, allowed_origins: [\"https://a.example\"], allowed: n{next}, blocked: no }}"
                );
            }
            let _ = writeln!(flow, "  n{n}: {{ type: return-json, status: 200 }}");
            flow.push_str("  no: { type: return-json, status: 403 }\n");
        }
        other => panic!("unknown shape `{other}`: one of {LARGE_SHAPES:?}"),
    }
    std::fs::write(dir.join("flows/large.yaml"), &flow)?;
    Ok(flow.len())
}
