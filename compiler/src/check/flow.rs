//! Names and types inside one flow: the request schema, each node's configuration, every
//! wire (does it exist, has it run on every path, does its type fit), and every inline
//! literal. Also the flow-level lints.

use super::catalog::{Catalog, check_asset_ref};
use super::graph::{Fact, FlowGraph};
use super::types::{ValueType, Walk, check_constraints, check_literal, fits, mismatch_hint, walk};
use svc_frontend::flow::{
    Binding, BodySchema, CodeCall, FieldSchema, Flow, JwtKeys, NodeKind, RateKey, RefRoot, Reference, RequestPart,
    ReturnJson, Template,
};
use svc_frontend::yaml::Value;
use svc_frontend::{Code, Diagnostic, Diagnostics, Span};
use svc_types::origin::OriginPattern;
use svc_types::{Assets, TypeRef};

/// The data outputs of a Check API Key node: who the key belongs to, and which key it is.
pub const API_KEY_OUTPUTS: &[&str] = svc_types::builtin_nodes::CHECK_API_KEY.data_outputs;

/// Everything a flow is checked against.
pub struct FlowContext<'a> {
    pub flow: &'a Flow,
    pub graph: &'a FlowGraph,
    pub assets: &'a Assets,
    pub catalog: &'a Catalog<'a>,
}

/// Whether `domain` is itself on the Public Suffix List (`co.uk`, `github.io`,
/// `vercel.app`): a wildcard under it would allow sites of many owners. Single labels the
/// list does not know (`localhost`, `internal`) are not.
fn is_public_suffix(domain: &str) -> bool {
    psl::suffix(domain.as_bytes()).is_some_and(|s| s.typ().is_some() && s.as_bytes() == domain.as_bytes())
}

/// What is wrong with `value` as an entry of Check Origin's `allowed_origins`: the
/// message, a label and a hint. `svc check` and the Builder's form (as the user types)
/// both ask here.
pub fn allowed_origin_problem(value: &str) -> Option<(String, &'static str, String)> {
    match OriginPattern::parse(value) {
        Err(e) => Some((e.message, "not an allowed-origin pattern", e.hint)),
        Ok(OriginPattern::Subdomains { suffix, .. }) if is_public_suffix(&suffix) => Some((
            format!("`{value}` allows every site under the public suffix `{suffix}`"),
            "a public suffix",
            format!(
                "sites under `{suffix}` belong to whoever registers them; a wildcard covers the subdomains of one registered domain, such as `https://*.example.{suffix}`"
            ),
        )),
        Ok(_) => None,
    }
}

/// A wire into a code node's input whose pin asks constraints that what the wire comes
/// from does not guarantee: the generated server checks the value before the node runs
/// (`node_input_invalid`). `svc check` says so in a note.
pub struct UncheckedWire {
    pub span: Span,
    /// The reference, as written (`request.body.quantity`).
    pub wire: String,
    pub node_id: String,
    pub node_key: String,
    pub pin: String,
    pub pin_constraints: svc_types::Constraints,
}

impl FlowContext<'_> {
    /// The wires of node `i` into constrained pins that need a check at run time.
    pub fn unchecked_wires(&self, i: usize) -> Vec<UncheckedWire> {
        let node = &self.flow.nodes[i];
        let NodeKind::Code(c) = &node.kind else {
            return Vec::new();
        };
        let Some(info) = self.catalog.get(&c.node_key.value) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (pin_id, binding) in &c.inputs {
            let (Binding::Wire(r), Some(pin)) = (binding, info.manifest.inputs.get(&pin_id.value)) else {
                continue;
            };
            if pin.constraints.is_empty() {
                continue;
            }
            let mut quiet = Diagnostics::new();
            let Some(source) = self.reference(r, Some(i), &mut quiet) else {
                continue;
            };
            if !source.constraints.implies(&pin.constraints) {
                out.push(UncheckedWire {
                    span: r.span,
                    wire: r.text.clone(),
                    node_id: node.id.value.clone(),
                    node_key: c.node_key.value.clone(),
                    pin: pin_id.value.clone(),
                    pin_constraints: pin.constraints.clone(),
                });
            }
        }
        out
    }

    /// Checks a wire `r` into input `pin` (of type `pin_type`, called `pin_name` in
    /// messages) of node `i`: what `svc check` says of a wire in a flow file, and what the
    /// Builder says of one being drawn.
    pub fn check_wire(
        &self,
        i: usize,
        r: &Reference,
        pin: &svc_types::PinDefinition,
        pin_type: &TypeRef,
        pin_name: &str,
        diags: &mut Diagnostics,
    ) {
        let Some(vt) = self.reference(r, Some(i), diags) else {
            return;
        };
        if !fits(&vt.ty, pin_type) {
            diags.push(
                Diagnostic::new(
                    Code::TypeMismatch,
                    r.span,
                    format!("`{}` is `{}`, but {pin_name} is `{pin_type}`", r.text, vt.ty),
                )
                .label(format!("expected `{pin_type}`"))
                .help(mismatch_hint(&vt.ty, pin_type)),
            );
        } else if vt.optional && !pin.optional && pin.default.is_none() {
            diags.push(
                Diagnostic::new(Code::OptionalToRequired, r.span, format!("`{}` may be absent, but {pin_name} is required", r.text))
                    .label(format!("{} value", vt.describe()))
                    .help("mark the source required (in the structure or request schema), give the input a `.default(…)`, or make it `.optional()`"),
            );
        }
    }

    pub fn check(&self, diags: &mut Diagnostics) {
        self.check_request(diags);
        for (i, node) in self.flow.nodes.iter().enumerate() {
            match &node.kind {
                NodeKind::CheckOrigin(c) => {
                    for o in &c.allowed_origins {
                        if let Some((message, label, help)) = allowed_origin_problem(&o.value) {
                            diags.push(
                                Diagnostic::new(Code::InvalidValue, o.span, message)
                                    .label(label)
                                    .help(help),
                            );
                        }
                    }
                }
                NodeKind::RateLimit(r) => self.check_rate_limit(i, r, diags),
                NodeKind::CheckApiKey(_) => {}
                NodeKind::CheckJwt(j) => self.check_jwt(j, diags),
                NodeKind::CheckSignature(c) => {
                    for secret in &c.secrets {
                        self.check_secret_declared(secret, diags);
                    }
                    self.check_signature_comes_first(i, diags);
                }
                NodeKind::Code(c) => self.check_code(i, c, diags),
                NodeKind::ReturnJson(r) => self.check_return(i, r, diags),
            }
        }
        self.lint_write_route(diags);
    }

    fn check_request(&self, diags: &mut Diagnostics) {
        let req = &self.flow.request;
        match &req.body {
            Some(BodySchema::Typed(t)) => check_asset_ref(&t.value, t.span, self.assets, diags),
            Some(BodySchema::Fields(fields)) => {
                for f in fields {
                    check_asset_ref(&f.type_ref.value, f.type_ref.span, self.assets, diags);
                }
            }
            None => {}
        }
        check_distinct_inputs(req, diags);
        for (what, fields, arrays) in [("query parameters", &req.query, true), ("headers", &req.headers, false)] {
            for f in fields {
                check_asset_ref(&f.type_ref.value, f.type_ref.span, self.assets, diags);
                let scalar = |t: &TypeRef| {
                    matches!(
                        t,
                        TypeRef::String | TypeRef::Number | TypeRef::Boolean | TypeRef::Enum(_)
                    )
                };
                let ok = match &f.type_ref.value {
                    TypeRef::Array(inner) => arrays && scalar(inner),
                    t => scalar(t),
                };
                if !ok {
                    diags.push(
                        Diagnostic::new(Code::InvalidType, f.type_ref.span, format!("{what} cannot be `{}`", f.type_ref.value))
                            .label("not a text value")
                            .help(format!(
                                "{what} are text: use `string`, `number`, `boolean` or `enum-value:<Name>`{}; send structured data in the body",
                                if arrays { " (or an array of those, for a repeated parameter)" } else { "" }
                            )),
                    );
                }
            }
        }
    }

    /// Check JWT: the secret it names is declared, and its claims structure exists.
    fn check_jwt(&self, j: &svc_frontend::flow::CheckJwt, diags: &mut Diagnostics) {
        if let JwtKeys::Secret(name) = &j.keys {
            self.check_secret_declared(name, diags);
        }
        if let Some(claims) = &j.claims {
            check_asset_ref(
                &TypeRef::Structure(claims.value.clone()),
                claims.span,
                self.assets,
                diags,
            );
        }
    }

    /// A Check Signature verifies the body's bytes before anything reads them: only
    /// protections come before it, on one path from Start (a node several paths reach
    /// runs in a function of its own, which the body is not handed to).
    fn check_signature_comes_first(&self, i: usize, diags: &mut Diagnostics) {
        let node = &self.flow.nodes[i];
        let mut at = i;
        loop {
            let preds = &self.graph.preds[at];
            let before = match preds.as_slice() {
                [one] => one.from,
                [] => return, // unreachable: reported as such
                _ => {
                    let id = &self.flow.nodes[at].id.value;
                    diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            node.id.span,
                            format!("Check Signature `{}` is reached by several paths (through `{id}`)", node.id.value),
                        )
                        .label("several paths")
                        .help("put the signature check first, on the one path from Start: `start:` it, then wire its `valid` to the rest of the flow"),
                    );
                    return;
                }
            };
            let Some(j) = before else { return };
            let kind = &self.flow.nodes[j].kind;
            if kind.row().category != "protection" {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        node.id.span,
                        format!(
                            "Check Signature `{}` runs after {} node `{}`",
                            node.id.value,
                            kind.type_name(),
                            self.flow.nodes[j].id.value
                        ),
                    )
                    .label("not first")
                    .help("verify a webhook before any node reads it: wire the signature check before the code nodes, after Start or other protections only"),
                );
                return;
            }
            at = j;
        }
    }

    /// A secret a node names is declared in the config.
    fn check_secret_declared(&self, name: &svc_frontend::flow::Spanned<String>, diags: &mut Diagnostics) {
        if !self.assets.secrets.iter().any(|s| s.name == name.value) {
            let declared = self.assets.secrets.iter().map(|s| s.name.as_str());
            let hint = match svc_types::assets::closest(&name.value, declared) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!(
                    "declare it in the config (`secrets: [{{ name: {} }}]` in svc.config.yaml, `defineSecret` in svc.config.ts) and set it with `svc secrets set {}`",
                    name.value, name.value
                ),
            };
            diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    name.span,
                    format!("no secret `{}` is declared", name.value),
                )
                .label("not a declared secret")
                .help(hint),
            );
        }
    }

    fn check_rate_limit(&self, i: usize, r: &svc_frontend::flow::RateLimit, diags: &mut Diagnostics) {
        let Some(facts) = self.graph.facts(i) else { return };
        let identified = facts
            .iter()
            .any(|f| matches!(f, Fact::Identity(n) if matches!(self.flow.nodes[*n].kind, NodeKind::CheckApiKey(_))))
            || (r.by.value == RateKey::User && facts.iter().any(|f| matches!(f, Fact::Identity(_))));
        let has_key_check = self
            .flow
            .nodes
            .iter()
            .any(|n| matches!(n.kind, NodeKind::CheckApiKey(_)));
        match r.by.value {
            RateKey::User if !identified => diags.push(
                Diagnostic::new(Code::RateLimitWithoutIdentity, r.by.span, "rate limiting by `user`, but no user is known here")
                    .label("no Check API Key or Check JWT has passed on every path to this node")
                    .help("the user is the owner of a valid API key or the subject of a valid token: put this Rate Limit after a Check API Key's or Check JWT's `valid` output, or limit by `ip`"),
            ),
            RateKey::ApiKey if !identified && !has_key_check => diags.push(
                Diagnostic::new(Code::RateLimitWithoutIdentity, r.by.span, "rate limiting by `api-key`, but the flow has no Check API Key")
                    .label("no API key location is known")
                    .help("add a Check API Key node (it says where the key is sent), or limit by `ip`"),
            ),
            RateKey::ApiKey if !identified => diags.push(
                Diagnostic::new(Code::RateLimitByUncheckedKey, r.by.span, "rate limiting by an API key that has not been checked yet")
                    .label("the key is not verified on every path to this node")
                    .help("a client can send a new made-up key with each request to get a fresh quota; move this Rate Limit after Check API Key's `valid` output, or also limit by `ip` before it"),
            ),
            _ => {}
        }
    }

    fn check_code(&self, i: usize, c: &CodeCall, diags: &mut Diagnostics) {
        let Some(node) = self.catalog.get(&c.node_key.value) else {
            if self.catalog.incomplete {
                // A node file could not be read or parsed, which was reported there; the
                // node may well be in it.
                return;
            }
            let keys: Vec<&str> = self.catalog.nodes.keys().copied().collect();
            let outside = self
                .catalog
                .outside_crate
                .iter()
                .find(|f| f.node_key.as_deref() == Some(c.node_key.value.as_str()));
            let hint = match svc_types::assets::closest(&c.node_key.value, keys.iter().copied()) {
                _ if outside.is_some() => {
                    let f = outside.expect("matched");
                    format!(
                        "`{}` defines it, but no `mod` makes that file part of the node crate: add `pub mod {};` to `{}`",
                        f.path, f.module, f.parent
                    )
                }
                Some(best) => format!("did you mean `{best}`?"),
                None if keys.is_empty() => "the project defines no code nodes; define one with `define_code_function_node!` in the node crate (`src/`), or in TypeScript as the default export `defineCodeFunctionNode({…})` of a module in `src/nodes/`".into(),
                None => format!("the defined nodes are: {}", svc_types::assets::listed(keys.iter().take(8))),
            };
            diags.push(
                Diagnostic::new(
                    Code::UnknownNodeKey,
                    c.node_key.span,
                    format!("unknown node key `{}`", c.node_key.value),
                )
                .label("no node has this key")
                .help(hint),
            );
            return;
        };
        let manifest = &node.manifest;
        for (pin_id, binding) in &c.inputs {
            let Some(pin) = manifest.inputs.get(&pin_id.value) else {
                let ids: Vec<&str> = manifest.inputs.data().map(|(id, _, _)| id).collect();
                let hint = if ids.is_empty() {
                    format!("`{}` has no data inputs", manifest.node_key)
                } else {
                    let intro = format_args!("the inputs of `{}` are", manifest.node_key);
                    svc_types::assets::nearest_or_all(&pin_id.value, &ids, intro)
                };
                diags.push(
                    Diagnostic::new(
                        Code::UnknownPin,
                        pin_id.span,
                        format!("`{}` has no input `{}`", manifest.node_key, pin_id.value),
                    )
                    .label("unknown input")
                    .help(hint),
                );
                continue;
            };
            let Some(pin_type) = pin.type_ref() else {
                diags.push(
                    Diagnostic::new(
                        Code::UnknownPin,
                        pin_id.span,
                        format!("`{}` is a sequence pin", pin_id.value),
                    )
                    .label("sequence pins carry no value")
                    .help("execution order is wired with `next:` on the node that runs before"),
                );
                continue;
            };
            let pin_name = format!("input `{}` of `{}`", pin_id.value, manifest.node_key);
            match binding {
                Binding::Literal(lit) => {
                    if !pin.accepts_inline_value() {
                        diags.push(
                            Diagnostic::new(
                                Code::InlineValueNotAllowed,
                                lit.span,
                                format!("{pin_name} takes no inline value"),
                            )
                            .label("inline value")
                            .help("the pin is port-only: wire it with `{ from: … }`"),
                        );
                        continue;
                    }
                    if lit.is_null() {
                        if !pin.optional && pin.default.is_none() {
                            diags.push(
                                Diagnostic::new(
                                    Code::LiteralMismatch,
                                    lit.span,
                                    format!("{pin_name} is required and cannot be null"),
                                )
                                .label("null")
                                .help(format!("give a `{pin_type}` value")),
                            );
                        }
                        continue;
                    }
                    // The pin's own constraints are named in the message; a structure
                    // field's are followed by the pin the literal is for.
                    let (problem, for_pin) = match check_literal(lit, pin_type, self.assets) {
                        Err(p) => (Some(p), true),
                        Ok(()) => (
                            check_constraints(lit, pin_type, &pin.constraints, &pin_name).err(),
                            false,
                        ),
                    };
                    if let Some(p) = problem {
                        let label = p.label();
                        let message = if for_pin {
                            format!("{}, for {pin_name}", p.message)
                        } else {
                            p.message
                        };
                        diags.push(Diagnostic::new(p.code, p.node.span, message).label(label).help(p.hint));
                    }
                }
                Binding::Wire(r) => self.check_wire(i, r, pin, pin_type, &pin_name, diags),
            }
        }
        let Some(unreadable) = &c.unreadable_inputs else { return };
        for (id, pin, ty) in manifest.inputs.data() {
            if pin.is_required_input()
                && !c.inputs.iter().any(|(p, _)| p.value == id)
                && !unreadable.iter().any(|u| u == id)
            {
                diags.push(
                    Diagnostic::new(
                        Code::RequiredInputUnwired,
                        self.flow.nodes[i].id.span,
                        format!("required input `{id}` of `{}` is not given", manifest.node_key),
                    )
                    .label(format!("`{id}` is missing"))
                    .help(format!(
                        "add `{id}: {{ from: … }}` (a `{ty}` value) under `inputs:`, or an inline value"
                    )),
                );
            }
        }
    }

    fn check_return(&self, i: usize, r: &ReturnJson, diags: &mut Diagnostics) {
        if let Some(body) = &r.body {
            self.template(body, i, diags);
        }
        for (name, value) in &r.headers {
            if matches!(
                name.value.as_str(),
                "content-length" | "content-type" | "transfer-encoding" | "connection" | "set-cookie"
            ) {
                let help = if name.value == "set-cookie" {
                    "routes answer API clients, which authenticate with API keys rather than cookies, so svc sets none; remove this header"
                } else {
                    "Return JSON sets the headers of the body and the connection itself; remove this header"
                };
                let message = if name.value == "set-cookie" {
                    "a route does not set `set-cookie`".to_string()
                } else {
                    format!("the `{}` header is set by the server", name.value)
                };
                diags.push(
                    Diagnostic::new(Code::InvalidValue, name.span, message)
                        .label("reserved header")
                        .help(help),
                );
                continue;
            }
            match value {
                Binding::Literal(lit) => {
                    if !matches!(
                        lit.value,
                        Value::String(_) | Value::Int(_) | Value::Float(_) | Value::Bool(_)
                    ) {
                        diags.push(
                            Diagnostic::new(Code::LiteralMismatch, lit.span, "a header value must be text")
                                .label("not text")
                                .help("write a string, number or boolean"),
                        );
                    }
                }
                Binding::Wire(w) => self.check_header_wire(i, w, diags),
            }
        }
    }

    /// A wire into a header of Return JSON `i`: known on every path to it, and text
    /// (a string, number, boolean or enum value). The Builder checks a wire it draws here.
    pub fn check_header_wire(&self, i: usize, w: &Reference, diags: &mut Diagnostics) {
        if let Some(vt) = self.reference(w, Some(i), diags)
            && !matches!(
                vt.ty,
                TypeRef::String | TypeRef::Number | TypeRef::Boolean | TypeRef::Enum(_)
            )
        {
            diags.push(
                Diagnostic::new(
                    Code::TypeMismatch,
                    w.span,
                    format!("`{}` is `{}`, but a header value must be text", w.text, vt.ty),
                )
                .label("not text")
                .help("wire a string, number, boolean or enum value; put structured data in the body"),
            );
        }
    }

    fn template(&self, t: &Template, consumer: usize, diags: &mut Diagnostics) {
        match t {
            Template::Literal(_) => {}
            Template::Wire(r) => {
                self.reference(r, Some(consumer), diags);
            }
            Template::Object(fields, _) => fields.iter().for_each(|(_, t)| self.template(t, consumer, diags)),
            Template::Array(items, _) => items.iter().for_each(|t| self.template(t, consumer, diags)),
        }
    }

    /// The type of a reference, after checking that it names something that exists and
    /// that has run on every path to `consumer`.
    pub fn reference(&self, r: &Reference, consumer: Option<usize>, diags: &mut Diagnostics) -> Option<ValueType> {
        let (base, segments): (ValueType, &[String]) = match &r.root {
            RefRoot::Request(part) => self.request_base(r, *part, diags)?,
            RefRoot::Node(id) => {
                let Some(&j) = self.graph.index.get(&id.value) else {
                    if !self.flow.is_broken(&id.value) {
                        let ids: Vec<&str> = self.flow.nodes.iter().map(|n| n.id.value.as_str()).collect();
                        let hint = match svc_types::assets::closest(&id.value, ids.iter().copied()) {
                            Some(best) => format!("did you mean `{best}`?"),
                            None => "a reference starts with `request` or the id of a node in this flow".into(),
                        };
                        diags.push(
                            Diagnostic::new(
                                Code::UnknownNodeId,
                                r.span,
                                format!("`{}` refers to a node `{}` that is not in this flow", r.text, id.value),
                            )
                            .label("unknown node")
                            .help(hint),
                        );
                    }
                    return None;
                };
                let (base, fact, rest) = self.node_output(r, j, diags)?;
                if let Some(consumer) = consumer {
                    let available = self.graph.facts(consumer).is_none_or(|f| f.contains(&fact));
                    if !available || consumer == j {
                        let what = match fact {
                            Fact::Outputs(_) => format!("`{}` has run", id.value),
                            Fact::Failure(_) => format!("`{}` has failed", id.value),
                            Fact::Identity(n) if matches!(self.flow.nodes[n].kind, NodeKind::CheckJwt(_)) => {
                                format!("`{}` has found a valid token", id.value)
                            }
                            Fact::Identity(_) => format!("`{}` has found a valid key", id.value),
                            Fact::Authenticated(_) => format!("`{}` has let the request through", id.value),
                        };
                        diags.push(
                            Diagnostic::new(Code::NotRunOnEveryPath, r.span, format!("`{}` is used where it is not known that {what}", r.text))
                                .label("not available on every path to here")
                                .with_secondary(self.flow.nodes[j].id.span, "defined here")
                                .help("a node can only use values of nodes that ran on every path from Start to it; move the use after that node, or wire the value along every path"),
                        );
                        return None;
                    }
                }
                (base, rest)
            }
        };
        match walk(base, segments, self.assets) {
            Walk::Ok(vt) => Some(vt),
            Walk::NoField(_, message, hint) => {
                diags.push(
                    Diagnostic::new(Code::UnknownFieldPath, r.span, format!("in `{}`: {message}", r.text))
                        .label("no such field")
                        .help(hint),
                );
                None
            }
        }
    }

    fn request_base<'r>(
        &self,
        r: &'r Reference,
        part: RequestPart,
        diags: &mut Diagnostics,
    ) -> Option<(ValueType, &'r [String])> {
        let req = &self.flow.request;
        let unknown = |what: String, hint: String, diags: &mut Diagnostics| {
            unknown_reference(
                diags,
                (Code::UnknownRequestField, "not declared in `request`"),
                r,
                what,
                hint,
            )
        };
        // A declared field's type, and the declared name closest to an unknown one.
        let declared = |f: &FieldSchema| ValueType {
            ty: f.type_ref.value.clone(),
            optional: !f.required,
            constraints: f.constraints.clone(),
        };
        let closest = |name: &str, fields: &[FieldSchema]| {
            svc_types::assets::closest(name, fields.iter().map(|f| f.name.value.as_str())).map(str::to_string)
        };
        match part {
            RequestPart::Body => match &req.body {
                None => unknown(
                    format!("`{}` reads the request body, but the flow declares none", r.text),
                    "declare the body under `request:`, for example `body: object:CreateOrder`".into(),
                    diags,
                ),
                Some(BodySchema::Typed(t)) => Some((ValueType::required(t.value.clone()), &r.path[..])),
                Some(BodySchema::Fields(fields)) => {
                    let Some(first) = r.path.first() else {
                        return Some((ValueType::required(TypeRef::Object), &r.path[..]));
                    };
                    match fields.iter().find(|f| &f.name.value == first) {
                        Some(f) => Some((declared(f), &r.path[1..])),
                        None => {
                            let hint = match closest(first, fields) {
                                Some(best) => format!("did you mean `request.body.{best}`?"),
                                None => "declare the field under `request.body`".into(),
                            };
                            unknown(format!("the request body has no field `{first}`"), hint, diags)
                        }
                    }
                }
            },
            RequestPart::Query | RequestPart::Headers => {
                let fields = if part == RequestPart::Query {
                    &req.query
                } else {
                    &req.headers
                };
                let name = if part == RequestPart::Headers {
                    r.path[0].to_ascii_lowercase()
                } else {
                    r.path[0].clone()
                };
                match fields.iter().find(|f| f.name.value == name) {
                    Some(f) => Some((declared(f), &r.path[1..])),
                    None => {
                        let hint = match closest(&name, fields) {
                            Some(best) => format!("did you mean `request.{}.{best}`?", part.as_str()),
                            None => format!(
                                "declare it under `request.{}`: `{name}: {{ type: string, required: false }}`",
                                part.as_str()
                            ),
                        };
                        unknown(
                            format!(
                                "the request declares no {} `{name}`",
                                if part == RequestPart::Query {
                                    "query parameter"
                                } else {
                                    "header"
                                }
                            ),
                            hint,
                            diags,
                        )
                    }
                }
            }
            RequestPart::Params => {
                let name = &r.path[0];
                if req.params.iter().any(|p| &p.value == name) {
                    Some((ValueType::required(TypeRef::String), &r.path[1..]))
                } else {
                    let hint = if req.params.is_empty() {
                        format!("path parameters come from the route: `route: items/{{{name}}}`")
                    } else {
                        format!(
                            "the route's parameters are: {}",
                            req.params
                                .iter()
                                .map(|p| format!("`{}`", p.value))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    };
                    unknown(format!("the route has no path parameter `{name}`"), hint, diags)
                }
            }
        }
    }

    /// The base type, required fact and remaining path of a reference to node `j`.
    fn node_output<'r>(
        &self,
        r: &'r Reference,
        j: usize,
        diags: &mut Diagnostics,
    ) -> Option<(ValueType, Fact, &'r [String])> {
        let node = &self.flow.nodes[j];
        let first = r.path.first()?;
        let no_output = |msg: String, hint: String, diags: &mut Diagnostics| {
            unknown_reference(diags, (Code::UnknownPin, "no such output"), r, msg, hint)
        };
        match &node.kind {
            NodeKind::Code(c) => {
                let info = self.catalog.get(&c.node_key.value)?; // unknown keys are reported at the node
                let outputs = &info.manifest.outputs;
                match outputs.get(first) {
                    Some(pin) => match pin.type_ref() {
                        Some(t) => Some((
                            ValueType {
                                ty: t.clone(),
                                optional: pin.optional,
                                constraints: pin.constraints.clone(),
                            },
                            Fact::Outputs(j),
                            &r.path[1..],
                        )),
                        None => no_output(
                            format!("`{first}` is a sequence output of `{}`", node.id.value),
                            "sequence outputs carry no value".into(),
                            diags,
                        ),
                    },
                    None if first == "failure" => {
                        let field = r.path.get(1).map(String::as_str);
                        match field {
                            Some("message") => {
                                Some((ValueType::required(TypeRef::String), Fact::Failure(j), &r.path[2..]))
                            }
                            Some("code") => {
                                Some((ValueType::new(TypeRef::String, true), Fact::Failure(j), &r.path[2..]))
                            }
                            _ => no_output(
                                format!("`{}`: a failure has a `message` and a `code`", r.text),
                                format!(
                                    "write `{}.failure.message` or `{}.failure.code`",
                                    node.id.value, node.id.value
                                ),
                                diags,
                            ),
                        }
                    }
                    None => {
                        let ids: Vec<&str> = outputs.data().map(|(id, _, _)| id).collect();
                        let hint = match svc_types::assets::closest(first, ids.iter().copied()) {
                            Some(best) => format!("did you mean `{}.{best}`?", node.id.value),
                            None => format!(
                                "the outputs of `{}` are: {}{}",
                                c.node_key.value,
                                svc_types::assets::listed(&ids),
                                if c.on_fail.is_some() {
                                    ", and `failure` on its `on_fail` path"
                                } else {
                                    ""
                                }
                            ),
                        };
                        no_output(format!("`{}` has no output `{first}`", c.node_key.value), hint, diags)
                    }
                }
            }
            NodeKind::CheckApiKey(_) if API_KEY_OUTPUTS.contains(&first.as_str()) => {
                Some((ValueType::required(TypeRef::String), Fact::Identity(j), &r.path[1..]))
            }
            NodeKind::CheckApiKey(_) => no_output(
                format!("Check API Key node `{}` has no output `{first}`", node.id.value),
                format!(
                    "its data outputs are {} (on its `valid` path)",
                    svc_types::assets::listed(API_KEY_OUTPUTS)
                ),
                diags,
            ),
            NodeKind::CheckJwt(_) if first == "subject" => {
                Some((ValueType::required(TypeRef::String), Fact::Identity(j), &r.path[1..]))
            }
            NodeKind::CheckJwt(t) if first == "claims" => match &t.claims {
                Some(structure) => Some((
                    ValueType::required(TypeRef::Structure(structure.value.clone())),
                    Fact::Identity(j),
                    &r.path[1..],
                )),
                None => no_output(
                    format!("Check JWT node `{}` reads no claims structure", node.id.value),
                    format!(
                        "declare the claims you read as a structure in the config and name it on the node: `claims: AccessClaims`; then `{}.claims.<field>` has its type",
                        node.id.value
                    ),
                    diags,
                ),
            },
            NodeKind::CheckJwt(_) => no_output(
                format!("Check JWT node `{}` has no output `{first}`", node.id.value),
                "its data outputs are `subject` and `claims` (on its `valid` path)".into(),
                diags,
            ),
            other => no_output(
                format!("{} node `{}` has no data outputs", other.type_name(), node.id.value),
                "only code nodes, Check API Key and Check JWT produce values".into(),
                diags,
            ),
        }
    }

    /// W0701: a write route whose successful responses do not all require a valid key.
    fn lint_write_route(&self, diags: &mut Diagnostics) {
        let Some(write) = self.flow.methods.iter().find(|m| m.value.is_write()) else {
            return;
        };
        for (i, node) in self.flow.nodes.iter().enumerate() {
            let NodeKind::ReturnJson(r) = &node.kind else { continue };
            if !(200..300).contains(&r.status.value) {
                continue;
            }
            let Some(facts) = self.graph.facts(i) else { continue };
            if !facts
                .iter()
                .any(|f| matches!(f, Fact::Identity(_) | Fact::Authenticated(_)))
            {
                diags.push(
                    Diagnostic::new(Code::WriteRouteWithoutApiKey, write.span, format!("{} route `{}` can succeed without an API key", write.value.as_str(), self.flow.route.value))
                        .label("a write method")
                        .with_secondary(node.id.span, "reachable without a valid key")
                        .help("routes that change state should authenticate the caller: add a Check API Key node before this response (spec §5.4), or Check JWT for a user's token, or Check Signature for a provider's webhook"),
                );
                return;
            }
        }
    }
}

/// Reports a reference to something that is not there (`code` and its label), and gives
/// the caller's answer: no type.
fn unknown_reference<T>(
    diags: &mut Diagnostics,
    (code, label): (Code, &str),
    r: &Reference,
    message: String,
    hint: String,
) -> Option<T> {
    diags.push(Diagnostic::new(code, r.span, message).label(label).help(hint));
    None
}

/// The span of a flow's route, for cross-flow diagnostics.
pub fn route_span(flow: &Flow) -> Span {
    flow.route.span
}

/// Each request input becomes a field of the route's generated `Request` (query
/// parameters `query_<snake>`, headers `header_<snake>`, body fields `<snake>`), so two
/// names that differ only in punctuation or case would be one field; and HTTP header
/// names are case-insensitive, so two header inputs differing in case are one header.
fn check_distinct_inputs(req: &svc_frontend::flow::RequestSchema, diags: &mut Diagnostics) {
    use svc_types::case::to_snake;
    let body_fields: &[svc_frontend::flow::FieldSchema] = match &req.body {
        Some(BodySchema::Fields(fields)) => fields,
        _ => &[],
    };
    for (what, fields) in [
        ("query parameter", &req.query[..]),
        ("header", &req.headers[..]),
        ("body field", body_fields),
    ] {
        let mut seen: std::collections::HashMap<String, &svc_frontend::flow::FieldSchema> =
            std::collections::HashMap::new();
        for f in fields {
            let name = &f.name.value;
            let rust = to_snake(name);
            let Some(first) = seen.get(&rust) else {
                seen.insert(rust, f);
                continue;
            };
            let first_name = &first.name.value;
            let (message, label, help) = if what == "header" && name.eq_ignore_ascii_case(first_name) {
                (
                    format!("the header `{name}` is declared twice (header names are read without case)"),
                    "HTTP header names are case-insensitive: both name one header".to_string(),
                    format!("declare the header once, as `{first_name}`"),
                )
            } else {
                (
                    format!("{what}s `{first_name}` and `{name}` cannot both be inputs of this route"),
                    format!("both become the Rust field `{rust}` of the route's request"),
                    "rename one of them so that the names differ in more than `-`, `_`, `.` and case".to_string(),
                )
            };
            diags.push(
                Diagnostic::new(Code::DuplicateRequestInput, f.name.span, message)
                    .label(label)
                    .with_secondary(first.name.span, format!("`{first_name}` is here"))
                    .help(help),
            );
        }
    }
}
