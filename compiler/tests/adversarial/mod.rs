//! Projects whose names are chosen to break generated Rust: keywords, std and prelude
//! items, the generated code's own items, names that collide after case conversion, and
//! odd spellings, in every place a name can go (structures, fields, enums and their
//! values, secrets, flow files, route segments, query, header and body inputs, node keys
//! and pins, response keys).
//!
//! The property: every project `svc check` accepts builds. `corpus.rs` checks generated
//! projects in memory until it has a few that check, then builds each with `svc build`.

/// Names that have broken, or could break, generated code.
const HAZARDS: &[&str] = &[
    // Rust keywords, strict, reserved and weak.
    "self",
    "Self",
    "super",
    "crate",
    "_",
    "type",
    "match",
    "fn",
    "async",
    "await",
    "dyn",
    "try",
    "gen",
    "union",
    "static",
    "ref",
    "box",
    "mod",
    "use",
    "impl",
    "struct",
    "enum",
    "where",
    "loop",
    "move",
    "return",
    "in",
    "as",
    "let",
    "const",
    "extern",
    "macro_rules",
    "abstract",
    "yield",
    "raw",
    "safe",
    // std and prelude items.
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "String",
    "Vec",
    "Box",
    "Default",
    "Clone",
    "Copy",
    "Send",
    "Sync",
    "From",
    "Into",
    "Iterator",
    "Drop",
    "Fn",
    "std",
    "core",
    "alloc",
    "str",
    "u8",
    "bool",
    "f64",
    "i64",
    "usize",
    "serde",
    "Serialize",
    "Deserialize",
    "Debug",
    "PartialEq",
    "Eq",
    // What generated code names itself.
    "Request",
    "Inputs",
    "Outputs",
    "RouteConfig",
    "Runtime",
    "Assets",
    "router",
    "routes",
    "nodes",
    "assets",
    "req",
    "state",
    "ctx",
    "out",
    "held",
    "body",
    "params",
    "query",
    "headers",
    "Json",
    "Arc",
    "axum",
    "svc_runtime",
    "svc_sdk",
    "main",
    "handler",
    "response",
    "status",
    "rt",
    "config",
    "secrets",
    "__private",
    // Names that meet after case conversion, and odd spellings.
    "fooBar",
    "foo_bar",
    "FooBar",
    "foo-bar",
    "FOO_BAR",
    "foobar",
    "a",
    "A",
    "a1",
    "x_1",
    "value",
    "values",
    "key",
    "label",
    "_hidden",
    "café",
    "x2y",
    "HTTPServer",
    "httpServer",
    "http_server",
];

/// A small deterministic generator (splitmix64): a seed reproduces a project.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn hazard(&mut self) -> &'static str {
        HAZARDS[self.below(HAZARDS.len())]
    }

    /// `n` names for one scope, each written the way `style` asks (most of the time:
    /// sometimes raw, so that the checker's rules are exercised too).
    fn names(&mut self, n: usize, style: fn(&str) -> String) -> Vec<String> {
        (0..n)
            .map(|_| {
                let raw = self.hazard();
                if self.chance(85) { style(raw) } else { raw.to_string() }
            })
            .collect()
    }
}

fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn pascal(name: &str) -> String {
    let joined: String = words(name)
        .iter()
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect();
    if joined.is_empty() { "X".into() } else { joined }
}

fn camel(name: &str) -> String {
    let p = pascal(name);
    let mut c = p.chars();
    c.next()
        .map(|f| f.to_lowercase().chain(c).collect())
        .unwrap_or_default()
}

fn snake(name: &str) -> String {
    let w = words(name).join("_");
    if w.is_empty() { "x".into() } else { w }
}

fn kebab(name: &str) -> String {
    let w = words(name).join("-");
    if w.is_empty() { "x".into() } else { w }
}

fn screaming(name: &str) -> String {
    snake(name).to_uppercase()
}

fn same(name: &str) -> String {
    name.to_string()
}

fn quoted(name: &str) -> String {
    serde_json::to_string(name).unwrap()
}

/// A Rust identifier for a pin name: keywords that can be raw identifiers are written raw.
fn rust_ident(name: &str) -> String {
    const RAW_OK: &[&str] = &[
        "type", "match", "fn", "async", "await", "dyn", "try", "gen", "union", "static", "ref", "box", "mod", "use",
        "impl", "struct", "enum", "where", "loop", "move", "return", "in", "as", "let", "const", "extern", "abstract",
        "yield",
    ];
    if RAW_OK.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// One project in the corpus fixture format (`//- path` sections).
pub fn project(rng: &mut Rng) -> String {
    let enum_name = pascal(rng.hazard());
    let enum_values = rng.names(3, camel);
    let s1 = pascal(rng.hazard());
    let s2 = pascal(rng.hazard());
    let f = rng.names(3, camel);
    let g = rng.names(2, camel);
    let secret = screaming(rng.hazard());
    let module = snake(rng.hazard());
    let node_key = kebab(rng.hazard());
    let pins = rng.names(2, snake);
    let outs = rng.names(2, snake);
    let flow_file = if rng.chance(50) {
        kebab(rng.hazard())
    } else {
        snake(rng.hazard())
    };
    let segments = rng.names(2, kebab);
    let param = camel(rng.hazard());
    let query = rng.names(2, same);
    let header = kebab(rng.hazard());
    let keys = rng.names(5, same);

    let values: Vec<String> = enum_values.iter().map(|v| quoted(v)).collect();
    // The pins as written in the macro, and the Rust fields node code reads them by.
    let field = |id: &str| svc_frontend::rust_types::ident(&svc_types::names::pin_field(id)).to_string();
    let p = |i: usize| field(&pins[i]);
    let o = |i: usize| field(&outs[i]);
    format!(
        r#"//- svc.config.yaml
project_name: corpus
workspace_id: ws
api_id: api
enums:
  - name: {enum_q}
    values: [{values}]
structures:
  - name: {s1_q}
    fields:
      - {{ name: {f0}, type: string, required: true }}
      - {{ name: {f1}, type: "enum-value:{enum_name}" }}
      - {{ name: {f2}, type: number }}
  - name: {s2_q}
    fields:
      - {{ name: {g0}, type: "object:{s1}", required: true }}
      - {{ name: {g1}, type: "object:{s1}:array" }}
secrets:
  - {{ name: {secret_q} }}
//- Cargo.toml
[package]
name = "corpus-nodes"
version = "0.1.0"
edition = "2024"
//- src/lib.rs
svc_sdk::include_assets!();
pub mod nodes;
//- src/nodes/mod.rs
pub mod {module_ident};
//- src/nodes/{module}.rs
use svc_sdk::prelude::*;

define_code_function_node! {{
    node_key: "corpus.{node_key}",
    name: "Adversarial",
    inputs: {{
        {p0_id}: t::string(),
        {p1_id}: t::structure("{s1}").optional(),
    }},
    outputs: {{
        {o0_id}: t::string(),
        {o1_id}: t::number(),
    }},
    run: |ctx| async move {{
        let _ = ctx.secret({secret_q})?;
        Ok(Outputs {{ {o0}: ctx.inputs.{p0}.clone(), {o1}: ctx.inputs.{p1}.as_ref().map(|_| 1.0).unwrap_or(0.0) }})
    }},
}}
//- flows/{flow_file}.yaml
route: "{seg0}/{seg1}/{{{param}}}"
methods: [POST]
request:
  query:
    {q0_q}: {{ type: string, required: true }}
    {q1_q}: {{ type: "enum-value:{enum_name}", required: false }}
  headers:
    {header_q}: {{ type: string, required: false }}
  body: "object:{s2}"
start: auth
nodes:
  auth: {{ type: check-api-key, valid: work, invalid: denied }}
  work:
    type: code
    node: corpus.{node_key}
    inputs:
      {pin0_q}: {{ from: "request.query.{q0}" }}
      {pin1_q}: {{ from: "request.body.{g0_raw}" }}
    next: ok
  ok:
    type: return-json
    status: 200
    body:
      {k0}: {{ from: "work.{out0}" }}
      {k1}: {{ from: "request.params.{param}" }}
      {k2}: {{ from: "request.headers.{header}" }}
      {k3}: {{ from: "request.body" }}
      {k4}: {{ from: "request.query.{q1}" }}
  denied: {{ type: return-json, status: 401, body: {{ {k0}: denied }} }}
"#,
        enum_q = quoted(&enum_name),
        values = values.join(", "),
        s1_q = quoted(&s1),
        s2_q = quoted(&s2),
        f0 = quoted(&f[0]),
        f1 = quoted(&f[1]),
        f2 = quoted(&f[2]),
        g0 = quoted(&g[0]),
        g1 = quoted(&g[1]),
        secret_q = quoted(&secret),
        module_ident = rust_ident(&module),
        p0 = p(0),
        p1 = p(1),
        o0 = o(0),
        o1 = o(1),
        p0_id = rust_ident(&pins[0]),
        p1_id = rust_ident(&pins[1]),
        o0_id = rust_ident(&outs[0]),
        o1_id = rust_ident(&outs[1]),
        seg0 = segments[0],
        seg1 = segments[1],
        q0_q = quoted(&query[0]),
        q1_q = quoted(&query[1]),
        q0 = query[0],
        q1 = query[1],
        header_q = quoted(&header),
        pin0_q = quoted(&pins[0]),
        pin1_q = quoted(&pins[1]),
        g0_raw = g[0],
        out0 = outs[0],
        k0 = quoted(&keys[0]),
        k1 = quoted(&keys[1]),
        k2 = quoted(&keys[2]),
        k3 = quoted(&keys[3]),
        k4 = quoted(&keys[4]),
    )
}
