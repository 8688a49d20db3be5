//! The IR `emit` prints: the project, each route as a tree of nodes, each wire as a
//! value with its path of fields.

use std::collections::{BTreeMap, BTreeSet};
use svc_frontend::flow::{KeyLocation, Method};
use svc_frontend::node_crate::NodeCode;
use svc_frontend_ts::native::{NotNative, Source};
use svc_types::{Assets, NodeManifest, TypeRef};

/// The whole project, ready to emit.
pub struct ProjectIr {
    pub name: String,
    pub version: String,
    pub workspace_id: String,
    pub api_id: String,
    pub node_crate: Option<NodeCrateIr>,
    pub assets: Assets,
    /// The structures whose values carry field constraints to check (directly or in a
    /// nested structure): `src/validate.rs` has a function for each.
    pub validated: BTreeSet<String>,
    /// Whether the asset types come from the node crate (`include_assets!`) rather than
    /// being generated in the server crate.
    pub assets_from_nodes: bool,
    pub secrets: Vec<(String, bool)>,
    /// Sorted by path, then method.
    pub routes: Vec<RouteIr>,
    /// Code nodes used by some route, by key.
    pub nodes: Vec<UsedNode>,
    /// The project's TypeScript, compiled: present when a route uses a TypeScript node.
    pub scripts: Option<crate::check::scripts::CompiledScripts>,
    /// Each TypeScript node's `run` compiled to Rust, by node key, or why it is not;
    /// empty with [`TypeScriptNodes::Engine`].
    pub native: BTreeMap<String, Result<proc_macro2::TokenStream, NotNative>>,
}

/// How the TypeScript nodes of a generated server run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeScriptNodes {
    /// Compiled to Rust where they can be, the engine for the rest (`svc emit`, `svc build`).
    Compiled,
    /// All in the engine, so that a TypeScript change needs no Rust rebuild (`svc dev`,
    /// `svc run`), or when `SVC_TYPESCRIPT=engine` asks for it.
    Engine,
}

impl ProjectIr {
    /// Compiles the `run` of each TypeScript node a route calls to Rust, where it can be
    /// (`svc-frontend-ts`'s `native`, every module parsed once).
    pub(super) fn compile_typescript(&mut self, project: &crate::project::Project) {
        let Some(scripts) = project.script_nodes.as_ref().filter(|_| self.scripts.is_some()) else {
            return;
        };
        let sources: Vec<Source> = scripts
            .modules
            .iter()
            .map(|m| Source {
                name: &m.name,
                file: m.file,
                text: &project.sources.get(m.file).text,
                imports: &m.imports,
            })
            .collect();
        let (keys, nodes): (Vec<String>, Vec<(&str, &NodeManifest)>) = self
            .nodes
            .iter()
            .filter_map(|n| match &n.code {
                NodeCode::TypeScript { module } => Some((n.key.clone(), (module.as_str(), &n.manifest))),
                NodeCode::Rust { .. } => None,
            })
            .unzip();
        let translated = svc_frontend_ts::native::translate(&sources, &self.assets, &nodes);
        self.native = keys.into_iter().zip(translated).collect();
    }
}

pub struct NodeCrateIr {
    pub package: String,
    pub crate_name: String,
    pub dir: std::path::PathBuf,
}

pub struct UsedNode {
    pub key: String,
    /// Where its code is: a Rust module path, or a TypeScript module.
    pub code: svc_frontend::node_crate::NodeCode,
    pub manifest: NodeManifest,
}

pub struct RouteIr {
    /// The Rust module name (from the flow file's name).
    pub module: String,
    /// The flow file, relative to the project.
    pub file: String,
    pub route: String,
    pub axum_path: String,
    pub methods: Vec<Method>,
    pub summary: Option<String>,
    pub chain: String,
    pub request: RequestIr,
    pub origins: Vec<OriginIr>,
    pub limiters: Vec<LimiterIr>,
    pub key_locations: Vec<(String, KeyLocation)>,
    /// The route's Check JWT nodes, each verifier built once at start-up.
    pub tokens: Vec<TokenCheckIr>,
    /// The route's Check Signature nodes, each built once at start-up.
    pub signatures: Vec<SignatureCheckIr>,
    /// The Check Origin node whose policy answers CORS preflights, if any.
    pub preflight: Option<String>,
    pub entry: NodeIr,
    pub blocks: Vec<BlockIr>,
}

impl RouteIr {
    /// Calls `f` on every node of the route: the entry's tree, then each block's.
    pub fn for_each_node(&self, f: &mut dyn FnMut(&NodeIr)) {
        walk(&self.entry, f);
        for b in &self.blocks {
            walk(&b.body, f);
        }
    }
}

fn walk(n: &NodeIr, f: &mut dyn FnMut(&NodeIr)) {
    f(n);
    let mut go = |c: &Cont| {
        if let Cont::Inline(inner) = c {
            walk(inner, f);
        }
    };
    match n {
        NodeIr::CheckOrigin { allowed, blocked, .. } => {
            go(allowed);
            go(blocked);
        }
        NodeIr::RateLimit { ok, limited, .. } => {
            go(ok);
            go(limited);
        }
        NodeIr::CheckApiKey { valid, invalid, .. } | NodeIr::CheckSignature { valid, invalid, .. } => {
            go(valid);
            go(invalid);
        }
        NodeIr::CheckJwt {
            valid,
            invalid,
            forbidden,
            ..
        } => {
            go(valid);
            go(invalid);
            if let Some(f) = forbidden {
                go(f);
            }
        }
        NodeIr::Code { next, on_fail, .. } => {
            go(next);
            if let Some((c, _)) = on_fail {
                go(c);
            }
        }
        NodeIr::Return { .. } => {}
    }
}

/// The route's typed request inputs.
#[derive(Default)]
pub struct RequestIr {
    pub body: Option<BodyIr>,
    pub query: Vec<ParamIr>,
    pub headers: Vec<ParamIr>,
    pub params: Vec<String>,
}

impl RequestIr {
    pub fn is_empty(&self) -> bool {
        self.body.is_none() && self.query.is_empty() && self.headers.is_empty() && self.params.is_empty()
    }
}

pub enum BodyIr {
    Typed(TypeRef),
    /// A body given as fields: a struct is generated for it.
    Fields(Vec<ParamIr>),
}

pub struct ParamIr {
    pub name: String,
    pub ty: TypeRef,
    pub required: bool,
    /// Checked at the edge, with the structure constraints of `ty`.
    pub constraints: svc_types::Constraints,
}

/// A pin of a code node whose value is checked against field constraints: an output
/// after the node runs (its pin's constraints, and those of the structures in its type),
/// or a wired input before (its pin's, when the wire's source does not guarantee them).
pub struct CheckedPin {
    pub pin: String,
    pub ty: TypeRef,
    /// `Option<T>` in the node's `Inputs` or `Outputs`.
    pub optional: bool,
    pub constraints: svc_types::Constraints,
}

pub struct OriginIr {
    pub node: String,
    pub allowed_origins: Vec<String>,
    pub missing_origin_allowed: bool,
    pub allowed_headers: Vec<String>,
    pub expose_headers: Vec<String>,
    pub allow_credentials: bool,
    pub max_age: Option<u64>,
}

/// A Check JWT node's settings, as the runtime's `JwtSettings` takes them.
pub struct TokenCheckIr {
    pub node: String,
    pub index: usize,
    pub issuer: String,
    pub audiences: Vec<String>,
    pub algorithms: Vec<String>,
    pub leeway: u64,
    pub required_scopes: Vec<String>,
    pub required_claims: Vec<String>,
    pub keys: svc_frontend::flow::JwtKeys,
    /// The structure its claims are read as, and that structure's fields (the claims
    /// kept for it: a structure refuses fields it does not declare).
    pub claims: Option<String>,
    pub claim_fields: Vec<String>,
}

/// A Check Signature node's settings.
pub struct SignatureCheckIr {
    pub node: String,
    pub preset: String,
    pub secrets: Vec<String>,
    pub tolerance_seconds: u64,
}

pub struct LimiterIr {
    pub node: String,
    pub limit: u64,
    pub window_seconds: u64,
    /// The node's own failure policy for a shared store (else the server's).
    pub on_store_error: Option<svc_frontend::flow::OnStoreError>,
}

/// A value that flows between nodes, by where it lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Local {
    /// The parsed request inputs.
    Request,
    Output(usize),
    Failure(usize),
    Identity(usize),
}

pub struct BlockIr {
    pub name: String,
    pub node_id: String,
    pub params: Vec<Local>,
    pub body: NodeIr,
}

pub enum Cont {
    Inline(Box<NodeIr>),
    Call { block: String, args: Vec<Local> },
}

pub enum LimitKeyIr {
    Ip,
    User(usize),
    KeyId(usize),
    /// The key as presented, before it is checked (location of a Check API Key node).
    Presented(String),
}

pub enum NodeIr {
    CheckOrigin {
        id: String,
        allowed: Cont,
        blocked: Cont,
    },
    RateLimit {
        id: String,
        key: LimitKeyIr,
        ok: Cont,
        limited: Cont,
    },
    CheckApiKey {
        id: String,
        index: usize,
        binds: bool,
        valid: Cont,
        invalid: Cont,
    },
    CheckJwt {
        id: String,
        index: usize,
        binds: bool,
        valid: Cont,
        invalid: Cont,
        /// Where a token without a required scope goes, if not to `invalid`.
        forbidden: Option<Cont>,
    },
    CheckSignature {
        id: String,
        valid: Cont,
        invalid: Cont,
    },
    Code {
        id: String,
        index: usize,
        key: String,
        /// Copies taken before this node's inputs move the values they are part of.
        held: Vec<HeldIr>,
        /// Whether the request inputs are parsed before this node.
        parse_request: bool,
        /// Whether the node may read `ctx.request` (else it is not built for it).
        with_request: bool,
        inputs: Vec<(String, InputIr)>,
        /// The wired inputs checked against their pins' constraints before the node
        /// runs (`node_input_invalid`).
        checked_inputs: Vec<CheckedPin>,
        /// The outputs whose values carry field constraints: checked after the node
        /// runs, a broken one being a node error.
        checked_outputs: Vec<CheckedPin>,
        binds: bool,
        next: Cont,
        on_fail: Option<(Cont, bool)>,
    },
    Return {
        id: String,
        parse_request: bool,
        status: u16,
        body: Option<TemplateIr>,
        headers: Vec<(String, HeaderIr)>,
    },
}

impl NodeIr {
    /// The node's id in its flow.
    pub fn id(&self) -> &str {
        match self {
            NodeIr::CheckOrigin { id, .. }
            | NodeIr::RateLimit { id, .. }
            | NodeIr::CheckApiKey { id, .. }
            | NodeIr::CheckJwt { id, .. }
            | NodeIr::CheckSignature { id, .. }
            | NodeIr::Code { id, .. }
            | NodeIr::Return { id, .. } => id,
        }
    }

    /// Its built-in type's row: the metrics count its outcomes by it.
    pub fn row(&self) -> &'static svc_types::builtin_nodes::NodeType {
        use svc_types::builtin_nodes as rows;
        match self {
            NodeIr::CheckOrigin { .. } => &rows::CHECK_ORIGIN,
            NodeIr::RateLimit { .. } => &rows::RATE_LIMIT,
            NodeIr::CheckApiKey { .. } => &rows::CHECK_API_KEY,
            NodeIr::CheckJwt { .. } => &rows::CHECK_JWT,
            NodeIr::CheckSignature { .. } => &rows::CHECK_SIGNATURE,
            NodeIr::Code { .. } => &rows::CODE,
            NodeIr::Return { .. } => &rows::RETURN_JSON,
        }
    }

    /// The node's index in its flow when it gives later nodes a value (a code node's
    /// outputs, a check's identity): the generated code names its local after it.
    pub fn value_index(&self) -> Option<usize> {
        match self {
            NodeIr::Code { index, .. } | NodeIr::CheckApiKey { index, .. } | NodeIr::CheckJwt { index, .. } => {
                Some(*index)
            }
            NodeIr::CheckOrigin { .. }
            | NodeIr::RateLimit { .. }
            | NodeIr::CheckSignature { .. }
            | NodeIr::Return { .. } => None,
        }
    }
}

/// A copy of a value that a later node reads, taken just before the value it is part of
/// is moved into a node's inputs: `let held_req_body_currency = req.body.currency.to_owned();`
pub struct HeldIr {
    pub name: String,
    pub value: ValueIr,
}

/// How one field of a node's `Inputs` is filled.
pub enum InputIr {
    Wire {
        value: ValueIr,
        pin: PinTarget,
        /// Moved out of its local rather than cloned: this is its last read.
        moved: bool,
    },
    Literal {
        json: serde_json::Value,
        pin: PinTarget,
    },
    /// Unwired, with a default.
    Default {
        json: serde_json::Value,
        pin: PinTarget,
    },
    /// Unwired and optional.
    Absent,
}

/// The pin being filled.
#[derive(Clone)]
pub struct PinTarget {
    pub ty: TypeRef,
    /// `Option<T>` in `Inputs` (optional, no default).
    pub option: bool,
    pub default: Option<serde_json::Value>,
}

/// Where a value comes from, and the fields walked into it.
#[derive(Debug, Clone)]
pub struct ValueIr {
    pub root: RootIr,
    pub steps: Vec<StepIr>,
    /// The type at the end of the path, and whether it may be absent.
    pub ty: TypeRef,
    pub optional: bool,
}

#[derive(Debug, Clone)]
pub enum RootIr {
    /// The whole body (typed).
    Body {
        ty: TypeRef,
    },
    /// The whole body given as fields (a generated struct, typed `object`).
    BodyStruct,
    BodyField {
        name: String,
        optional: bool,
    },
    Query {
        name: String,
        optional: bool,
    },
    Header {
        name: String,
        optional: bool,
    },
    Param {
        name: String,
    },
    Output {
        node: usize,
        pin: String,
        optional: bool,
    },
    FailureMessage {
        node: usize,
    },
    FailureCode {
        node: usize,
    },
    /// A field of a Check API Key's identity (`user`) or of a Check JWT's verified token
    /// (`subject`, `claims`).
    Identity {
        node: usize,
        field: String,
    },
    /// A copy taken before a move ([`HeldIr`]), read in place of the original.
    Held {
        name: String,
    },
}

#[derive(Debug, Clone)]
pub struct StepIr {
    /// The Rust field name, or for `json` steps the JSON key.
    pub field: String,
    pub optional: bool,
    pub boxed: bool,
    /// A step into an untyped (`object` / `any`) value: a JSON lookup.
    pub json: bool,
}

pub enum TemplateIr {
    /// JSON text, computed now.
    Literal(String),
    Value(ValueIr),
    Object(Vec<(String, TemplateIr)>),
    Array(Vec<TemplateIr>),
}

pub enum HeaderIr {
    Literal(String),
    Value(ValueIr),
}

/// Whether a value of `ty` has something to check, given the validated structures.
pub fn checks_type(ty: &TypeRef, validated: &BTreeSet<String>) -> bool {
    match ty {
        TypeRef::Structure(name) => validated.contains(name),
        TypeRef::Array(inner) => checks_type(inner, validated),
        _ => false,
    }
}
