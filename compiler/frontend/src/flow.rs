//! Flow files: one YAML file per route (see `docs/flow-format.md`).
//!
//! This module only reads the file into a spanned syntax tree and reports problems of
//! form (unknown keys, wrong kinds of values, malformed references). Names and types
//! are resolved and checked by the compiler.

use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::{FileId, Span};
use crate::yaml::{self, MapReader, Node, Value};
use svc_syntax::config::{ConstraintSpans, FieldParts, read_field_parts};
use svc_types::Constraints;
use svc_types::TypeRef;

/// A value with the place it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
}

/// HTTP methods a route may accept. `OPTIONS` is answered by Check Origin (CORS
/// preflight) and `HEAD` follows `GET`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub const ALL: [Method; 5] = [Method::Get, Method::Post, Method::Put, Method::Patch, Method::Delete];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// Whether the method changes state (and so should require an API key).
    pub fn is_write(self) -> bool {
        !matches!(self, Method::Get)
    }

    pub fn parse(s: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str().eq_ignore_ascii_case(s))
    }
}

/// A declared request field (body field, query parameter, header).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSchema {
    pub name: Spanned<String>,
    pub type_ref: Spanned<TypeRef>,
    pub required: bool,
    pub description: Option<String>,
    /// What a valid value is, beyond its type; checked at the edge.
    pub constraints: Constraints,
    /// Where each constraint was written.
    pub constraint_spans: ConstraintSpans,
}

/// The request body: one typed value (`body: object:CreateOrder`) or a set of fields.
#[derive(Debug, Clone, PartialEq)]
pub enum BodySchema {
    Typed(Spanned<TypeRef>),
    Fields(Vec<FieldSchema>),
}

/// The Start node's typed request inputs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestSchema {
    pub body: Option<BodySchema>,
    pub query: Vec<FieldSchema>,
    pub headers: Vec<FieldSchema>,
    /// Path parameters, from `{name}` segments of the route (always strings).
    pub params: Vec<Spanned<String>>,
}

impl RequestSchema {
    /// Whether the route declares no request inputs at all (no body, query parameters,
    /// headers or path parameters).
    pub fn is_empty_schema(&self) -> bool {
        self.body.is_none() && self.query.is_empty() && self.headers.is_empty() && self.params.is_empty()
    }
}

/// The part of the request a reference starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestPart {
    Body,
    Query,
    Headers,
    Params,
}

impl RequestPart {
    pub fn as_str(self) -> &'static str {
        match self {
            RequestPart::Body => "body",
            RequestPart::Query => "query",
            RequestPart::Headers => "headers",
            RequestPart::Params => "params",
        }
    }
}

/// What a reference starts from.
#[derive(Debug, Clone, PartialEq)]
pub enum RefRoot {
    Request(RequestPart),
    /// `<node-id>.<output>…`
    Node(Spanned<String>),
}

/// A wire: `request.body.order.lines`, `price.total`, `auth.user`.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub text: String,
    pub span: Span,
    pub root: RefRoot,
    /// The segments after the root (`["order", "lines"]`).
    pub path: Vec<String>,
}

/// A value given to a code node input or used in a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    Wire(Reference),
    Literal(Node),
}

/// A Return JSON body: literal values, wired values, and objects and lists of those.
#[derive(Debug, Clone, PartialEq)]
pub enum Template {
    Literal(Node),
    Wire(Reference),
    Object(Vec<(Spanned<String>, Template)>, Span),
    Array(Vec<Template>, Span),
}

/// A sequence edge to another node.
pub type Edge = Spanned<String>;

/// Where Check API Key reads the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyLocation {
    /// `header-x-api-key`: the `X-API-Key` header.
    HeaderXApiKey,
    /// `authorization-bearer`: `Authorization: Bearer <key>`.
    AuthorizationBearer,
    /// `header:<Name>`: a custom header.
    Header(String),
    /// `query:<name>`: a query parameter (discouraged: URLs end up in logs).
    Query(String),
}

impl KeyLocation {
    pub fn describe(&self) -> String {
        match self {
            KeyLocation::HeaderXApiKey => "header-x-api-key".into(),
            KeyLocation::AuthorizationBearer => "authorization-bearer".into(),
            KeyLocation::Header(h) => format!("header:{h}"),
            KeyLocation::Query(q) => format!("query:{q}"),
        }
    }
}

/// What Rate Limit counts requests by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKey {
    Ip,
    User,
    ApiKey,
}

impl RateKey {
    pub fn as_str(self) -> &'static str {
        match self {
            RateKey::Ip => "ip",
            RateKey::User => "user",
            RateKey::ApiKey => "api-key",
        }
    }
}

/// What Check Origin does with a request that has no `Origin` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingOrigin {
    /// Let it through: it is not a cross-origin browser request (the default).
    Allow,
    /// Treat it as blocked.
    Block,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckOrigin {
    pub allowed_origins: Vec<Spanned<String>>,
    pub missing_origin: MissingOrigin,
    /// Request headers a browser may send (answered to CORS preflights).
    pub allowed_headers: Vec<String>,
    /// Response headers a browser may read, as written; `None` when the node does not
    /// say (lowering then exposes what the flow itself sets: see `lower`).
    pub expose_headers: Option<Vec<String>>,
    pub allow_credentials: bool,
    /// How long a browser may cache a preflight answer, in seconds.
    pub max_age: Option<u64>,
    pub allowed: Option<Edge>,
    pub blocked: Option<Edge>,
}

/// What a Rate Limit node answers when its shared store (Redis) fails: `on_store_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnStoreError {
    /// Let the request through, uncounted.
    Open,
    /// 503 with `Retry-After`.
    Closed,
    /// Count it in this instance's own memory.
    Local,
}

impl OnStoreError {
    pub const ALL: &'static [&'static str] = svc_types::builtin_nodes::ON_STORE_ERROR;

    pub fn as_str(self) -> &'static str {
        match self {
            OnStoreError::Open => "open",
            OnStoreError::Closed => "closed",
            OnStoreError::Local => "local",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RateLimit {
    pub limit: Spanned<u64>,
    /// The window in seconds.
    pub window: Spanned<u64>,
    pub by: Spanned<RateKey>,
    /// Overrides the server's failure policy for this node.
    pub on_store_error: Option<Spanned<OnStoreError>>,
    pub ok: Option<Edge>,
    pub limited: Option<Edge>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckApiKey {
    pub location: Spanned<KeyLocation>,
    pub valid: Option<Edge>,
    pub invalid: Option<Edge>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CodeCall {
    pub node_key: Spanned<String>,
    pub inputs: Vec<(Spanned<String>, Binding)>,
    /// Inputs given but unreadable (already reported); `None` when `inputs` itself was
    /// unreadable. Either way the checker does not report them as missing too.
    pub unreadable_inputs: Option<Vec<String>>,
    pub next: Option<Edge>,
    pub on_fail: Option<Edge>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReturnJson {
    pub status: Spanned<u16>,
    pub body: Option<Template>,
    pub headers: Vec<(Spanned<String>, Binding)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    CheckOrigin(CheckOrigin),
    RateLimit(RateLimit),
    CheckApiKey(CheckApiKey),
    Code(CodeCall),
    ReturnJson(ReturnJson),
}

impl NodeKind {
    /// The row of this node's type in the table of built-in node types, from which its
    /// name, keys and outputs come. A new kind without a row does not compile.
    pub fn row(&self) -> &'static svc_types::builtin_nodes::NodeType {
        use svc_types::builtin_nodes as rows;
        match self {
            NodeKind::CheckOrigin(_) => &rows::CHECK_ORIGIN,
            NodeKind::RateLimit(_) => &rows::RATE_LIMIT,
            NodeKind::CheckApiKey(_) => &rows::CHECK_API_KEY,
            NodeKind::Code(_) => &rows::CODE,
            NodeKind::ReturnJson(_) => &rows::RETURN_JSON,
        }
    }

    pub fn type_name(&self) -> &'static str {
        self.row().type_name
    }

    /// The sequence outputs of this node: (pin name, target if wired), in its row's order.
    pub fn edges(&self) -> Vec<(&'static str, Option<&Edge>)> {
        let targets = match self {
            NodeKind::CheckOrigin(n) => vec![n.allowed.as_ref(), n.blocked.as_ref()],
            NodeKind::RateLimit(n) => vec![n.ok.as_ref(), n.limited.as_ref()],
            NodeKind::CheckApiKey(n) => vec![n.valid.as_ref(), n.invalid.as_ref()],
            NodeKind::Code(n) => vec![n.next.as_ref(), n.on_fail.as_ref()],
            NodeKind::ReturnJson(_) => vec![],
        };
        let outputs = self.row().outputs;
        debug_assert_eq!(outputs.len(), targets.len(), "{}", self.type_name());
        outputs.iter().map(|o| o.pin).zip(targets).collect()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct FlowNode {
    pub id: Spanned<String>,
    pub kind: NodeKind,
    pub description: Option<String>,
}

/// One route.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    pub file: FileId,
    pub route: Spanned<String>,
    pub methods: Vec<Spanned<Method>>,
    pub summary: Option<String>,
    pub request: RequestSchema,
    pub start: Spanned<String>,
    pub nodes: Vec<FlowNode>,
    /// Nodes that were declared but could not be read (already reported): edges to them
    /// are not reported again as unknown, and the Builder still draws them.
    pub broken: Vec<BrokenNode>,
}

/// A node of a flow file that could not be read; its problem is reported where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokenNode {
    pub id: Spanned<String>,
    /// Its `type`, when that names a node type.
    pub type_name: Option<&'static str>,
}

impl Flow {
    pub fn node(&self, id: &str) -> Option<&FlowNode> {
        self.nodes.iter().find(|n| n.id.value == id)
    }

    /// Whether `id` names a node that could not be read.
    pub fn is_broken(&self, id: &str) -> bool {
        self.broken.iter().any(|b| b.id.value == id)
    }
}

const TOP_KEYS: &[&str] = &["$schema", "route", "methods", "summary", "request", "start", "nodes"];
/// Node types, for hints.
/// The built-in node types' names, from their table (`svc_types::builtin_nodes`).
pub fn node_types() -> impl Iterator<Item = &'static str> {
    svc_types::builtin_nodes::NODE_TYPES.iter().map(|t| t.type_name)
}

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

fn edge(r: &mut MapReader, key: &str, diags: &mut Diagnostics) -> Option<Edge> {
    let n = r.get(key)?;
    if n.is_null() {
        return None;
    }
    yaml::expect_str(n, &format!("`{key}` names the node that runs next"), diags)
        .map(|s| Spanned::new(s.to_string(), n.span))
}

/// What reading a flow says of `value` as setting `key` of a `type_name` node, the other
/// settings being a new node's: `(message, hint)`, or `None` when it reads. The Builder's
/// inspector asks this as the user types, so that its forms accept exactly what
/// `svc check` accepts (`window: minute` among them).
pub fn setting_problem(type_name: &str, key: &str, value: &serde_json::Value) -> Option<(String, String)> {
    let row = svc_types::builtin_nodes::node_type(type_name)?;
    let mut node = serde_json::Map::new();
    node.insert("type".into(), row.type_name.into());
    if row.default_id.is_none() {
        node.insert("node".into(), "project.node".into());
    }
    for setting in row.settings {
        if let Some(new_value) = setting.new_value.and_then(|v| serde_json::from_str(v).ok()) {
            node.insert(setting.key.into(), new_value);
        }
    }
    node.insert(key.into(), value.clone());
    // JSON is YAML: the node as a flow would hold it.
    let text = serde_json::Value::Object(node).to_string();
    let mut diags = Diagnostics::new();
    let root = yaml::parse(crate::FileId(0), &text).ok()?;
    let id = Spanned::new("node".to_string(), root.span);
    if read_node(id, &root, &mut diags).is_some() && diags.is_empty() {
        return None;
    }
    diags
        .iter()
        .next()
        .map(|d| (d.message.clone(), d.help.clone()))
        .or_else(|| Some((format!("`{key}` cannot be read"), String::new())))
}

/// The keys a node of `type_name` takes: its row's ([`svc_types::builtin_nodes`]).
fn node_keys(type_name: &str) -> Option<Vec<&'static str>> {
    svc_types::builtin_nodes::node_type(type_name).map(|t| t.keys())
}

/// Reports each key of `node` that is not in `known` but close to a known key the node
/// lacks (`windows` for `window`); returns whether there was one. Other unknown keys are
/// reported by `MapReader::finish` once the node is read.
fn misspelled_keys(node: &Node, known: &[&str], what: &str, diags: &mut Diagnostics) -> bool {
    let Value::Map(entries) = &node.value else {
        return false;
    };
    let present: Vec<&str> = entries.iter().filter_map(|(k, _)| k.as_str()).collect();
    let mut found = false;
    for (k, _) in entries {
        let Some(name) = k.as_str() else { continue };
        if known.contains(&name) {
            continue;
        }
        let Some(best) = svc_types::assets::closest(name, known.iter().copied()) else {
            continue;
        };
        if present.contains(&best) {
            continue;
        }
        diags.push(
            Diagnostic::new(Code::UnknownField, k.span, format!("unknown key `{name}` in {what}"))
                .label("not recognized")
                .help(format!("did you mean `{best}`?")),
        );
        found = true;
    }
    found
}

fn read_node(id: Spanned<String>, node: &Node, diags: &mut Diagnostics) -> Option<FlowNode> {
    let what = format!("node `{}`", id.value);
    let mut r = MapReader::new(node, what.clone(), diags)?;
    let type_node = r.required(
        "type",
        &format!(
            "every node has a `type`: one of {}",
            node_types().collect::<Vec<_>>().join(", ")
        ),
        diags,
    )?;
    let type_name = yaml::expect_str(type_node, "the node type", diags)?;
    let description = r
        .get("description")
        .and_then(|n| yaml::expect_str(n, "text", diags))
        .map(str::to_string);
    // A misspelled key (`windows:`, `allowed_origin:`) is the cause of the "missing key"
    // error that reading would give: report it, with the key meant, and only it.
    let known = node_keys(type_name);
    if let Some(known) = &known
        && misspelled_keys(node, known, &what, diags)
    {
        return None;
    }
    let kind = match type_name {
        "check-origin" => NodeKind::CheckOrigin(read_check_origin(&mut r, diags)?),
        "rate-limit" => NodeKind::RateLimit(read_rate_limit(&mut r, diags)?),
        "check-api-key" => NodeKind::CheckApiKey(read_check_api_key(&mut r, diags)?),
        "code" => NodeKind::Code(read_code(&mut r, diags)?),
        "return-json" => NodeKind::ReturnJson(read_return_json(&mut r, diags)?),
        other => {
            let hint = match svc_types::assets::closest(other, node_types()) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!("node types are: {}", node_types().collect::<Vec<_>>().join(", ")),
            };
            diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    type_node.span,
                    format!("unknown node type `{other}`"),
                )
                .label("unknown type")
                .help(hint),
            );
            return None;
        }
    };
    r.finish(known.as_deref().unwrap_or_default(), diags);
    Some(FlowNode { id, kind, description })
}

fn read_check_origin(r: &mut MapReader, diags: &mut Diagnostics) -> Option<CheckOrigin> {
    let help = "list the web origins allowed to call this route, for example `allowed_origins: [https://app.example.com, \"https://*.example.com\"]`";
    let origins_node = r.required("allowed_origins", help, diags)?;
    let origins = yaml::expect_str_list(origins_node, help, diags)?
        .into_iter()
        .map(|(s, span)| Spanned::new(s.to_string(), span))
        .collect::<Vec<_>>();
    if origins.is_empty() {
        diags.push(
            Diagnostic::new(Code::InvalidValue, origins_node.span, "no origin is allowed")
                .label("empty list")
                .help(help),
        );
    }
    let missing_origin = match r.get("missing_origin") {
        None => MissingOrigin::Allow,
        Some(n) => match yaml::expect_str(n, "`missing_origin` is `allow` or `block`", diags) {
            Some("allow") => MissingOrigin::Allow,
            Some("block") => MissingOrigin::Block,
            Some(other) => {
                diags.push(Diagnostic::new(Code::InvalidValue, n.span, format!("`{other}` is not a missing-origin policy")).label("unknown policy").help("`missing_origin` is `allow` (the default: requests without an Origin header are not cross-origin browser requests) or `block`"));
                MissingOrigin::Allow
            }
            None => MissingOrigin::Allow,
        },
    };
    let list = |r: &mut MapReader, key: &str, diags: &mut Diagnostics| -> Vec<String> {
        r.get(key)
            .and_then(|n| yaml::expect_str_list(n, &format!("`{key}` is a list of header names"), diags))
            .map(|v| v.into_iter().map(|(s, _)| s.to_ascii_lowercase()).collect())
            .unwrap_or_default()
    };
    let allowed_headers = list(r, "allowed_headers", diags);
    let expose_headers = r.get("expose_headers").map(|n| {
        yaml::expect_str_list(n, "`expose_headers` is a list of header names", diags)
            .map(|v| v.into_iter().map(|(s, _)| s.to_ascii_lowercase()).collect())
            .unwrap_or_default()
    });
    let allow_credentials = r
        .get("allow_credentials")
        .and_then(|n| yaml::expect_bool(n, "`allow_credentials` is `true` or `false`", diags))
        .unwrap_or(false);
    let max_age = r
        .get("max_age")
        .and_then(|n| yaml::expect_u64(n, "`max_age` is a number of seconds", diags));
    Some(CheckOrigin {
        allowed_origins: origins,
        missing_origin,
        allowed_headers,
        expose_headers,
        allow_credentials,
        max_age,
        allowed: edge(r, "allowed", diags),
        blocked: edge(r, "blocked", diags),
    })
}

/// The longest Rate Limit window: longer ones would not be refused silently at run time
/// (the limiter's clock arithmetic saturates, which let everything through), but here.
pub const MAX_WINDOW_SECS: u64 = 366 * 86_400;

/// `30s`, `1m`, `15m`, `1h`, `1d`, or `second` / `minute` / `hour` / `day`.
pub fn parse_window(s: &str) -> Option<u64> {
    let s = s.trim();
    match s {
        "second" => return Some(1),
        "minute" => return Some(60),
        "hour" => return Some(3600),
        "day" => return Some(86_400),
        _ => {}
    }
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().ok()?;
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    let secs = n.checked_mul(scale)?;
    (secs > 0).then_some(secs)
}

fn read_rate_limit(r: &mut MapReader, diags: &mut Diagnostics) -> Option<RateLimit> {
    let limit_node = r.required(
        "limit",
        "set how many requests are allowed per window: `limit: 100`",
        diags,
    );
    let limit = limit_node
        .and_then(|n| yaml::expect_u64(n, "`limit` is a number of requests", diags).map(|v| Spanned::new(v, n.span)));
    if let Some(l) = &limit
        && (l.value == 0 || l.value > 1_000_000_000)
    {
        diags.push(
            Diagnostic::new(
                Code::InvalidValue,
                l.span,
                format!("a limit of {} requests per window is out of range", l.value),
            )
            .label("out of range")
            .help("the limit is between 1 and 1,000,000,000 requests per window"),
        );
    }
    let window_help = "the window is a duration such as `30s`, `1m`, `1h` or `1d` (seconds to days)";
    let window_node = r.required("window", window_help, diags);
    let window = window_node.and_then(|n| {
        let s = match &n.value {
            Value::String(s) => s.clone(),
            _ => {
                diags.push(n.wrong_shape("a duration", window_help));
                return None;
            }
        };
        match parse_window(&s) {
            Some(secs) if secs <= MAX_WINDOW_SECS => Some(Spanned::new(secs, n.span)),
            Some(_) => {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        n.span,
                        format!("`{s}` is longer than a rate limit window can be"),
                    )
                    .label("window too long")
                    .help("the longest window is `366d`: a limit over a longer time cannot be enforced exactly"),
                );
                None
            }
            None => {
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, format!("`{s}` is not a rate limit window"))
                        .label("invalid window")
                        .help(window_help),
                );
                None
            }
        }
    });
    let by_node = r.required(
        "by",
        "choose what to count requests by: `by: ip`, `by: user` or `by: api-key`",
        diags,
    );
    let by = by_node.and_then(|n| {
        let s = yaml::expect_str(n, "`by` is `ip`, `user` or `api-key`", diags)?;
        let key = match s {
            "ip" => RateKey::Ip,
            "user" => RateKey::User,
            "api-key" => RateKey::ApiKey,
            other => {
                let hint = match svc_types::assets::closest(other, ["ip", "user", "api-key"]) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => "`by` is `ip`, `user` or `api-key`".to_string(),
                };
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, format!("cannot rate limit by `{other}`"))
                        .label("unknown dimension")
                        .help(hint),
                );
                return None;
            }
        };
        Some(Spanned::new(key, n.span))
    });
    let on_store_error = r.get("on_store_error").and_then(|n| {
        let help =
            "`on_store_error` is `local` (count in this instance), `open` (let through) or `closed` (answer 503)";
        let s = yaml::expect_str(n, help, diags)?;
        let policy = match s {
            "open" => OnStoreError::Open,
            "closed" => OnStoreError::Closed,
            "local" => OnStoreError::Local,
            other => {
                let hint = match svc_types::assets::closest(other, OnStoreError::ALL.iter().copied()) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => help.to_string(),
                };
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, format!("`{other}` is not a failure policy"))
                        .label("unknown policy")
                        .help(hint),
                );
                return None;
            }
        };
        Some(Spanned::new(policy, n.span))
    });
    let ok = edge(r, "sequence-ok", diags);
    let limited = edge(r, "sequence-limited", diags);
    Some(RateLimit {
        limit: limit?,
        window: window?,
        by: by?,
        on_store_error,
        ok,
        limited,
    })
}

fn read_check_api_key(r: &mut MapReader, diags: &mut Diagnostics) -> Option<CheckApiKey> {
    let help = "`location` is `header-x-api-key`, `authorization-bearer`, `header:<Name>` or `query:<name>`";
    let location = match r.get("location") {
        // The spec's named example is the default.
        None => Spanned::new(KeyLocation::HeaderXApiKey, r.span()),
        Some(n) => {
            let s = yaml::expect_str(n, help, diags)?;
            let loc = match s {
                "header-x-api-key" => KeyLocation::HeaderXApiKey,
                "authorization-bearer" | "bearer" => KeyLocation::AuthorizationBearer,
                _ if s.starts_with("header:") && is_header_name(&s[7..]) => {
                    KeyLocation::Header(s[7..].to_ascii_lowercase())
                }
                _ if s.starts_with("query:") && is_query_name(&s[6..]) => KeyLocation::Query(s[6..].to_string()),
                other => {
                    diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            n.span,
                            format!("`{other}` is not an API key location"),
                        )
                        .label("unknown location")
                        .help(help),
                    );
                    return None;
                }
            };
            Spanned::new(loc, n.span)
        }
    };
    Some(CheckApiKey {
        location,
        valid: edge(r, "valid", diags),
        invalid: edge(r, "invalid", diags),
    })
}

fn is_header_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn is_query_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

fn read_code(r: &mut MapReader, diags: &mut Diagnostics) -> Option<CodeCall> {
    let key_node = r.required(
        "node",
        "a code node names the node it runs by key: `node: acme.price-order`",
        diags,
    )?;
    let key = yaml::expect_str(key_node, "the node key", diags)?;
    let mut inputs = Vec::new();
    let mut unreadable = Some(Vec::new());
    if let Some(inputs_node) = r.get("inputs") {
        match MapReader::new(inputs_node, "`inputs`", diags) {
            Some(mut ir) => {
                for (k, v) in ir.rest() {
                    let Some(pin) = k.as_str() else { continue };
                    match read_binding(v, diags) {
                        Some(b) => inputs.push((Spanned::new(pin.to_string(), k.span), b)),
                        None => unreadable.get_or_insert_with(Vec::new).push(pin.to_string()),
                    }
                }
            }
            None => unreadable = None,
        }
    }
    Some(CodeCall {
        node_key: Spanned::new(key.to_string(), key_node.span),
        inputs,
        unreadable_inputs: unreadable,
        next: edge(r, "next", diags),
        on_fail: edge(r, "on_fail", diags),
    })
}

/// `{ from: <reference> }`, `{ value: <literal> }`, or a bare scalar or list literal.
pub fn read_binding(node: &Node, diags: &mut Diagnostics) -> Option<Binding> {
    match &node.value {
        Value::Map(entries) => {
            let keys: Vec<&str> = entries.iter().filter_map(|(k, _)| k.as_str()).collect();
            match keys.as_slice() {
                ["from"] => read_reference(&entries[0].1, diags).map(Binding::Wire),
                ["value"] => Some(Binding::Literal(entries[0].1.clone())),
                _ => {
                    diags.push(node.wrong_shape(
                        "`{ from: … }` or `{ value: … }`",
                        "wire a value with `{ from: request.body.order }` or `{ from: node-id.output }`; write an object literal as `{ value: { … } }`",
                    ));
                    None
                }
            }
        }
        _ => Some(Binding::Literal(node.clone())),
    }
}

/// `request.<body|query|headers|params>[.<field>…]` or `<node-id>.<output>[.<field>…]`.
pub fn read_reference(node: &Node, diags: &mut Diagnostics) -> Option<Reference> {
    let help = "a reference is `request.body.<field>`, `request.query.<name>`, `request.headers.<name>`, `request.params.<name>`, or `<node-id>.<output>`, with `.<field>` to go into structures";
    let text = yaml::expect_str(node, help, diags)?;
    let invalid = |msg: String, diags: &mut Diagnostics| {
        diags.push(
            Diagnostic::new(Code::InvalidReference, node.span, msg)
                .label("invalid reference")
                .help(help),
        );
        None
    };
    let parts: Vec<&str> = text.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return invalid(format!("`{text}` has an empty segment"), diags);
    }
    let (root, rest) = match parts.as_slice() {
        ["request"] => {
            return invalid(
                "`request` alone is not a value; pick a part such as `request.body`".into(),
                diags,
            );
        }
        ["request", part, rest @ ..] => {
            let part = match *part {
                "body" => RequestPart::Body,
                "query" => RequestPart::Query,
                "headers" => RequestPart::Headers,
                "params" => RequestPart::Params,
                other => return invalid(format!("the request has no part `{other}`"), diags),
            };
            if part != RequestPart::Body && rest.is_empty() {
                return invalid(
                    format!(
                        "`request.{}` needs a name: `request.{}.<name>`",
                        part.as_str(),
                        part.as_str()
                    ),
                    diags,
                );
            }
            (RefRoot::Request(part), rest.to_vec())
        }
        [_only] => {
            return invalid(
                format!("`{text}` names a node but not one of its outputs: write `{text}.<output>`"),
                diags,
            );
        }
        [node_id, rest @ ..] => (
            RefRoot::Node(Spanned::new(node_id.to_string(), node.span)),
            rest.to_vec(),
        ),
        [] => return invalid("the reference is empty".into(), diags),
    };
    Some(Reference {
        text: text.to_string(),
        span: node.span,
        root,
        path: rest.into_iter().map(str::to_string).collect(),
    })
}

fn read_return_json(r: &mut MapReader, diags: &mut Diagnostics) -> Option<ReturnJson> {
    let status_node = r.required(
        "status",
        "a Return JSON node sets the HTTP status: `status: 200`",
        diags,
    )?;
    let status = yaml::expect_u64(
        status_node,
        "the status is an HTTP status code such as 200, 401 or 429",
        diags,
    )?;
    if !(200..=599).contains(&status) || (300..400).contains(&status) && status != 304 {
        diags.push(
            Diagnostic::new(
                Code::InvalidValue,
                status_node.span,
                format!("{status} is not a status a JSON response can have"),
            )
            .label("invalid status")
            .help("use a 2xx, 4xx or 5xx status (redirects are not JSON responses)"),
        );
        return None;
    }
    let body = r.get("body").and_then(|n| read_template(n, diags));
    let mut headers = Vec::new();
    if let Some(h) = r.get("headers")
        && let Some(mut hr) = MapReader::new(h, "`headers`", diags)
    {
        for (k, v) in hr.rest() {
            let Some(name) = k.as_str() else { continue };
            if !is_header_name(name) {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        k.span,
                        format!("`{name}` is not a valid header name"),
                    )
                    .label("invalid header")
                    .help("header names use letters, digits and `-`"),
                );
                continue;
            }
            if let Some(b) = read_binding(v, diags) {
                headers.push((Spanned::new(name.to_ascii_lowercase(), k.span), b));
            }
        }
    }
    Some(ReturnJson {
        status: Spanned::new(status as u16, status_node.span),
        body,
        headers,
    })
}

/// A body template. A mapping that is exactly `{ from: … }` is a wire and exactly
/// `{ value: … }` a literal; any other mapping is an object whose values are templates.
pub fn read_template(node: &Node, diags: &mut Diagnostics) -> Option<Template> {
    match &node.value {
        Value::Map(entries) => {
            let keys: Vec<&str> = entries.iter().filter_map(|(k, _)| k.as_str()).collect();
            match keys.as_slice() {
                ["from"] => read_reference(&entries[0].1, diags).map(Template::Wire),
                ["value"] => Some(Template::Literal(entries[0].1.clone())),
                _ => {
                    let mut fields = Vec::new();
                    for (k, v) in entries {
                        let Some(name) = k.as_str() else {
                            diags.push(k.wrong_shape("a string key", "JSON object keys are strings"));
                            continue;
                        };
                        if let Some(t) = read_template(v, diags) {
                            fields.push((Spanned::new(name.to_string(), k.span), t));
                        }
                    }
                    Some(Template::Object(fields, node.span))
                }
            }
        }
        Value::Seq(items) => Some(Template::Array(
            items.iter().filter_map(|i| read_template(i, diags)).collect(),
            node.span,
        )),
        _ => Some(Template::Literal(node.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let mut node = serde_json::Map::new();
            node.insert("type".into(), row.type_name.into());
            if row.default_id.is_none() {
                node.insert("node".into(), "project.node".into());
            }
            for setting in row.settings {
                if let Some(v) = setting.new_value {
                    node.insert(setting.key.into(), serde_json::from_str(v).unwrap());
                }
            }
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
