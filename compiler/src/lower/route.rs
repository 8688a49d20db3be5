//! One route's flow lowered: its graph walked from Start into a tree of [`NodeIr`],
//! blocks for nodes several edges reach, and a [`ValueIr`] for every wire.

use super::ir::*;

mod moves;
use crate::check::Checked;
use crate::check::graph::{Fact, FlowGraph};
pub(super) use moves::Scope;
use std::collections::BTreeSet;
use svc_frontend::flow::{
    Binding, BodySchema, Flow, Method, NodeKind, RateKey, RefRoot, Reference, RequestPart, Template,
};
use svc_types::{Assets, NodeManifest, PinDefinition, TypeRef};

pub(super) struct FlowLowerer<'a> {
    pub(super) checked: &'a Checked<'a>,
    /// The flow's index in the project (and in `checked.graphs`).
    pub(super) flow_index: usize,
    pub(super) flow: &'a Flow,
    pub(super) graph: &'a FlowGraph,
    pub(super) assets: &'a Assets,
    pub(super) boxed: &'a BTreeSet<(String, String)>,
    /// The structures with constraints to check ([`validated_structures`]).
    pub(super) validated: &'a BTreeSet<String>,
    pub(super) blocks: Vec<BlockIr>,
    /// What the function being lowered owns (see [`moves`]).
    pub(super) scope: moves::Scope,
    /// Names of held copies, unique in the route.
    pub(super) held_names: BTreeSet<String>,
}

/// The response headers a Check Origin without `expose_headers` lets a browser read:
/// those the flow's Return JSON nodes set, the rate-limit headers when the flow limits,
/// and `x-request-id`. Without them a page on an allowed origin could not read what the
/// flow itself answers (the shop's `x-quote-status` read as null in Chromium).
pub(super) fn default_exposed(flow: &Flow) -> Vec<String> {
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
    pub(super) fn lower(mut self, module: String, file: String, config: &svc_frontend::config::Config) -> RouteIr {
        let flow = self.flow;
        let request = self.request_ir();
        let mut origins = Vec::new();
        let mut limiters = Vec::new();
        let mut key_locations = Vec::new();
        let mut tokens = Vec::new();
        let mut signatures = Vec::new();
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
                NodeKind::CheckJwt(j) => {
                    key_locations.push((node.id.value.clone(), j.location.value.clone()));
                    tokens.push(TokenCheckIr {
                        node: node.id.value.clone(),
                        index: i,
                        issuer: j.issuer.value.clone(),
                        audiences: j.audiences.iter().map(|a| a.value.clone()).collect(),
                        algorithms: j.algorithms.iter().map(|a| a.value.clone()).collect(),
                        leeway: j.leeway,
                        required_scopes: j.required_scopes.clone(),
                        required_claims: j.required_claims.clone(),
                        keys: j.keys.clone(),
                        claims: j.claims.as_ref().map(|c| c.value.clone()),
                        claim_fields: j
                            .claims
                            .as_ref()
                            .and_then(|c| self.assets.structure_named(&c.value))
                            .map(|s| s.fields.iter().map(|f| f.name.clone()).collect())
                            .unwrap_or_default(),
                    });
                }
                NodeKind::CheckSignature(c) => signatures.push(SignatureCheckIr {
                    node: node.id.value.clone(),
                    preset: c.preset.value.clone(),
                    secrets: c.secrets.iter().map(|s| s.value.clone()).collect(),
                    tolerance_seconds: c.tolerance,
                }),
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
            tokens,
            signatures,
            preflight,
            entry,
            blocks,
        }
    }

    pub(super) fn request_ir(&self) -> RequestIr {
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
    pub(super) fn chain(&self, start: usize) -> String {
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
    pub(super) fn in_degree(&self, i: usize) -> usize {
        self.graph.preds[i]
            .iter()
            .filter(|e| e.from.is_none_or(|p| self.graph.reachable[p]))
            .count()
    }

    pub(super) fn cont(&mut self, target: usize) -> Cont {
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
    pub(super) fn block_params(&self, target: usize) -> Vec<Local> {
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
    pub(super) fn needs_request_from(&self, target: usize) -> bool {
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
    pub(super) fn locals_used_by(&self, i: usize) -> Vec<Local> {
        if let Some(LimitKeyIr::User(n) | LimitKeyIr::KeyId(n)) = self.limit_key(i) {
            return vec![Local::Identity(n)];
        }
        self.wires_of(i).into_iter().filter_map(|r| self.local_of(r)).collect()
    }

    /// The wires node `i` reads.
    pub(super) fn wires_of(&self, i: usize) -> Vec<&'a Reference> {
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

    pub(super) fn local_of(&self, r: &Reference) -> Option<Local> {
        match &r.root {
            RefRoot::Request(_) => Some(Local::Request),
            RefRoot::Node(id) => {
                let j = *self.graph.index.get(&id.value)?;
                Some(match &self.flow.nodes[j].kind {
                    NodeKind::CheckApiKey(_) | NodeKind::CheckJwt(_) => Local::Identity(j),
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
    pub(super) fn used_after(&self, i: usize, local: Local) -> bool {
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

    pub(super) fn target(&self, i: usize, pin: &str) -> usize {
        self.graph.succ[i]
            .iter()
            .find(|e| e.pin == pin)
            .map(|e| e.to)
            .expect("checked: every required edge is wired")
    }

    pub(super) fn limit_key(&self, i: usize) -> Option<LimitKeyIr> {
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
        // `by: api-key` keys on a key, never on a token.
        let key_identity = self.graph.topo.iter().rev().copied().find(|n| {
            facts.contains(&Fact::Identity(*n)) && matches!(self.flow.nodes[*n].kind, NodeKind::CheckApiKey(_))
        });
        Some(match (r.by.value, identity) {
            (RateKey::Ip, _) => LimitKeyIr::Ip,
            (RateKey::User, Some(n)) => LimitKeyIr::User(n),
            (RateKey::ApiKey, Some(_)) if key_identity.is_some() => LimitKeyIr::KeyId(key_identity.expect("matched")),
            (RateKey::ApiKey, _) | (RateKey::User, None) => {
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
    pub(super) fn parses_request(&self, i: usize, always: bool) -> bool {
        if self.flow.request.is_empty_schema() {
            return false;
        }
        always || self.locals_used_by(i).contains(&Local::Request)
    }

    pub(super) fn node(&mut self, i: usize) -> NodeIr {
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
            NodeKind::CheckJwt(j) => {
                let (a, b) = (self.target(i, "valid"), self.target(i, "invalid"));
                let forbidden = j.forbidden.as_ref().map(|_| self.target(i, "forbidden"));
                let binds = self.used_after(i, Local::Identity(i));
                NodeIr::CheckJwt {
                    id,
                    index: i,
                    binds,
                    valid: self.cont(a),
                    invalid: self.cont(b),
                    forbidden: forbidden.map(|f| self.cont(f)),
                }
            }
            NodeKind::CheckSignature(_) => {
                let (a, b) = (self.target(i, "valid"), self.target(i, "invalid"));
                NodeIr::CheckSignature {
                    id,
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

    pub(super) fn inputs(
        &self,
        c: &svc_frontend::flow::CodeCall,
        manifest: &NodeManifest,
        _i: usize,
    ) -> Vec<(String, InputIr)> {
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

    pub(super) fn template(&self, t: &Template) -> TemplateIr {
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
    pub(super) fn value(&self, r: &Reference) -> ValueIr {
        self.scope.read(self.raw_value(r))
    }

    /// The IR of a checked reference, read from where the value lives.
    pub(super) fn raw_value(&self, r: &Reference) -> ValueIr {
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
                    NodeKind::CheckJwt(t) => (
                        RootIr::Identity {
                            node: j,
                            field: r.path[0].clone(),
                        },
                        match (r.path[0].as_str(), &t.claims) {
                            ("claims", Some(structure)) => TypeRef::Structure(structure.value.clone()),
                            _ => TypeRef::String,
                        },
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

pub(super) fn pin_target(pin: &PinDefinition, ty: &TypeRef) -> PinTarget {
    PinTarget {
        ty: ty.clone(),
        option: pin.optional && pin.default.is_none(),
        default: pin.default.clone(),
    }
}

pub(super) fn collect_template_refs<'a>(t: &'a Template, out: &mut Vec<&'a Reference>) {
    match t {
        Template::Literal(_) => {}
        Template::Wire(r) => out.push(r),
        Template::Object(fields, _) => fields.iter().for_each(|(_, v)| collect_template_refs(v, out)),
        Template::Array(items, _) => items.iter().for_each(|v| collect_template_refs(v, out)),
    }
}

/// The JSON text of a template without wires (keys in the order written), if it has none.
pub(super) fn literal_template(t: &Template) -> Option<String> {
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
