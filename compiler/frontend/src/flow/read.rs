//! A flow file read into the model: the route, its methods, its request and its list of
//! nodes (each read by [`super::node`]).

use super::model::*;
use super::node::read_node;
use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::{FileId, Span};
use crate::yaml::{self, MapReader, Node, Value};
use svc_syntax::config::{ConstraintSpans, FieldParts, read_field_parts};
use svc_types::Constraints;
use svc_types::TypeRef;

const TOP_KEYS: &[&str] = &["$schema", "route", "methods", "summary", "request", "start", "nodes"];

/// Reads one flow file. Returns `None` when the file cannot be read as a flow at all.
pub fn load(file: FileId, text: &str, diags: &mut Diagnostics) -> Option<Flow> {
    let root = yaml::parse_reporting(file, text, diags)?;
    let mut top = MapReader::new(&root, "a flow file", diags)?;
    let _ = top.get("$schema");
    let route = top
        .required(
            "route",
            "a flow declares its path: `route: orders/create` (served at /<workspace_id>/<api_id>/orders/create)",
            diags,
        )
        .and_then(|n| read_route(n, diags));
    let methods = top
        .required("methods", "a flow declares its HTTP methods: `methods: [POST]`", diags)
        .map(|n| read_methods(n, diags))
        .unwrap_or_default();
    let summary = top
        .get("summary")
        .and_then(|n| yaml::expect_str(n, "`summary` is text", diags))
        .map(str::to_string);
    let mut request = top.get("request").map(|n| read_request(n, diags)).unwrap_or_default();
    let start = top
        .required(
            "start",
            "`start` names the first node after the Start node: `start: check-origin`",
            diags,
        )
        .and_then(|n| {
            yaml::expect_str(n, "`start` names a node id", diags).map(|s| Spanned::new(s.to_string(), n.span))
        });
    let (nodes, broken) = top
        .required("nodes", "a flow lists its nodes under `nodes:`, keyed by id", diags)
        .map(|n| read_nodes(n, diags))
        .unwrap_or_default();
    top.finish(TOP_KEYS, diags);

    let route = route?;
    request.params = route_params(&route);
    Some(Flow {
        file,
        route,
        methods,
        summary,
        request,
        start: start?,
        nodes,
        broken,
    })
}

/// Path segments: `[A-Za-z0-9._~-]+` or `{param}`. Leading and trailing `/` are dropped.
fn read_route(node: &Node, diags: &mut Diagnostics) -> Option<Spanned<String>> {
    let s = yaml::expect_str(node, "`route` is a path such as `orders/{id}`", diags)?;
    let trimmed = s.trim_matches('/');
    let bad = |msg: String, diags: &mut Diagnostics| {
        diags.push(
            Diagnostic::new(Code::InvalidRoute, node.span, msg)
                .label("invalid route path")
                .help("a route is `/`-separated segments of letters, digits, `-`, `_`, `.` and `~`, or `{param}` for a path parameter, for example `orders/{id}/items`"),
        );
        None
    };
    if trimmed.is_empty() {
        return bad("the route path is empty".into(), diags);
    }
    let mut seen_params = Vec::new();
    for segment in trimmed.split('/') {
        if segment.is_empty() {
            return bad(format!("the route `{s}` has an empty segment (`//`)"), diags);
        }
        if segment == "." || segment == ".." {
            // RFC 3986 §5.2.4: clients and proxies remove dot segments before sending, so
            // `a/../admin` arrives as `admin` and `a/./b` as `a/b`: the route would be
            // unreachable, or reached by requests meant for another.
            diags.push(
                Diagnostic::new(
                    Code::InvalidRoute,
                    node.span,
                    format!("the route `{s}` has a dot segment `{segment}`, which HTTP clients and proxies remove before the request arrives"),
                )
                .label("dot segment")
                .help("write the path as it arrives, without `.` or `..` segments (a `.` inside a segment, as in `v1.2`, is fine)"),
            );
            return None;
        }
        if let Some(param) = segment.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            if svc_types::names::check_path_param(param).is_err() {
                return bad(format!("path parameter `{{{param}}}` is not a snake_case name"), diags);
            }
            if seen_params.contains(&param) {
                return bad(format!("path parameter `{{{param}}}` appears twice"), diags);
            }
            seen_params.push(param);
        } else if !segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'))
        {
            return bad(
                format!("the route segment `{segment}` has characters that are not allowed in a path"),
                diags,
            );
        }
    }
    Some(Spanned::new(trimmed.to_string(), node.span))
}

fn route_params(route: &Spanned<String>) -> Vec<Spanned<String>> {
    param_names(&route.value)
        .map(|p| Spanned::new(p.to_string(), route.span))
        .collect()
}

/// The names of a route path's `{parameters}`, in order.
pub fn param_names(route: &str) -> impl Iterator<Item = &str> {
    route
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|p| p.strip_suffix('}')))
}

fn read_methods(node: &Node, diags: &mut Diagnostics) -> Vec<Spanned<Method>> {
    let help = "methods are a list of GET, POST, PUT, PATCH, DELETE, for example `methods: [GET]`";
    let Some(items) = yaml::expect_str_list(node, help, diags) else {
        return vec![];
    };
    let mut out: Vec<Spanned<Method>> = Vec::new();
    for (s, span) in items {
        match Method::parse(s) {
            Some(m) if out.iter().any(|x| x.value == m) => diags.push(
                Diagnostic::new(Code::InvalidValue, span, format!("method `{s}` is listed twice"))
                    .label("repeated")
                    .help("list each method once"),
            ),
            Some(m) => out.push(Spanned::new(m, span)),
            None => {
                let extra = match s.to_ascii_uppercase().as_str() {
                    "OPTIONS" => " (OPTIONS is answered for you: a route with Check Origin answers CORS preflights)",
                    "HEAD" => " (HEAD is answered for every GET route)",
                    _ => "",
                };
                diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        span,
                        format!("`{s}` is not a method a route can declare{extra}"),
                    )
                    .label("unknown method")
                    .help(help),
                )
            }
        }
    }
    if out.is_empty() && node.as_seq().is_some_and(|s| s.is_empty()) {
        diags.push(
            Diagnostic::new(Code::InvalidValue, node.span, "the route accepts no method")
                .label("empty")
                .help(help),
        );
    }
    out
}

fn read_request(node: &Node, diags: &mut Diagnostics) -> RequestSchema {
    let mut schema = RequestSchema::default();
    let Some(mut r) = MapReader::new(node, "`request`", diags) else {
        return schema;
    };
    if let Some(body) = r.get("body") {
        schema.body = match &body.value {
            Value::String(s) => parse_type(s, body.span, diags).map(|t| BodySchema::Typed(Spanned::new(t, body.span))),
            Value::Map(_) => Some(BodySchema::Fields(read_fields(body, "body", diags))),
            _ => {
                diags.push(body.wrong_shape("a type or a mapping of fields", "write `body: object:CreateOrder`, or list fields: `body: { name: string, count: { type: number, required: false } }`"));
                None
            }
        };
    }
    if let Some(q) = r.get("query") {
        schema.query = read_fields(q, "query", diags);
    }
    if let Some(h) = r.get("headers") {
        schema.headers = read_fields(h, "headers", diags);
        for f in &mut schema.headers {
            f.name.value = f.name.value.to_ascii_lowercase();
        }
    }
    r.finish(&["body", "query", "headers"], diags);
    schema
}

fn parse_type(raw: &str, span: Span, diags: &mut Diagnostics) -> Option<TypeRef> {
    match TypeRef::parse(raw) {
        Ok(t) => Some(t),
        Err(e) => {
            diags.push(
                Diagnostic::new(Code::InvalidType, span, e.message)
                    .label("not a type")
                    .help(e.hint),
            );
            None
        }
    }
}

/// Fields: `name: <type>` (required) or `name: { type, required, description }`.
fn read_fields(node: &Node, what: &str, diags: &mut Diagnostics) -> Vec<FieldSchema> {
    let Some(mut r) = MapReader::new(node, format!("`request.{what}`"), diags) else {
        return vec![];
    };
    let mut out = Vec::new();
    for (k, v) in r.rest() {
        let Some(name) = k.as_str() else { continue };
        let name = Spanned::new(name.to_string(), k.span);
        match &v.value {
            Value::String(s) => {
                if let Some(t) = parse_type(s, v.span, diags) {
                    out.push(FieldSchema {
                        name,
                        type_ref: Spanned::new(t, v.span),
                        required: true,
                        description: None,
                        constraints: Constraints::default(),
                        constraint_spans: ConstraintSpans::default(),
                    });
                }
            }
            Value::Map(_) => {
                let Some(fr) = MapReader::new(v, format!("the field `{}`", name.value), diags) else {
                    continue;
                };
                let FieldParts {
                    type_node,
                    required,
                    description,
                    constraints,
                    constraint_spans,
                } = read_field_parts(
                    fr,
                    false,
                    "a field has a `type`, such as `string` or `object:Order`",
                    true,
                    diags,
                );
                let Some(t) = type_node else { continue };
                let Some(ts) = yaml::expect_str(t, "a type such as `string`", diags) else {
                    continue;
                };
                if let Some(type_ref) = parse_type(ts, t.span, diags) {
                    for p in constraints.problems(&type_ref) {
                        let at = constraint_spans.span(p.key).unwrap_or(t.span);
                        diags.push(
                            Diagnostic::new(Code::InvalidConstraint, at, p.message)
                                .label("cannot hold here")
                                .help(p.hint),
                        );
                    }
                    out.push(FieldSchema {
                        name,
                        type_ref: Spanned::new(type_ref, t.span),
                        required,
                        description,
                        constraints,
                        constraint_spans,
                    });
                }
            }
            _ => diags.push(v.wrong_shape(
                "a type or `{ type, required }`",
                "write `name: string` or `name: { type: string, required: false }`",
            )),
        }
    }
    out
}

fn read_nodes(node: &Node, diags: &mut Diagnostics) -> (Vec<FlowNode>, Vec<BrokenNode>) {
    let Some(mut r) = MapReader::new(node, "`nodes`", diags) else {
        return (vec![], vec![]);
    };
    let mut out = Vec::new();
    let mut broken = Vec::new();
    for (k, v) in r.rest() {
        let Some(id) = k.as_str() else { continue };
        let id = Spanned::new(id.to_string(), k.span);
        let broken_node = |id: Spanned<String>| BrokenNode {
            id,
            type_name: declared_type(v),
        };
        if let Err(e) = svc_types::names::check_flow_node_id(&id.value) {
            diags.push(
                Diagnostic::new(Code::InvalidValue, k.span, e.message)
                    .label("invalid node id")
                    .help(e.hint),
            );
            // Reported once, here: wires to it are not "no node `Origin`" as well.
            broken.push(broken_node(id));
            continue;
        }
        match read_node(id.clone(), v, diags) {
            Some(n) => out.push(n),
            None => broken.push(broken_node(id)),
        }
    }
    (out, broken)
}

/// The node type a node's `type` names, read without reporting anything.
fn declared_type(node: &Node) -> Option<&'static str> {
    let (_, value) = node.as_map()?.iter().find(|(k, _)| k.as_str() == Some("type"))?;
    let written = value.as_str()?;
    node_types().find(|t| *t == written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{parse_window, setting_problem};

    /// Every row of the table of built-in node types is a type the reader reads: a node
    /// with a new node's settings and every output of its row wired reads without a
    /// problem, as the kind whose row it is, with each output where the row says; and
    /// a key the row does not list is refused. (A kind without a row does not compile:
    /// `NodeKind::row`.)
    #[test]
    fn every_row_is_read_as_its_kind() {
        for row in svc_types::builtin_nodes::NODE_TYPES {
            assert_eq!(
                setting_problem(row.type_name, "description", &"a node".into()),
                None,
                "{}",
                row.type_name
            );
            let mut node = row.new_node(Some("project.node")).unwrap();
            for output in row.outputs {
                node.insert(output.pin.into(), format!("after-{}", output.pin).into());
            }
            let text = serde_json::Value::Object(node.clone()).to_string();
            let root = yaml::parse(FileId(0), &text).unwrap();
            let mut diags = Diagnostics::new();
            let read = read_node(Spanned::new("n".into(), root.span), &root, &mut diags).unwrap_or_else(|| {
                panic!(
                    "{}: {:?}",
                    row.type_name,
                    diags.iter().map(|d| &d.message).collect::<Vec<_>>()
                )
            });
            assert!(diags.is_empty(), "{}", row.type_name);
            assert_eq!(read.kind.row(), row);
            let edges: Vec<(&str, Option<String>)> = read
                .kind
                .edges()
                .into_iter()
                .map(|(pin, to)| (pin, to.map(|e| e.value.clone())))
                .collect();
            let expected: Vec<(&str, Option<String>)> = row
                .outputs
                .iter()
                .map(|o| (o.pin, Some(format!("after-{}", o.pin))))
                .collect();
            assert_eq!(edges, expected, "{}", row.type_name);
            assert!(
                setting_problem(row.type_name, "not-a-key", &1.into()).is_some(),
                "{}",
                row.type_name
            );
        }
    }

    fn load_text(text: &str) -> (Option<Flow>, Vec<(Code, u32, String)>) {
        let mut d = Diagnostics::new();
        let f = load(FileId(0), text, &mut d);
        (
            f,
            d.into_iter()
                .map(|d| (d.code, d.primary.span.line, d.message))
                .collect(),
        )
    }

    const FULL: &str = r#"
route: /orders/{id}/
methods: [POST, put]
summary: Update an order
request:
  body: object:Order
  query:
    dry_run: { type: boolean, required: false }
  headers:
    X-Client: string
start: origin
nodes:
  origin:
    type: check-origin
    allowed_origins: [https://app.example.com]
    allowed: limit
    blocked: forbidden
  limit: { type: rate-limit, limit: 100, window: 1m, by: api-key, sequence-ok: auth, sequence-limited: too-many }
  auth: { type: check-api-key, location: "header:X-Custom-Key", valid: price, invalid: unauthorized }
  price:
    type: code
    node: acme.price-order
    inputs:
      order: { from: request.body }
      currency: EUR
      meta: { value: { a: 1 } }
    next: ok
    on_fail: failed
  ok:
    type: return-json
    status: 200
    body: { total: { from: price.total }, id: { from: request.params.id }, tags: [a, { from: auth.user }] }
    headers: { X-Total: { from: price.total } }
  failed: { type: return-json, status: 422, body: { error: { from: price.failure.message } } }
  unauthorized: { type: return-json, status: 401 }
  forbidden: { type: return-json, status: 403 }
  too-many: { type: return-json, status: 429 }
"#;

    #[test]
    fn loads_every_node_type() {
        let (f, d) = load_text(FULL);
        assert_eq!(d, vec![]);
        let f = f.unwrap();
        assert_eq!(f.route.value, "orders/{id}");
        assert_eq!(
            f.methods.iter().map(|m| m.value).collect::<Vec<_>>(),
            [Method::Post, Method::Put]
        );
        assert_eq!(f.request.params[0].value, "id");
        assert_eq!(f.request.headers[0].name.value, "x-client");
        assert_eq!(f.nodes.len(), 9);
        let NodeKind::RateLimit(rl) = &f.node("limit").unwrap().kind else {
            panic!()
        };
        assert_eq!(rl.window.value, 60);
        assert_eq!(rl.by.value, RateKey::ApiKey);
        let NodeKind::CheckApiKey(k) = &f.node("auth").unwrap().kind else {
            panic!()
        };
        assert_eq!(k.location.value, KeyLocation::Header("x-custom-key".into()));
        let NodeKind::Code(c) = &f.node("price").unwrap().kind else {
            panic!()
        };
        assert!(
            matches!(&c.inputs[0].1, Binding::Wire(r) if r.root == RefRoot::Request(RequestPart::Body) && r.path.is_empty())
        );
        assert!(matches!(&c.inputs[1].1, Binding::Literal(_)));
        assert!(matches!(&c.inputs[2].1, Binding::Literal(n) if n.as_map().is_some()));
        let NodeKind::ReturnJson(ok) = &f.node("ok").unwrap().kind else {
            panic!()
        };
        let Some(Template::Object(fields, _)) = &ok.body else {
            panic!()
        };
        assert_eq!(fields.len(), 3);
        assert!(matches!(&fields[2].1, Template::Array(items, _) if items.len() == 2));
    }

    #[test]
    fn windows() {
        assert_eq!(parse_window("30s"), Some(30));
        assert_eq!(parse_window("15m"), Some(900));
        assert_eq!(parse_window("1d"), Some(86_400));
        assert_eq!(parse_window("minute"), Some(60));
        assert_eq!(parse_window("0s"), None);
        assert_eq!(parse_window("5x"), None);
        assert_eq!(parse_window("m"), None);
        assert_eq!(parse_window("99999999999999999999d"), None);
    }

    #[test]
    fn reports_form_problems() {
        let (_, d) = load_text(
            "route: orders//x\nmethods: [FETCH]\nstart: a\nnodes:\n  a: { type: rate-limit, limit: 0, window: 5x, by: ipp }\n  b: { type: check-orign }\n  c: { type: code, node: a.b, inputs: { x: { frm: y } } }\n  d: { type: return-json, status: 302 }\n  e: { type: return-json, status: 200, body: { from: request } }\n",
        );
        let codes: Vec<_> = d.iter().map(|x| (x.0, x.1)).collect();
        for expected in [
            (Code::InvalidRoute, 1),
            (Code::InvalidValue, 2),
            (Code::InvalidValue, 5),
            (Code::InvalidValue, 6),
            (Code::WrongShape, 7),
            (Code::InvalidValue, 8),
            (Code::InvalidReference, 9),
        ] {
            assert!(codes.contains(&expected), "missing {expected:?} in {d:#?}");
        }
    }

    #[test]
    fn windows_longer_than_a_limiter_enforces_are_refused_by_name() {
        let flow = |window: &str| {
            format!(
                "route: /x\nmethods: [GET]\nstart: limit\nnodes:\n  limit: {{ type: rate-limit, limit: 1, window: {window}, by: ip, sequence-ok: ok, sequence-limited: ok }}\n  ok: {{ type: return-json, status: 200 }}\n"
            )
        };
        let (f, d) = load_text(&flow("366d"));
        assert!(d.is_empty() && f.is_some(), "{d:?}");
        for long in ["367d", "10000d", "99999999h"] {
            let (_, d) = load_text(&flow(long));
            assert!(
                d.iter().any(|(code, line, message)| *code == Code::InvalidValue
                    && *line == 5
                    && message.contains("longer than a rate limit window can be")),
                "{long}: {d:?}"
            );
        }
    }
}
