//! Lowering: a checked project becomes an IR that says, for every route, exactly what
//! straight-line code to emit. The emitter (`emit/`) only prints it.
//!
//! Per route, the flow graph becomes a tree of [`NodeIr`] rooted at the Start node's
//! target. A node reached by one edge is inlined at that edge; a node reached by several
//! edges becomes a [`BlockIr`] (an `async fn` taking, as parameters, the values it and its
//! successors use), called from each edge. Every wire becomes a [`ValueIr`]: where the
//! value lives (a request input, a node's outputs, a failure, an identity) and the path of
//! fields into it, with the optionality of each step.
//!
//! A wire normally clones what it reads into the node's inputs. Where the node is the
//! value's last reader, [`moves`] has it moved instead (see that module).

use crate::check::Checked;
use crate::check::graph::{Fact, FlowGraph};
use std::collections::{BTreeMap, BTreeSet};
use svc_frontend::flow::{
    Binding, BodySchema, Flow, KeyLocation, Method, NodeKind, RateKey, RefRoot, Reference, RequestPart, Template,
};
use svc_frontend::node_crate::NodeCode;
use svc_frontend_ts::native::{NotNative, Source};
use svc_types::{Assets, NodeManifest, PinDefinition, TypeRef};

mod moves;

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
    fn compile_typescript(&mut self, project: &crate::project::Project) {
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
        NodeIr::CheckApiKey { valid, invalid, .. } => {
            go(valid);
            go(invalid);
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

/// Lowers a checked project (which must have no errors).
/// The structures whose values need checking, in definition order: those with a
/// constrained field, and those with a field of such a structure (to any depth).
pub fn validated_structures(assets: &Assets) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = BTreeSet::new();
    loop {
        let before = out.len();
        for s in &assets.structures {
            if out.contains(&s.name) {
                continue;
            }
            let needs = s
                .fields
                .iter()
                .any(|f| !f.constraints.is_empty() || f.type_ref().is_some_and(|t| checks_type(&t, &out)));
            if needs {
                out.insert(s.name.clone());
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// Whether a value of `ty` has something to check, given the validated structures.
pub fn checks_type(ty: &TypeRef, validated: &BTreeSet<String>) -> bool {
    match ty {
        TypeRef::Structure(name) => validated.contains(name),
        TypeRef::Array(inner) => checks_type(inner, validated),
        _ => false,
    }
}

pub fn lower(checked: &Checked, typescript: TypeScriptNodes) -> ProjectIr {
    let project = checked.project;
    let config = project
        .config
        .as_ref()
        .expect("a checked project without errors has a config");
    let mut routes: Vec<RouteIr> = Vec::new();
    let mut used: BTreeMap<String, UsedNode> = BTreeMap::new();
    let mut modules: BTreeSet<String> = BTreeSet::new();
    let boxed = svc_frontend::assets_codegen::recursive_fields(&checked.assets);
    let validated = validated_structures(&checked.assets);
    for (flow_index, (flow, graph)) in project.flows.iter().zip(&checked.graphs).enumerate() {
        let file = project.sources.get(flow.file).display_path.clone();
        let mut module = module_name(&file);
        while !modules.insert(module.clone()) {
            module.push('_');
        }
        let lowerer = FlowLowerer {
            checked,
            flow_index,
            flow,
            graph,
            assets: &checked.assets,
            boxed: &boxed,
            validated: &validated,
            blocks: Vec::new(),
            scope: moves::Scope::default(),
            held_names: BTreeSet::new(),
        };
        let route = lowerer.lower(module, file, config);
        for node in &flow.nodes {
            if let NodeKind::Code(c) = &node.kind
                && let Some(info) = checked.catalog.get(&c.node_key.value)
            {
                used.entry(c.node_key.value.clone()).or_insert_with(|| UsedNode {
                    key: c.node_key.value.clone(),
                    code: info.code.clone(),
                    manifest: info.manifest.clone(),
                });
            }
        }
        routes.push(route);
    }
    routes.sort_by(|a, b| (&a.route, &a.methods).cmp(&(&b.route, &b.methods)));
    let node_crate = project.node_crate.as_ref().map(|k| NodeCrateIr {
        package: k.package_name.clone(),
        crate_name: k.crate_name.clone(),
        dir: k.dir.clone(),
    });
    let version = project
        .node_crate
        .as_ref()
        .and_then(|k| k.version.clone())
        .unwrap_or_else(|| "0.1.0".into());
    let mut ir = ProjectIr {
        name: config.project_name.clone(),
        version,
        workspace_id: config.workspace_id.clone(),
        api_id: config.api_id.clone(),
        assets_from_nodes: project.node_crate.as_ref().is_some_and(|k| k.include_assets.is_some()),
        node_crate,
        assets: checked.assets.clone(),
        validated,
        secrets: config
            .assets
            .secrets
            .iter()
            .map(|s| (s.name.clone(), s.required))
            .collect(),
        routes,
        scripts: used
            .values()
            .any(|n| matches!(n.code, NodeCode::TypeScript { .. }))
            .then(|| checked.scripts.clone())
            .flatten(),
        nodes: used.into_values().collect(),
        native: BTreeMap::new(),
    };
    if typescript == TypeScriptNodes::Compiled {
        ir.compile_typescript(project);
    }
    ir
}

/// `flows/create-order.yaml` → `create_order`; `flows/admin/keys.yaml` → `admin_keys`.
fn module_name(file: &str) -> String {
    let stem = file.strip_prefix("flows/").unwrap_or(file);
    let stem = stem.rsplit_once('.').map(|(s, _)| s).unwrap_or(stem);
    let name = svc_types::case::to_snake(stem);
    if svc_types::case::is_keyword(&name) || name == "mod" {
        format!("{name}_route")
    } else {
        name
    }
}

struct FlowLowerer<'a> {
    checked: &'a Checked<'a>,
    /// The flow's index in the project (and in `checked.graphs`).
    flow_index: usize,
    flow: &'a Flow,
    graph: &'a FlowGraph,
    assets: &'a Assets,
    boxed: &'a BTreeSet<(String, String)>,
    /// The structures with constraints to check ([`validated_structures`]).
    validated: &'a BTreeSet<String>,
    blocks: Vec<BlockIr>,
    /// What the function being lowered owns (see [`moves`]).
    scope: moves::Scope,
    /// Names of held copies, unique in the route.
    held_names: BTreeSet<String>,
}

/// The response headers a Check Origin without `expose_headers` lets a browser read:
/// those the flow's Return JSON nodes set, the rate-limit headers when the flow limits,
/// and `x-request-id`. Without them a page on an allowed origin could not read what the
/// flow itself answers (the shop's `x-quote-status` read as null in Chromium).
fn default_exposed(flow: &Flow) -> Vec<String> {
    let mut exposed: BTreeSet<String> = BTreeSet::new();
    exposed.insert("x-request-id".into());
    for node in &flow.nodes {
        match &node.kind {
            NodeKind::ReturnJson(r) => {
                exposed.extend(r.headers.iter().map(|(name, _)| name.value.to_ascii_lowercase()))
            }
            NodeKind::RateLimit(_) => {
                exposed.extend(["ratelimit", "ratelimit-policy", "retry-after"].map(String::from));
            }
            _ => {}
        }
    }
    exposed.into_iter().collect()
}

impl<'a> FlowLowerer<'a> {
    fn lower(mut self, module: String, file: String, config: &svc_frontend::config::Config) -> RouteIr {
        let flow = self.flow;
        let request = self.request_ir();
        let mut origins = Vec::new();
        let mut limiters = Vec::new();
        let mut key_locations = Vec::new();
        for &i in &self.graph.topo {
            let node = &flow.nodes[i];
            match &node.kind {
                NodeKind::CheckOrigin(c) => origins.push(OriginIr {
                    node: node.id.value.clone(),
                    allowed_origins: c.allowed_origins.iter().map(|o| o.value.clone()).collect(),
                    missing_origin_allowed: c.missing_origin == svc_frontend::flow::MissingOrigin::Allow,
                    allowed_headers: c.allowed_headers.clone(),
                    expose_headers: c.expose_headers.clone().unwrap_or_else(|| default_exposed(flow)),
                    allow_credentials: c.allow_credentials,
                    max_age: c.max_age,
                }),
                NodeKind::RateLimit(r) => limiters.push(LimiterIr {
                    node: node.id.value.clone(),
                    limit: r.limit.value,
                    window_seconds: r.window.value,
                    on_store_error: r.on_store_error.as_ref().map(|p| p.value),
                }),
                NodeKind::CheckApiKey(k) => key_locations.push((node.id.value.clone(), k.location.value.clone())),
                _ => {}
            }
        }
        let preflight = origins.first().map(|o| o.node.clone());
        let start = self.graph.start.expect("a checked flow has a start");
        let entry = self.node(start);
        let mut blocks = std::mem::take(&mut self.blocks);
        blocks.sort_by(|a, b| a.name.cmp(&b.name));
        RouteIr {
            module,
            file,
            route: flow.route.value.clone(),
            axum_path: config.served_path(&flow.route.value),
            methods: {
                let mut m: Vec<Method> = flow.methods.iter().map(|m| m.value).collect();
                m.sort();
                m
            },
            summary: flow.summary.clone(),
            chain: self.chain(start),
            request,
            origins,
            limiters,
            key_locations,
            preflight,
            entry,
            blocks,
        }
    }

    fn request_ir(&self) -> RequestIr {
        let req = &self.flow.request;
        let params = |fields: &[svc_frontend::flow::FieldSchema]| {
            fields
                .iter()
                .map(|f| ParamIr {
                    name: f.name.value.clone(),
                    ty: f.type_ref.value.clone(),
                    required: f.required,
                    constraints: f.constraints.clone(),
                })
                .collect()
        };
        RequestIr {
            body: req.body.as_ref().map(|b| match b {
                BodySchema::Typed(t) => BodyIr::Typed(t.value.clone()),
                BodySchema::Fields(fields) => BodyIr::Fields(params(fields)),
            }),
            query: params(&req.query),
            headers: params(&req.headers),
            params: req.params.iter().map(|p| p.value.clone()).collect(),
        }
    }

    /// The nodes along the first-choice path from Start: what `routes` prints.
    fn chain(&self, start: usize) -> String {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        let mut at = Some(start);
        while let Some(i) = at {
            if !seen.insert(i) {
                break;
            }
            let node = &self.flow.nodes[i];
            let label = match &node.kind {
                NodeKind::Code(c) => format!("code {} ({})", node.id.value, c.node_key.value),
                NodeKind::ReturnJson(r) => format!("return-json {} ({})", node.id.value, r.status.value),
                NodeKind::RateLimit(r) => format!(
                    "rate-limit {} ({}/{}s by {})",
                    node.id.value,
                    r.limit.value,
                    r.window.value,
                    r.by.value.as_str()
                ),
                other => format!("{} {}", other.type_name(), node.id.value),
            };
            out.push(label);
            at = self.graph.succ[i].first().map(|e| e.to);
        }
        out.join(" → ")
    }

    /// Incoming edges from reachable nodes (and Start).
    fn in_degree(&self, i: usize) -> usize {
        self.graph.preds[i]
            .iter()
            .filter(|e| e.from.is_none_or(|p| self.graph.reachable[p]))
            .count()
    }

    fn cont(&mut self, target: usize) -> Cont {
        if self.in_degree(target) <= 1 {
            return Cont::Inline(Box::new(self.node(target)));
        }
        let name = format!("from_{}", svc_types::case::to_snake(&self.flow.nodes[target].id.value));
        let args = self.block_params(target);
        if !self.blocks.iter().any(|b| b.name == name) {
            // Placeholder first, so that the recursion below does not lower it twice.
            self.blocks.push(BlockIr {
                name: name.clone(),
                node_id: self.flow.nodes[target].id.value.clone(),
                params: args.clone(),
                body: NodeIr::Return {
                    id: String::new(),
                    parse_request: false,
                    status: 500,
                    body: None,
                    headers: vec![],
                },
            });
            // A block is a function of its own: it owns none of its caller's values.
            let caller = std::mem::take(&mut self.scope);
            let body = self.node(target);
            self.scope = caller;
            let block = self.blocks.iter_mut().find(|b| b.name == name).expect("pushed above");
            block.body = body;
        }
        Cont::Call { block: name, args }
    }

    /// The values a block needs: those available at its entry that it or any node after
    /// it uses.
    fn block_params(&self, target: usize) -> Vec<Local> {
        let facts = self.graph.facts(target).cloned().unwrap_or_default();
        let mut needed: BTreeSet<Local> = BTreeSet::new();
        let mut stack = vec![target];
        let mut seen = BTreeSet::new();
        while let Some(i) = stack.pop() {
            if !seen.insert(i) {
                continue;
            }
            for local in self.locals_used_by(i) {
                needed.insert(local);
            }
            stack.extend(self.graph.succ[i].iter().map(|e| e.to));
        }
        let mut params: Vec<Local> = needed
            .into_iter()
            .filter(|l| match l {
                Local::Request => false,
                Local::Output(n) => facts.contains(&Fact::Outputs(*n)),
                Local::Failure(n) => facts.contains(&Fact::Failure(*n)),
                Local::Identity(n) => facts.contains(&Fact::Identity(*n)),
            })
            .collect();
        // The request goes where it is read or must be parsed (before a code node).
        if self.needs_request_from(target) {
            params.insert(0, Local::Request);
        }
        params
    }

    /// Whether node `target` or a node after it parses the request.
    fn needs_request_from(&self, target: usize) -> bool {
        let mut stack = vec![target];
        let mut seen = BTreeSet::new();
        while let Some(i) = stack.pop() {
            if !seen.insert(i) {
                continue;
            }
            if self.parses_request(i, matches!(self.flow.nodes[i].kind, NodeKind::Code(_))) {
                return true;
            }
            stack.extend(self.graph.succ[i].iter().map(|e| e.to));
        }
        false
    }

    /// The locals node `i` reads (its wires, and the identity a rate limit keys on).
    fn locals_used_by(&self, i: usize) -> Vec<Local> {
        if let Some(LimitKeyIr::User(n) | LimitKeyIr::KeyId(n)) = self.limit_key(i) {
            return vec![Local::Identity(n)];
        }
        self.wires_of(i).into_iter().filter_map(|r| self.local_of(r)).collect()
    }

    /// The wires node `i` reads.
    fn wires_of(&self, i: usize) -> Vec<&'a Reference> {
        let node = &self.flow.nodes[i];
        let mut refs: Vec<&Reference> = Vec::new();
        match &node.kind {
            NodeKind::Code(c) => {
                for (_, b) in &c.inputs {
                    if let Binding::Wire(r) = b {
                        refs.push(r);
                    }
                }
            }
            NodeKind::ReturnJson(r) => {
                if let Some(t) = &r.body {
                    collect_template_refs(t, &mut refs);
                }
                for (_, b) in &r.headers {
                    if let Binding::Wire(w) = b {
                        refs.push(w);
                    }
                }
            }
            _ => {}
        }
        refs
    }

    fn local_of(&self, r: &Reference) -> Option<Local> {
        match &r.root {
            RefRoot::Request(_) => Some(Local::Request),
            RefRoot::Node(id) => {
                let j = *self.graph.index.get(&id.value)?;
                Some(match &self.flow.nodes[j].kind {
                    NodeKind::CheckApiKey(_) => Local::Identity(j),
                    NodeKind::Code(c) => {
                        let is_output = self
                            .checked
                            .catalog
                            .get(&c.node_key.value)
                            .is_some_and(|n| n.manifest.outputs.get(&r.path[0]).is_some());
                        if !is_output && r.path[0] == "failure" {
                            Local::Failure(j)
                        } else {
                            Local::Output(j)
                        }
                    }
                    _ => return None,
                })
            }
        }
    }

    /// Whether some node after `i` (or `i` itself) uses `local`.
    fn used_after(&self, i: usize, local: Local) -> bool {
        let mut stack: Vec<usize> = self.graph.succ[i].iter().map(|e| e.to).collect();
        let mut seen = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            if self.locals_used_by(n).contains(&local) {
                return true;
            }
            stack.extend(self.graph.succ[n].iter().map(|e| e.to));
        }
        false
    }

    fn target(&self, i: usize, pin: &str) -> usize {
        self.graph.succ[i]
            .iter()
            .find(|e| e.pin == pin)
            .map(|e| e.to)
            .expect("checked: every required edge is wired")
    }

    fn limit_key(&self, i: usize) -> Option<LimitKeyIr> {
        let NodeKind::RateLimit(r) = &self.flow.nodes[i].kind else {
            return None;
        };
        let facts = self.graph.facts(i).cloned().unwrap_or_default();
        // The identity closest before this node: the last Check API Key in topological order.
        let identity = self
            .graph
            .topo
            .iter()
            .rev()
            .copied()
            .find(|n| facts.contains(&Fact::Identity(*n)));
        Some(match (r.by.value, identity) {
            (RateKey::Ip, _) => LimitKeyIr::Ip,
            (RateKey::User, Some(n)) => LimitKeyIr::User(n),
            (RateKey::ApiKey, Some(n)) => LimitKeyIr::KeyId(n),
            (RateKey::ApiKey, None) | (RateKey::User, None) => {
                let first_key_check = self
                    .graph
                    .topo
                    .iter()
                    .copied()
                    .find(|n| matches!(self.flow.nodes[*n].kind, NodeKind::CheckApiKey(_)));
                LimitKeyIr::Presented(
                    first_key_check
                        .map(|n| self.flow.nodes[n].id.value.clone())
                        .unwrap_or_default(),
                )
            }
        })
    }

    /// Whether the request inputs are parsed (and their field constraints checked) before
    /// node `i`: before every code node, before a Return JSON that reads them, and before
    /// a Return JSON that answers 2xx, so that a route never accepts a request its
    /// schema refuses, even when nothing reads it. (Where it is parsed already, the
    /// emitter does not parse it again.) An error answer (a protection's 401, 403 or 429)
    /// reads nothing: a client without a key learns nothing of the schema.
    fn parses_request(&self, i: usize, always: bool) -> bool {
        if self.flow.request.is_empty_schema() {
            return false;
        }
        always || self.locals_used_by(i).contains(&Local::Request)
    }

    fn node(&mut self, i: usize) -> NodeIr {
        let node = &self.flow.nodes[i];
        let id = node.id.value.clone();
        match &node.kind {
            NodeKind::CheckOrigin(_) => {
                let (a, b) = (self.target(i, "allowed"), self.target(i, "blocked"));
                NodeIr::CheckOrigin {
                    id,
                    allowed: self.cont(a),
                    blocked: self.cont(b),
                }
            }
            NodeKind::RateLimit(_) => {
                let (a, b) = (self.target(i, "sequence-ok"), self.target(i, "sequence-limited"));
                let key = self.limit_key(i).expect("a rate limit node");
                NodeIr::RateLimit {
                    id,
                    key,
                    ok: self.cont(a),
                    limited: self.cont(b),
                }
            }
            NodeKind::CheckApiKey(_) => {
                let (a, b) = (self.target(i, "valid"), self.target(i, "invalid"));
                let binds = self.used_after(i, Local::Identity(i));
                NodeIr::CheckApiKey {
                    id,
                    index: i,
                    binds,
                    valid: self.cont(a),
                    invalid: self.cont(b),
                }
            }
            NodeKind::Code(c) => {
                let info = self
                    .checked
                    .catalog
                    .get(&c.node_key.value)
                    .expect("checked: the node exists");
                let mut inputs = self.inputs(c, &info.manifest, i);
                let held = self.plan_moves(i, &mut inputs);
                let next = self.target(i, "next");
                let on_fail = c.on_fail.as_ref().map(|_| self.target(i, "on_fail"));
                let binds = self.used_after(i, Local::Output(i));
                let fail_binds = self.used_after(i, Local::Failure(i));
                let parse_request = self.parses_request(i, true);
                // What follows runs in this function, after this node: it owns the node's
                // outputs and reads the held copies.
                let outer = self.scope.enter(i, &held);
                let next = self.cont(next);
                let on_fail = on_fail.map(|t| (self.cont(t), fail_binds));
                self.scope.leave(outer);
                let checked_outputs = info
                    .manifest
                    .outputs
                    .data()
                    .filter(|(_, pin, ty)| !pin.constraints.is_empty() || checks_type(ty, self.validated))
                    .map(|(id, pin, ty)| CheckedPin {
                        pin: id.to_string(),
                        ty: ty.clone(),
                        optional: pin.optional,
                        constraints: pin.constraints.clone(),
                    })
                    .collect();
                let checked_inputs = self
                    .checked
                    .flow_context(self.flow_index)
                    .unchecked_wires(i)
                    .into_iter()
                    .map(|w| {
                        let pin = info.manifest.inputs.get(&w.pin).expect("checked: the pin exists");
                        let ty = pin.type_ref().expect("checked: a data pin").clone();
                        CheckedPin {
                            optional: pin_target(pin, &ty).option,
                            pin: w.pin,
                            ty,
                            constraints: w.pin_constraints,
                        }
                    })
                    .collect();
                NodeIr::Code {
                    id,
                    index: i,
                    key: c.node_key.value.clone(),
                    held,
                    parse_request,
                    with_request: info.uses_request,
                    inputs,
                    checked_inputs,
                    checked_outputs,
                    binds,
                    next,
                    on_fail,
                }
            }
            NodeKind::ReturnJson(r) => {
                let parse_request = self.parses_request(i, (200..300).contains(&r.status.value));
                NodeIr::Return {
                    id,
                    parse_request,
                    status: r.status.value,
                    body: r.body.as_ref().map(|t| self.template(t)),
                    headers: r
                        .headers
                        .iter()
                        .map(|(name, b)| {
                            let h = match b {
                                Binding::Literal(lit) => HeaderIr::Literal(lit.scalar_text()),
                                Binding::Wire(w) => HeaderIr::Value(self.value(w)),
                            };
                            (name.value.clone(), h)
                        })
                        .collect(),
                }
            }
        }
    }

    fn inputs(&self, c: &svc_frontend::flow::CodeCall, manifest: &NodeManifest, _i: usize) -> Vec<(String, InputIr)> {
        manifest
            .inputs
            .data()
            .map(|(id, pin, ty)| {
                let target = pin_target(pin, ty);
                let binding = c.inputs.iter().find(|(p, _)| p.value == id).map(|(_, b)| b);
                let input = match binding {
                    Some(Binding::Wire(r)) => InputIr::Wire {
                        value: self.value(r),
                        pin: target,
                        moved: false,
                    },
                    Some(Binding::Literal(lit)) if lit.is_null() => match &pin.default {
                        Some(d) => InputIr::Default {
                            json: d.clone(),
                            pin: target,
                        },
                        None => InputIr::Absent,
                    },
                    Some(Binding::Literal(lit)) => InputIr::Literal {
                        json: lit.to_json(),
                        pin: target,
                    },
                    None => match &pin.default {
                        Some(d) => InputIr::Default {
                            json: d.clone(),
                            pin: target,
                        },
                        None => InputIr::Absent,
                    },
                };
                (id.to_string(), input)
            })
            .collect()
    }

    fn template(&self, t: &Template) -> TemplateIr {
        if let Some(json) = literal_template(t) {
            return TemplateIr::Literal(json);
        }
        match t {
            Template::Literal(node) => TemplateIr::Literal(node.to_json_text()),
            Template::Wire(r) => TemplateIr::Value(self.value(r)),
            Template::Object(fields, _) => TemplateIr::Object(
                fields
                    .iter()
                    .map(|(k, v)| (serde_json::Value::String(k.value.clone()).to_string(), self.template(v)))
                    .collect(),
            ),
            Template::Array(items, _) => TemplateIr::Array(items.iter().map(|v| self.template(v)).collect()),
        }
    }

    /// The IR of a checked reference, as read here: a held copy where one was taken.
    fn value(&self, r: &Reference) -> ValueIr {
        self.scope.read(self.raw_value(r))
    }

    /// The IR of a checked reference, read from where the value lives.
    fn raw_value(&self, r: &Reference) -> ValueIr {
        let req = &self.flow.request;
        let (root, base_ty, base_optional, rest): (RootIr, TypeRef, bool, &[String]) = match &r.root {
            RefRoot::Request(RequestPart::Body) => match (&req.body, r.path.first()) {
                (Some(BodySchema::Typed(t)), _) => (
                    RootIr::Body { ty: t.value.clone() },
                    t.value.clone(),
                    false,
                    &r.path[..],
                ),
                (Some(BodySchema::Fields(_)), None) => (RootIr::BodyStruct, TypeRef::Object, false, &r.path[..]),
                (Some(BodySchema::Fields(fields)), Some(first)) => {
                    let f = fields
                        .iter()
                        .find(|f| &f.name.value == first)
                        .expect("checked: the field exists");
                    (
                        RootIr::BodyField {
                            name: first.clone(),
                            optional: !f.required,
                        },
                        f.type_ref.value.clone(),
                        !f.required,
                        &r.path[1..],
                    )
                }
                (None, _) => unreachable!("checked: the body is declared"),
            },
            RefRoot::Request(part @ (RequestPart::Query | RequestPart::Headers)) => {
                let fields = if *part == RequestPart::Query {
                    &req.query
                } else {
                    &req.headers
                };
                let name = if *part == RequestPart::Headers {
                    r.path[0].to_ascii_lowercase()
                } else {
                    r.path[0].clone()
                };
                let f = fields.iter().find(|f| f.name.value == name).expect("checked: declared");
                let root = if *part == RequestPart::Query {
                    RootIr::Query {
                        name,
                        optional: !f.required,
                    }
                } else {
                    RootIr::Header {
                        name,
                        optional: !f.required,
                    }
                };
                (root, f.type_ref.value.clone(), !f.required, &r.path[1..])
            }
            RefRoot::Request(RequestPart::Params) => (
                RootIr::Param {
                    name: r.path[0].clone(),
                },
                TypeRef::String,
                false,
                &r.path[1..],
            ),
            RefRoot::Node(id) => {
                let j = self.graph.index[&id.value];
                match &self.flow.nodes[j].kind {
                    NodeKind::CheckApiKey(_) => (
                        RootIr::Identity {
                            node: j,
                            field: r.path[0].clone(),
                        },
                        TypeRef::String,
                        false,
                        &r.path[1..],
                    ),
                    NodeKind::Code(c) => {
                        let manifest = &self.checked.catalog.get(&c.node_key.value).expect("checked").manifest;
                        match manifest.outputs.get(&r.path[0]) {
                            Some(pin) => {
                                let ty = pin.type_ref().cloned().expect("checked: a data output");
                                (
                                    RootIr::Output {
                                        node: j,
                                        pin: r.path[0].clone(),
                                        optional: pin.optional,
                                    },
                                    ty,
                                    pin.optional,
                                    &r.path[1..],
                                )
                            }
                            None if r.path.get(1).map(String::as_str) == Some("code") => {
                                (RootIr::FailureCode { node: j }, TypeRef::String, true, &r.path[2..])
                            }
                            None => (RootIr::FailureMessage { node: j }, TypeRef::String, false, &r.path[2..]),
                        }
                    }
                    _ => unreachable!("checked: only code nodes and Check API Key have data outputs"),
                }
            }
        };
        let mut steps = Vec::new();
        let mut ty = base_ty;
        let mut optional = base_optional;
        for seg in rest {
            match &ty {
                TypeRef::Structure(s) => {
                    let def = self.assets.structure_named(s).expect("checked");
                    let f = def.find_field(seg).expect("checked");
                    steps.push(StepIr {
                        field: f.rust_name(),
                        optional: !f.required,
                        boxed: self.boxed.contains(&(s.clone(), f.name.clone())),
                        json: false,
                    });
                    optional = optional || !f.required;
                    ty = f.type_ref().unwrap_or(TypeRef::Any);
                }
                _ => {
                    // Into `object` / `any`: an untyped, optional value (the checker allows it).
                    steps.push(StepIr {
                        field: seg.clone(),
                        optional: true,
                        boxed: false,
                        json: true,
                    });
                    ty = TypeRef::Any;
                    optional = true;
                }
            }
        }
        ValueIr {
            root,
            steps,
            ty,
            optional,
        }
    }
}

fn pin_target(pin: &PinDefinition, ty: &TypeRef) -> PinTarget {
    PinTarget {
        ty: ty.clone(),
        option: pin.optional && pin.default.is_none(),
        default: pin.default.clone(),
    }
}

fn collect_template_refs<'a>(t: &'a Template, out: &mut Vec<&'a Reference>) {
    match t {
        Template::Literal(_) => {}
        Template::Wire(r) => out.push(r),
        Template::Object(fields, _) => fields.iter().for_each(|(_, v)| collect_template_refs(v, out)),
        Template::Array(items, _) => items.iter().for_each(|v| collect_template_refs(v, out)),
    }
}

/// The JSON text of a template without wires (keys in the order written), if it has none.
fn literal_template(t: &Template) -> Option<String> {
    match t {
        Template::Literal(n) => Some(n.to_json_text()),
        Template::Wire(_) => None,
        Template::Object(fields, _) => {
            let members = fields
                .iter()
                .map(|(k, v)| {
                    literal_template(v).map(|j| format!("{}:{j}", serde_json::Value::String(k.value.clone())))
                })
                .collect::<Option<Vec<_>>>()?;
            Some(format!("{{{}}}", members.join(",")))
        }
        Template::Array(items, _) => Some(format!(
            "[{}]",
            items
                .iter()
                .map(literal_template)
                .collect::<Option<Vec<_>>>()?
                .join(",")
        )),
    }
}
