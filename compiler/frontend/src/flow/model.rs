//! The model a flow file is read into: a spanned syntax tree of the route, its request
//! and its nodes.

use crate::source::{FileId, Span};
use crate::yaml::Node;
use svc_syntax::config::ConstraintSpans;
use svc_types::Constraints;
use svc_types::TypeRef;

/// The built-in node types' names, from their table (`svc_types::builtin_nodes`).
pub fn node_types() -> impl Iterator<Item = &'static str> {
    svc_types::builtin_nodes::NODE_TYPES.iter().map(|t| t.type_name)
}
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
    /// `cookie:<name>`: a cookie (Check JWT only).
    Cookie(String),
}

impl KeyLocation {
    pub fn describe(&self) -> String {
        match self {
            KeyLocation::HeaderXApiKey => "header-x-api-key".into(),
            KeyLocation::AuthorizationBearer => "authorization-bearer".into(),
            KeyLocation::Header(h) => format!("header:{h}"),
            KeyLocation::Query(q) => format!("query:{q}"),
            KeyLocation::Cookie(c) => format!("cookie:{c}"),
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

/// A Check Signature node: a webhook's signature over its exact bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckSignature {
    /// Whose signatures (`github`, `stripe`, …; `svc_types::builtin_nodes::SIGNATURE_PRESETS`).
    pub preset: Spanned<String>,
    /// The names of the secrets a signature may be made with (declared in the config).
    pub secrets: Vec<Spanned<String>>,
    /// How old a signed timestamp may be, in seconds.
    pub tolerance: u64,
    pub valid: Option<Edge>,
    pub invalid: Option<Edge>,
}

/// Where Check JWT's verification keys come from.
#[derive(Debug, Clone, PartialEq)]
pub enum JwtKeys {
    /// The issuer's OpenID Connect discovery document (the default): its URL.
    Discovery(String),
    /// `jwks_url`: a JWK set the provider publishes.
    JwksUrl(Spanned<String>),
    /// `jwks`: a JWK set written in the flow, as JSON text.
    Inline(String),
    /// `secret`: the declared secret HMAC tokens are signed with.
    Secret(Spanned<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckJwt {
    pub location: Spanned<KeyLocation>,
    pub issuer: Spanned<String>,
    pub audiences: Vec<Spanned<String>>,
    pub keys: JwtKeys,
    /// The JOSE algorithms accepted (the default list when the node names none).
    pub algorithms: Vec<Spanned<String>>,
    /// Clock skew allowed on `exp` and `nbf`, in seconds.
    pub leeway: u64,
    pub required_scopes: Vec<String>,
    pub required_claims: Vec<String>,
    /// The structure `<id>.claims` is read as.
    pub claims: Option<Spanned<String>>,
    pub valid: Option<Edge>,
    pub invalid: Option<Edge>,
    /// A valid token without a required scope (RFC 6750's 403); `invalid` when not set.
    pub forbidden: Option<Edge>,
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
    /// Boxed: its settings are many times the size of the other kinds'.
    CheckJwt(Box<CheckJwt>),
    CheckSignature(CheckSignature),
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
            NodeKind::CheckJwt(_) => &rows::CHECK_JWT,
            NodeKind::CheckSignature(_) => &rows::CHECK_SIGNATURE,
            NodeKind::Code(_) => &rows::CODE,
            NodeKind::ReturnJson(_) => &rows::RETURN_JSON,
        }
    }

    pub fn type_name(&self) -> &'static str {
        self.row().type_name
    }

    /// The values this node gives the nodes after it, with their types: its row's data
    /// outputs, text each (Check API Key's `user`), and Check JWT's `claims` when the
    /// node names their structure. A code node's come from its definition, not from here.
    pub fn data_outputs(&self) -> Vec<(&'static str, TypeRef)> {
        let mut outputs: Vec<_> = self.row().data_outputs.iter().map(|o| (*o, TypeRef::String)).collect();
        if let NodeKind::CheckJwt(n) = self
            && let Some(claims) = &n.claims
        {
            outputs.push(("claims", TypeRef::Structure(claims.value.clone())));
        }
        outputs
    }

    /// Where this node reads a credential from the request (an API key, a token): the
    /// place traces never show and the API description names as a security scheme.
    pub fn credential(&self) -> Option<&KeyLocation> {
        match self {
            NodeKind::CheckApiKey(n) => Some(&n.location.value),
            NodeKind::CheckJwt(n) => Some(&n.location.value),
            NodeKind::CheckOrigin(_)
            | NodeKind::RateLimit(_)
            | NodeKind::CheckSignature(_)
            | NodeKind::Code(_)
            | NodeKind::ReturnJson(_) => None,
        }
    }

    /// The secrets the node itself reads (Check JWT's `secret`, Check Signature's
    /// `secrets`): declared secrets a flow reads are not unused.
    pub fn secrets(&self) -> Vec<&Spanned<String>> {
        match self {
            NodeKind::CheckJwt(n) => match &n.keys {
                JwtKeys::Secret(name) => vec![name],
                _ => Vec::new(),
            },
            NodeKind::CheckSignature(n) => n.secrets.iter().collect(),
            NodeKind::CheckOrigin(_)
            | NodeKind::RateLimit(_)
            | NodeKind::CheckApiKey(_)
            | NodeKind::Code(_)
            | NodeKind::ReturnJson(_) => Vec::new(),
        }
    }

    /// What the node is set to, in a few words (`100 per 60s by ip`): the line under its
    /// type in a drawing of the flow.
    pub fn summary(&self) -> String {
        match self {
            NodeKind::CheckOrigin(n) => format!("{} origins", n.allowed_origins.len()),
            NodeKind::RateLimit(n) => format!("{} per {}s by {}", n.limit.value, n.window.value, n.by.value.as_str()),
            NodeKind::CheckApiKey(n) => n.location.value.describe(),
            NodeKind::CheckJwt(n) => n.issuer.value.clone(),
            NodeKind::CheckSignature(n) => n.preset.value.clone(),
            NodeKind::Code(n) => n.node_key.value.clone(),
            NodeKind::ReturnJson(n) => n.status.value.to_string(),
        }
    }

    /// The sequence outputs of this node: (pin name, target if wired), in its row's order.
    pub fn edges(&self) -> Vec<(&'static str, Option<&Edge>)> {
        let targets = match self {
            NodeKind::CheckOrigin(n) => vec![n.allowed.as_ref(), n.blocked.as_ref()],
            NodeKind::RateLimit(n) => vec![n.ok.as_ref(), n.limited.as_ref()],
            NodeKind::CheckApiKey(n) => vec![n.valid.as_ref(), n.invalid.as_ref()],
            NodeKind::CheckJwt(n) => vec![n.valid.as_ref(), n.invalid.as_ref(), n.forbidden.as_ref()],
            NodeKind::CheckSignature(n) => vec![n.valid.as_ref(), n.invalid.as_ref()],
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
