//! One route module: `State` (per-node configuration built once), the route's typed
//! request inputs, `handle` (the flow as straight-line code), one `async fn` per merge
//! point, and the CORS preflight answer.

use super::validate;
use super::values::{self, Names, access, header_field, literal, param_field, query_field, wire_input};
use crate::lower::{BodyIr, Cont, HeaderIr, InputIr, LimitKeyIr, Local, NodeIr, ParamIr, RouteIr, TemplateIr};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};
use std::collections::{BTreeMap, BTreeSet};
use svc_frontend::flow::{JwtKeys, KeyLocation, OnStoreError};
use svc_frontend::rust_types::{ident, rust_type};
use svc_types::{Assets, TypeRef};

/// Local names of a route: one per node, unique even when node ids differ only in
/// `-` versus `_`.
struct RouteNames {
    base: BTreeMap<usize, String>,
}

impl RouteNames {
    fn new(route: &RouteIr, ids: &[(usize, String)]) -> Self {
        let _ = route;
        let mut used = std::collections::BTreeSet::new();
        let mut base = BTreeMap::new();
        for (i, id) in ids {
            let mut name = svc_types::case::to_snake(id);
            while !used.insert(name.clone()) {
                name.push('_');
            }
            base.insert(*i, name);
        }
        RouteNames { base }
    }

    fn name(&self, node: usize) -> &str {
        self.base.get(&node).map(String::as_str).unwrap_or("node")
    }
}

impl Names for RouteNames {
    fn output(&self, node: usize) -> Ident {
        format_ident!("out_{}", self.name(node))
    }
    fn failure(&self, node: usize) -> Ident {
        format_ident!("fail_{}", self.name(node))
    }
    fn identity(&self, node: usize) -> Ident {
        format_ident!("key_{}", self.name(node))
    }
}

/// The Rust path of a used code node: `crate::nodes::<alias>`.
pub fn node_alias(key: &str) -> Ident {
    format_ident!("{}", svc_types::case::to_snake(&key.replace('.', "_")))
}

fn field_ident(prefix: &str, id: &str) -> Ident {
    format_ident!("{prefix}_{}", svc_types::case::to_snake(id))
}

fn status_expr(status: u16) -> TokenStream {
    let named = match status {
        200 => Some("OK"),
        201 => Some("CREATED"),
        202 => Some("ACCEPTED"),
        204 => Some("NO_CONTENT"),
        400 => Some("BAD_REQUEST"),
        401 => Some("UNAUTHORIZED"),
        403 => Some("FORBIDDEN"),
        404 => Some("NOT_FOUND"),
        409 => Some("CONFLICT"),
        422 => Some("UNPROCESSABLE_ENTITY"),
        429 => Some("TOO_MANY_REQUESTS"),
        500 => Some("INTERNAL_SERVER_ERROR"),
        503 => Some("SERVICE_UNAVAILABLE"),
        _ => None,
    };
    match named {
        Some(n) => {
            let n = format_ident!("{n}");
            quote!(StatusCode::#n)
        }
        None => quote!(StatusCode::from_u16(#status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)),
    }
}

/// The scalar kind of a query parameter or header type.
fn scalar(ty: &TypeRef) -> TokenStream {
    match ty {
        TypeRef::Number => quote!(Scalar::Number),
        TypeRef::Boolean => quote!(Scalar::Boolean),
        TypeRef::Enum(_) => quote!(Scalar::Enum),
        TypeRef::Array(inner) => scalar(inner),
        _ => quote!(Scalar::String),
    }
}

pub struct RouteEmitter<'a> {
    pub route: &'a RouteIr,
    pub assets: &'a Assets,
    /// The structures with field constraints to check (`ProjectIr::validated`).
    pub validated: &'a BTreeSet<String>,
    /// Node index → (key of the code node) for code nodes, to name their types.
    pub code_keys: BTreeMap<usize, String>,
    names: RouteNames,
}

impl<'a> RouteEmitter<'a> {
    pub fn new(
        route: &'a RouteIr,
        assets: &'a Assets,
        validated: &'a BTreeSet<String>,
        ids: &[(usize, String)],
        code_keys: BTreeMap<usize, String>,
    ) -> Self {
        RouteEmitter {
            route,
            assets,
            validated,
            code_keys,
            names: RouteNames::new(route, ids),
        }
    }

    fn node_path(&self, index: usize) -> TokenStream {
        let alias = node_alias(&self.code_keys[&index]);
        quote!(crate::nodes::#alias)
    }

    /// The checks of the request's field constraints, in `Req::parse`; empty when the
    /// route's inputs have none.
    fn request_checks(&self) -> TokenStream {
        let req = &self.route.request;
        let body = match &req.body {
            Some(BodyIr::Typed(t)) => Some((t, &[][..])),
            Some(BodyIr::Fields(fields)) => Some((&TypeRef::Object, fields.as_slice())),
            None => None,
        };
        let query: Vec<_> = req.query.iter().map(|p| (query_field(&p.name), p)).collect();
        let headers: Vec<_> = req.headers.iter().map(|p| (header_field(&p.name), p)).collect();
        validate::request_checks(body, &query, &headers, self.validated)
    }

    /// Whether some code node of the route has inputs or outputs checked against
    /// field constraints.
    fn checks_node_values(&self) -> bool {
        let mut any = false;
        self.route.for_each_node(&mut |n| {
            if let NodeIr::Code {
                checked_inputs,
                checked_outputs,
                ..
            } = n
            {
                any |= !checked_inputs.is_empty() || !checked_outputs.is_empty();
            }
        });
        any
    }

    fn has_request(&self) -> bool {
        // A Check Signature reads the body's bytes through the request's inputs.
        !self.route.request.is_empty() || !self.route.signatures.is_empty()
    }

    pub fn module(&self) -> TokenStream {
        let r = self.route;
        let doc = format!(
            " @generated by svc from `{}`: {} {}. Do not edit: change the flow and run `svc emit` again.",
            r.file,
            r.methods.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", "),
            r.axum_path
        );
        let route = &r.route;
        let path = &r.axum_path;
        let state = self.state();
        let keys = self.key_locations();
        let request = self.request_inputs();
        let handle = self.handle();
        let blocks = r.blocks.iter().map(|b| self.block(b));
        let preflight = self.preflight();
        // Only a route that checks field constraints names what checks them.
        let validate = if !self.request_checks().is_empty() || self.checks_node_values() {
            validate::imports()
        } else {
            quote!()
        };
        quote! {
            #![doc = #doc]
            #![allow(unused_mut, unused_variables, unused_imports, clippy::all)]

            use ::svc_runtime::__private::axum::response::Response;
            use ::svc_runtime::__private::http::StatusCode;
            use ::svc_runtime::apikey::KeyLocation;
            use ::svc_runtime::body::Scalar;
            use ::svc_runtime::call::{Call, Lazy, RequestInputs};
            use ::svc_runtime::json::JsonWriter;
            use ::svc_runtime::ratelimit::LimitKey;
            use ::svc_runtime::{ApiError, Exchange};
            #validate

            /// The route, as written in the flow.
            pub const ROUTE: &str = #route;
            /// The path it is served at.
            pub const PATH: &str = #path;

            #state
            #keys
            #request
            #handle
            #(#blocks)*
            #preflight
        }
    }

    /// Every node of the route with its type's name (its counters count that type's
    /// outcomes), and every status the
    /// route can answer with (its Return JSON nodes, plus what the runtime answers: 400
    /// for bad input, 413 for a body over the limit, 500 for a node failure).
    fn inventory(&self) -> (Vec<(String, &'static str)>, BTreeSet<u16>) {
        let mut nodes = BTreeMap::new();
        let mut statuses = BTreeSet::from([400, 500]);
        // A Check Signature reads the body whether or not the route declares one.
        if self.route.request.body.is_some() || !self.route.signatures.is_empty() {
            statuses.insert(413);
        }
        self.route.for_each_node(&mut |n| match n {
            NodeIr::Return { status, .. } => {
                statuses.insert(*status);
            }
            _ => {
                nodes.insert(n.id().to_string(), n.row().type_name);
            }
        });
        (nodes.into_iter().collect(), statuses)
    }

    fn state(&self) -> TokenStream {
        let r = self.route;
        let mut fields = Vec::new();
        let mut inits = Vec::new();
        let (nodes, statuses) = self.inventory();
        for (id, kind) in &nodes {
            let f = field_ident("node", id);
            fields.push(quote!(#f: ::svc_runtime::metrics::NodeCounters));
            inits.push(quote!(#f: metrics.node(#id, #kind)));
        }
        for o in &r.origins {
            let f = field_ident("origin", &o.node);
            let origins = &o.allowed_origins;
            let missing = o.missing_origin_allowed;
            let methods: Vec<&str> = r.methods.iter().map(|m| m.as_str()).collect();
            let allowed_headers = &o.allowed_headers;
            let expose_headers = &o.expose_headers;
            let credentials = o.allow_credentials;
            let max_age = match o.max_age {
                Some(s) => quote!(Some(#s)),
                None => quote!(None),
            };
            let expect = format!("svc check validated the origins of node `{}`", o.node);
            fields.push(quote!(#f: ::svc_runtime::cors::OriginPolicy));
            inits.push(quote! {
                #f: ::svc_runtime::cors::OriginPolicy::new(::svc_runtime::cors::OriginConfig {
                    allowed_origins: &[#(#origins),*],
                    missing_origin_allowed: #missing,
                    methods: &[#(#methods),*],
                    allowed_headers: &[#(#allowed_headers),*],
                    expose_headers: &[#(#expose_headers),*],
                    allow_credentials: #credentials,
                    max_age_seconds: #max_age,
                })
                .expect(#expect)
            });
        }
        for l in &r.limiters {
            let f = field_ident("limiter", &l.node);
            let node = &l.node;
            let limit = u32::try_from(l.limit).unwrap_or(u32::MAX);
            let window = l.window_seconds;
            let on_store_error = match l.on_store_error {
                None => quote!(None),
                Some(p) => {
                    let variant = format_ident!(
                        "{}",
                        match p {
                            OnStoreError::Open => "Open",
                            OnStoreError::Closed => "Closed",
                            OnStoreError::Local => "Local",
                        }
                    );
                    quote!(Some(::svc_runtime::ratelimit::FailurePolicy::#variant))
                }
            };
            fields.push(quote!(#f: ::svc_runtime::ratelimit::RateLimiter));
            inits.push(quote! {
                #f: config.rate_limiter(
                    ROUTE,
                    #node,
                    ::svc_runtime::ratelimit::Quota::per(#limit, ::std::time::Duration::from_secs(#window)),
                    #on_store_error,
                )
            });
        }
        for t in &r.tokens {
            let f = field_ident("jwt", &t.node);
            let issuer = &t.issuer;
            let audiences = &t.audiences;
            let algorithms = &t.algorithms;
            let leeway = t.leeway;
            let scopes = &t.required_scopes;
            let claims = &t.required_claims;
            let claim_fields = &t.claim_fields;
            let keys = match &t.keys {
                JwtKeys::Discovery(url) => quote!(Discovery(#url)),
                JwtKeys::JwksUrl(url) => {
                    let url = &url.value;
                    quote!(JwksUrl(#url))
                }
                JwtKeys::Inline(set) => quote!(Inline(#set)),
                JwtKeys::Secret(name) => {
                    let name = &name.value;
                    quote!(Secret(#name))
                }
            };
            fields.push(quote!(#f: ::svc_runtime::jwt::JwtCheck));
            inits.push(quote! {
                #f: config.jwt_check(::svc_runtime::jwt::JwtSettings {
                    issuer: #issuer,
                    audiences: &[#(#audiences),*],
                    algorithms: &[#(#algorithms),*],
                    leeway: #leeway,
                    required_scopes: &[#(#scopes),*],
                    required_claims: &[#(#claims),*],
                    claim_fields: &[#(#claim_fields),*],
                    keys: ::svc_runtime::jwt::KeySource::#keys,
                })
            });
        }
        for c in &r.signatures {
            let f = field_ident("signature", &c.node);
            let (preset, secrets, tolerance) = (&c.preset, &c.secrets, c.tolerance_seconds);
            fields.push(quote!(#f: ::svc_runtime::signature::SignatureCheck));
            inits.push(quote!(#f: config.signature_check(#preset, &[#(#secrets),*], #tolerance)));
        }
        let methods: Vec<&str> = r.methods.iter().map(|m| m.as_str()).collect();
        let statuses = statuses.iter().map(|s| unsuffixed(*s));
        quote! {
            /// Per-node configuration and metric series, built once at start-up.
            pub struct State {
                metrics: ::svc_runtime::metrics::RouteMetrics,
                #(#fields,)*
            }

            impl State {
                pub fn new(config: &::svc_runtime::app::RouteConfig) -> Self {
                    let metrics = config.metrics.route(ROUTE, &[#(#methods),*], &[#(#statuses),*]);
                    State { #(#inits,)* metrics }
                }
            }
        }
    }

    fn key_locations(&self) -> TokenStream {
        let items = self.route.key_locations.iter().map(|(id, loc)| {
            let name = format_ident!("KEY_{}", svc_types::case::to_shouty_snake(id));
            let value = location_expr(loc);
            let doc = if self.token_check(id).is_some() {
                format!(" Where Check JWT `{id}` reads the token.")
            } else {
                format!(" Where Check API Key `{id}` reads the key.")
            };
            quote!(#[doc = #doc] static #name: KeyLocation = #value;)
        });
        quote!(#(#items)*)
    }

    /// The Check JWT node `node_id`'s settings, if it is one.
    fn token_check(&self, node_id: &str) -> Option<&crate::lower::TokenCheckIr> {
        self.route.tokens.iter().find(|t| t.node == node_id)
    }

    /// The type a Check JWT node's claims are read as.
    fn claims_type(&self, t: &crate::lower::TokenCheckIr) -> TokenStream {
        match &t.claims {
            Some(structure) => rust_type(&TypeRef::Structure(structure.clone()), &values::paths()),
            None => quote!(::svc_runtime::jwt::NoClaims),
        }
    }

    fn key_location_ident(&self, node_id: &str) -> Ident {
        format_ident!("KEY_{}", svc_types::case::to_shouty_snake(node_id))
    }

    /// The `Req` struct of the route's typed request inputs, and how it is parsed.
    fn request_inputs(&self) -> TokenStream {
        if !self.has_request() {
            return quote!();
        }
        let paths = values::paths();
        let req = &self.route.request;
        let mut fields = Vec::new();
        let mut parses = Vec::new();
        let mut extra = TokenStream::new();
        match &req.body {
            Some(BodyIr::Typed(t)) => {
                let ty = rust_type(t, &paths);
                fields.push(quote!(pub body: #ty));
                parses.push(quote!(body: ::svc_runtime::body::parse_json(body)?));
            }
            Some(BodyIr::Fields(body_fields)) => {
                let members = body_fields.iter().map(|f| {
                    let fi = ident(&svc_types::case::to_snake(&f.name));
                    let ty = rust_type(&f.ty, &paths);
                    let wire = &f.name;
                    if f.required {
                        quote!(#[serde(rename = #wire)] pub #fi: #ty)
                    } else {
                        quote!(#[serde(rename = #wire, default, skip_serializing_if = "::core::option::Option::is_none")] pub #fi: Option<#ty>)
                    }
                });
                extra = quote! {
                    /// The request body of this route.
                    #[derive(Debug, Clone, ::svc_runtime::__private::serde::Deserialize, ::svc_runtime::__private::serde::Serialize)]
                    #[serde(crate = "::svc_runtime::__private::serde", remote = "Self", deny_unknown_fields)]
                    pub struct Body {
                        #(#members,)*
                    }
                    ::svc_runtime::__private::svc_sdk::__object_serde!(Body, ::svc_runtime::__private::serde);
                };
                fields.push(quote!(pub body: Body));
                parses.push(quote!(body: ::svc_runtime::body::parse_json(body)?));
            }
            None => {}
        }
        let needs_query = !req.query.is_empty();
        let checks = self.request_checks();
        for p in &req.query {
            let f = query_field(&p.name);
            let (ty, parse) = param_parse(p, &paths, quote!(query), "query");
            fields.push(quote!(pub #f: #ty));
            parses.push(quote!(#f: #parse));
        }
        for p in &req.headers {
            let f = header_field(&p.name);
            let name = &p.name;
            let kind = scalar(&p.ty);
            let t = rust_type(&p.ty, &paths);
            let read = quote!(::svc_runtime::body::header_value::<#t>(&ex.headers, #name, #kind)?);
            if p.required {
                fields.push(quote!(pub #f: #t));
                parses.push(quote!(#f: ::svc_runtime::body::required(#read, "header", #name)?));
            } else {
                fields.push(quote!(pub #f: Option<#t>));
                parses.push(quote!(#f: #read));
            }
        }
        for p in &req.params {
            let f = param_field(p);
            fields.push(quote!(pub #f: String));
            parses.push(quote!(#f: ::svc_runtime::call::path_param(params, #p)?));
        }
        let has_body = req.body.is_some();
        let parse_and_check = if checks.is_empty() {
            quote!(Ok(Req { #(#parses,)* }))
        } else {
            quote! {
                let req = Req { #(#parses,)* };
                svc_comment!("The field constraints, before any code node runs.");
                #checks
                Ok(req)
            }
        };
        let query = if needs_query {
            quote!(let query = ::svc_runtime::body::Query::parse(ex.uri.query());)
        } else {
            quote!()
        };
        quote! {
            #extra

            /// The typed request inputs of this route, parsed once, after the protections.
            pub struct Req {
                #(#fields,)*
            }

            impl RequestInputs for Req {
                const HAS_BODY: bool = #has_body;

                fn parse(ex: &Exchange<'_>, params: &[(String, String)], body: &[u8]) -> Result<Self, ApiError> {
                    #query
                    #parse_and_check
                }
            }
        }
    }

    fn handle(&self) -> TokenStream {
        let body = self.node(&self.route.entry);
        // Keys in a custom header or the query are hidden from `ctx.request` before any
        // node runs, not only once their check has (the server always hides `X-API-Key`
        // and `Authorization`).
        let custom: Vec<Ident> = self
            .route
            .key_locations
            .iter()
            .filter(|(_, loc)| matches!(loc, KeyLocation::Header(_) | KeyLocation::Query(_)))
            .map(|(id, _)| self.key_location_ident(id))
            .collect();
        let hidden = if custom.is_empty() {
            quote!()
        } else {
            quote!(ex.hide_credentials(&[#(&#custom),*]);)
        };
        let (request, keep) = if self.has_request() {
            let binding = match self.route.signatures.is_empty() {
                true => quote!(request),
                false => quote!(mut request),
            };
            (quote!(let #binding = Lazy::<Req>::new(body, params);), quote!())
        } else {
            (
                quote! {
                    let _ = params;
                    let unread = ::svc_runtime::body::DrainOnDrop::new(body);
                },
                // Read when the route is done, so that the connection stays open.
                quote!(let _unread = unread;),
            )
        };
        quote! {
            /// Runs the flow for one request.
            ///
            /// The request is taken apart before the future is made, so that the future
            /// holds each part once (docs/codegen.md, "The request future").
            pub fn handle(state: &'static State, call: Call) -> impl ::std::future::Future<Output = Response> + Send + 'static {
                let Call { rt, peer, params, request } = call;
                let (parts, body) = request.into_parts();
                let mut ex = Exchange::new(rt, &state.metrics, parts, peer);
                #hidden
                #request
                async move {
                    #keep
                    #body
                }
            }
        }
    }

    fn local_param(&self, local: &Local) -> TokenStream {
        match local {
            Local::Request => quote!(request: Lazy<Req>),
            Local::Output(n) => {
                let name = self.names.output(*n);
                let path = self.node_path(*n);
                quote!(#name: &#path::Outputs)
            }
            Local::Failure(n) => {
                let name = self.names.failure(*n);
                quote!(#name: &::svc_runtime::NodeError)
            }
            Local::Identity(n) => {
                let name = self.names.identity(*n);
                match self.route.tokens.iter().find(|t| t.index == *n) {
                    Some(t) => {
                        let claims = self.claims_type(t);
                        quote!(#name: &::svc_runtime::jwt::Verified<#claims>)
                    }
                    None => quote!(#name: &::svc_runtime::apikey::Identity),
                }
            }
        }
    }

    /// `req_bound`: whether the request was parsed here already (it is then passed on
    /// parsed).
    fn local_arg(&self, local: &Local, req_bound: bool) -> TokenStream {
        match local {
            Local::Request if req_bound => quote!(Lazy::ready(req)),
            Local::Request => quote!(request),
            Local::Output(n) => {
                let name = self.names.output(*n);
                quote!(&#name)
            }
            Local::Failure(n) => {
                let name = self.names.failure(*n);
                quote!(&#name)
            }
            Local::Identity(n) => {
                let name = self.names.identity(*n);
                quote!(&#name)
            }
        }
    }

    fn block(&self, b: &crate::lower::BlockIr) -> TokenStream {
        let name = format_ident!("{}", b.name);
        let params = b.params.iter().map(|p| self.local_param(p));
        let body = self.node(&b.body);
        let doc = format!(" The flow from node `{}`, which several paths reach.", b.node_id);
        quote! {
            #[doc = #doc]
            async fn #name(mut ex: Exchange<'_>, state: &State, #(#params),*) -> Response {
                #body
            }
        }
    }

    /// A continuation in tail position: its statements follow directly (every other
    /// branch returned early), so straight-line flows stay flat.
    fn tail(&self, c: &Cont, req_bound: bool) -> TokenStream {
        match c {
            Cont::Inline(node) => self.node_in(node, req_bound),
            call => self.cont(call, req_bound),
        }
    }

    /// A continuation as one expression (the target of an early `return`).
    fn cont(&self, c: &Cont, req_bound: bool) -> TokenStream {
        match c {
            Cont::Inline(node) => {
                let body = self.node_in(node, req_bound);
                quote!({ #body })
            }
            Cont::Call { block, args } => {
                let name = format_ident!("{}", block);
                let args = args.iter().map(|a| self.local_arg(a, req_bound));
                quote!(#name(ex, state, #(#args),*).await)
            }
        }
    }

    fn parse_request(&self, needed: bool) -> TokenStream {
        if needed {
            quote! {
                let req = match request.parse(&ex).await {
                    Ok(req) => req,
                    Err(e) => return ex.error(e),
                };
            }
        } else {
            quote!()
        }
    }

    /// The statements of a node, ending in an expression of type `Response`.
    fn node(&self, node: &NodeIr) -> TokenStream {
        self.node_in(node, false)
    }

    /// `req_bound`: whether `req` (the parsed request) is already in scope here.
    fn node_in(&self, node: &NodeIr, req_bound: bool) -> TokenStream {
        match node {
            NodeIr::CheckOrigin { id, allowed, blocked } => {
                let f = field_ident("origin", id);
                let counters = field_ident("node", id);
                let allowed = self.tail(allowed, req_bound);
                let blocked = self.cont(blocked, req_bound);
                let comment = format!("Check Origin `{id}`");
                quote! {
                    svc_comment!(#comment);
                    if !ex.check_origin(&state.#counters, &state.#f) {
                        return #blocked;
                    }
                    #allowed
                }
            }
            NodeIr::RateLimit { id, key, ok, limited } => {
                let f = field_ident("limiter", id);
                let counters = field_ident("node", id);
                let key = match key {
                    LimitKeyIr::Ip => quote!(ex.ip_key()),
                    LimitKeyIr::User(n) if self.route.tokens.iter().any(|t| t.index == *n) => {
                        let k = self.names.identity(*n);
                        quote!(LimitKey::User(&#k.subject))
                    }
                    LimitKeyIr::User(n) => {
                        let k = self.names.identity(*n);
                        quote!(LimitKey::User(&#k.user))
                    }
                    LimitKeyIr::KeyId(n) => {
                        let k = self.names.identity(*n);
                        quote!(LimitKey::KeyId(&#k.key_id))
                    }
                    LimitKeyIr::Presented(node_id) => {
                        let loc = self.key_location_ident(node_id);
                        quote!(ex.presented_key(&#loc))
                    }
                };
                let ok = self.tail(ok, req_bound);
                let limited = self.cont(limited, req_bound);
                let comment = format!("Rate Limit `{id}`");
                quote! {
                    svc_comment!(#comment);
                    let limit_key = #key;
                    match ex.rate_limit(&state.#counters, &state.#f, limit_key).await {
                        Ok(true) => {}
                        Ok(false) => return #limited,
                        Err(unavailable) => return ex.error(unavailable),
                    }
                    #ok
                }
            }
            NodeIr::CheckApiKey {
                id,
                index,
                binds,
                valid,
                invalid,
            } => {
                let loc = self.key_location_ident(id);
                let counters = field_ident("node", id);
                let valid = self.tail(valid, req_bound);
                let invalid = self.cont(invalid, req_bound);
                let comment = format!("Check API Key `{id}`");
                if *binds {
                    let k = self.names.identity(*index);
                    quote! {
                        svc_comment!(#comment);
                        let Some(#k) = ex.check_api_key(&state.#counters, &#loc).await else {
                            return #invalid;
                        };
                        #valid
                    }
                } else {
                    quote! {
                        svc_comment!(#comment);
                        if ex.check_api_key(&state.#counters, &#loc).await.is_none() {
                            return #invalid;
                        }
                        #valid
                    }
                }
            }
            NodeIr::CheckSignature { id, valid, invalid } => {
                let counters = field_ident("node", id);
                let check = field_ident("signature", id);
                let valid = self.tail(valid, req_bound);
                let invalid = self.cont(invalid, req_bound);
                let comment = format!("Check Signature `{id}`");
                quote! {
                    svc_comment!(#comment);
                    let signed = match request.bytes(&ex).await {
                        Ok(bytes) => bytes,
                        Err(e) => return ex.error(e),
                    };
                    if !ex.check_signature(&state.#counters, &state.#check, &signed) {
                        return #invalid;
                    }
                    #valid
                }
            }
            NodeIr::CheckJwt {
                id,
                index,
                binds,
                valid,
                invalid,
                forbidden,
            } => {
                let loc = self.key_location_ident(id);
                let counters = field_ident("node", id);
                let check = field_ident("jwt", id);
                let claims = self.claims_type(self.token_check(id).expect("lowered with the route's tokens"));
                let valid = self.tail(valid, req_bound);
                let invalid = self.cont(invalid, req_bound);
                let forbidden = forbidden.as_ref().map(|f| {
                    let f = self.cont(f, req_bound);
                    quote!(Err(::svc_runtime::jwt::Refusal::InsufficientScope) => return #f,)
                });
                let comment = format!("Check JWT `{id}`");
                let k = if *binds {
                    self.names.identity(*index)
                } else {
                    format_ident!("_")
                };
                quote! {
                    svc_comment!(#comment);
                    let #k = match ex.check_jwt::<#claims>(&state.#counters, &state.#check, &#loc).await {
                        Ok(token) => token,
                        #forbidden
                        Err(_) => return #invalid,
                    };
                    #valid
                }
            }
            NodeIr::Code {
                id,
                index,
                key,
                held,
                parse_request,
                with_request,
                inputs,
                checked_inputs,
                checked_outputs,
                binds,
                next,
                on_fail,
            } => {
                let path = self.node_path(*index);
                let counters = field_ident("node", id);
                let parse = self.parse_request(*parse_request && !req_bound);
                let bound = req_bound || *parse_request;
                let held = held.iter().map(|h| {
                    let name = format_ident!("{}", h.name);
                    let copy = values::owned_copy(&h.value, &self.names);
                    quote!(let #name = #copy;)
                });
                let fields = inputs.iter().map(|(pin, input)| {
                    let f = ident(&svc_types::names::pin_field(pin));
                    let value = match input {
                        InputIr::Wire {
                            value,
                            pin,
                            moved: true,
                        } => values::moved_input(value, pin, &self.names, self.assets),
                        InputIr::Wire { value, pin, .. } => wire_input(value, pin, &self.names, self.assets),
                        InputIr::Literal { json, pin } | InputIr::Default { json, pin } => {
                            let lit = literal(json, &pin.ty, self.assets);
                            if pin.option { quote!(Some(#lit)) } else { lit }
                        }
                        InputIr::Absent => quote!(None),
                    };
                    quote!(#f: #value)
                });
                let out = self.names.output(*index);
                let fail = self.names.failure(*index);
                let ok_arm = match (validate::output_checks(checked_outputs, self.validated), *binds) {
                    (None, true) => quote!(Ok(outputs) => outputs,),
                    (None, false) => quote!(Ok(_) => {},),
                    (Some(checks), binds) => {
                        let value = if binds { quote!(outputs) } else { quote!({}) };
                        quote! {
                            Ok(outputs) => {
                                #checks
                                if let Some(problem) = violations.into_output_problem() {
                                    return ex.node_output_invalid(#key, problem);
                                }
                                #value
                            }
                        }
                    }
                };
                let err_arm = match on_fail {
                    // `on_fail` routes the node's own failures; a defect (a panic, an
                    // exception, outputs that do not fit) is a 500 whatever the flow.
                    Some((cont, fail_binds)) => {
                        let cont = self.cont(cont, bound);
                        let failure = if *fail_binds { quote!(#fail) } else { quote!(_) };
                        quote! {
                            Err(defect) if !defect.is_failure() => return ex.node_error(defect),
                            Err(#failure) => return #cont,
                        }
                    }
                    None => quote!(Err(failure) => return ex.node_error(failure),),
                };
                let binding = if *binds { quote!(let #out =) } else { quote!() };
                let input_checks = validate::node_input_checks(checked_inputs, self.validated).map(|checks| {
                    quote! {
                        #checks
                        if let Some(problem) = violations.into_input_problem() {
                            return ex.node_input_invalid(#key, problem);
                        }
                    }
                });
                let next = self.tail(next, bound);
                let comment = format!("Code node `{id}`: {key}");
                quote! {
                    svc_comment!(#comment);
                    #parse
                    #(#held)*
                    let inputs = #path::Inputs { #(#fields,)* };
                    #input_checks
                    #binding match ex.run_node::<#path::Node>(&state.#counters, inputs, #with_request).await {
                        #ok_arm
                        #err_arm
                    };
                    #next
                }
            }
            NodeIr::Return {
                id,
                parse_request,
                status,
                body,
                headers,
            } => {
                let parse = self.parse_request(*parse_request && !req_bound);
                let status_tokens = status_expr(*status);
                let pushes: Vec<TokenStream> = headers
                    .iter()
                    .map(|(name, h)| {
                        // Checked and built at compile time, not per request.
                        let name_tokens = quote!(const { ::svc_runtime::__private::http::HeaderName::from_static(#name) });
                        match h {
                            HeaderIr::Literal(text) if header_safe(text) => {
                                quote!(headers.push((#name_tokens, const { ::svc_runtime::__private::http::HeaderValue::from_static(#text) }));)
                            }
                            HeaderIr::Literal(text) => quote! {
                                if let Some(v) = ::svc_runtime::exchange::header_text(#name, String::from(#text)) { headers.push((#name_tokens, v)); }
                            },
                            HeaderIr::Value(v) => {
                                // Enum values known to be header-safe are static strings.
                                let static_enum = matches!(&v.ty, TypeRef::Enum(e) if self.assets.enum_named(e).is_some_and(|def| def.values.iter().all(|x| header_safe(x.value()))));
                                let a = access(v, &self.names);
                                let is_option = a.is_option();
                                // `&*key.user` or `fail.message()`: a `&str`, taken whole
                                // (`&*key.user.to_string()` would read `.to_string()` first).
                                let borrowed_text = a.kind == values::Kind::Ref;
                                let expr = a.expr;
                                let value = |x: TokenStream| {
                                    if static_enum {
                                        quote!(headers.push((#name_tokens, ::svc_runtime::__private::http::HeaderValue::from_static(#x.value())));)
                                    } else if borrowed_text && !is_option {
                                        quote!(if let Some(v) = ::svc_runtime::exchange::header_text(#name, String::from(#x)) { headers.push((#name_tokens, v)); })
                                    } else {
                                        quote!(if let Some(v) = ::svc_runtime::exchange::header_text(#name, #x.to_string()) { headers.push((#name_tokens, v)); })
                                    }
                                };
                                if is_option {
                                    let push = value(quote!(v));
                                    quote!(if let Some(v) = #expr { #push })
                                } else {
                                    value(expr)
                                }
                            }
                        }
                    })
                    .collect();
                let comment = format!("Return JSON `{id}`: {status}");
                let (headers, headers_arg) = if pushes.is_empty() {
                    (quote!(), quote!([]))
                } else {
                    let n = pushes.len();
                    (
                        quote! {
                            let mut headers = Vec::with_capacity(#n);
                            #(#pushes)*
                        },
                        quote!(headers),
                    )
                };
                let respond = match body {
                    None if *status >= 400 && pushes.is_empty() => quote!(ex.status(#status_tokens)),
                    None if *status >= 400 => quote!(ex.status_with_headers(#status_tokens, #headers_arg)),
                    None => quote!(ex.json_static(#status_tokens, "{}", #headers_arg)),
                    Some(TemplateIr::Literal(text)) => quote!(ex.json_static(#status_tokens, #text, #headers_arg)),
                    Some(template) => {
                        let mut writes = TokenStream::new();
                        self.template(template, &mut writes);
                        quote! {
                            let mut w = JsonWriter::with_capacity(256);
                            #writes
                            ex.json_bytes(#status_tokens, w.finish(), #headers_arg)
                        }
                    }
                };
                quote! {
                    svc_comment!(#comment);
                    #parse
                    #headers
                    #respond
                }
            }
        }
    }

    fn template(&self, t: &TemplateIr, out: &mut TokenStream) {
        match t {
            TemplateIr::Literal(text) => out.extend(quote!(w.raw(#text);)),
            TemplateIr::Value(v) => {
                let r = access(v, &self.names).reference();
                out.extend(quote!(w.value(#r);));
            }
            TemplateIr::Object(fields) => {
                out.extend(quote!(w.begin_object();));
                for (key, value) in fields {
                    out.extend(quote!(w.key(#key);));
                    self.template(value, out);
                }
                out.extend(quote!(w.end_object();));
            }
            TemplateIr::Array(items) => {
                out.extend(quote!(w.begin_array();));
                for item in items {
                    self.template(item, out);
                }
                out.extend(quote!(w.end_array();));
            }
        }
    }

    fn preflight(&self) -> TokenStream {
        let Some(node) = &self.route.preflight else {
            return quote!();
        };
        let f = field_ident("origin", node);
        let doc = format!(" Answers a CORS preflight with the policy of Check Origin `{node}`.");
        quote! {
            #[doc = #doc]
            pub fn preflight(state: &State, call: &Call) -> Response {
                let id = ::svc_runtime::call::request_id(&call.request);
                state.#f.preflight(call.request.headers(), id.as_str())
            }
        }
    }
}

fn param_parse(
    p: &ParamIr,
    paths: &svc_frontend::rust_types::RustPaths,
    source: TokenStream,
    what: &str,
) -> (TokenStream, TokenStream) {
    let name = &p.name;
    let kind = scalar(&p.ty);
    let (elem, many) = match &p.ty {
        TypeRef::Array(inner) => (rust_type(inner, paths), true),
        t => (rust_type(t, paths), false),
    };
    let read = if many {
        quote!(#source.all::<#elem>(#name, #kind)?)
    } else {
        quote!(#source.one::<#elem>(#name, #kind)?)
    };
    let full = rust_type(&p.ty, paths);
    if p.required {
        (full, quote!(::svc_runtime::body::required(#read, #what, #name)?))
    } else {
        (quote!(Option<#full>), read)
    }
}

/// Whether text can be a header value as is (visible ASCII, spaces and tabs).
fn header_safe(text: &str) -> bool {
    text.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
}

fn location_expr(loc: &KeyLocation) -> TokenStream {
    match loc {
        KeyLocation::HeaderXApiKey => quote!(KeyLocation::HeaderXApiKey),
        KeyLocation::AuthorizationBearer => quote!(KeyLocation::AuthorizationBearer),
        KeyLocation::Header(h) => {
            let h = h.to_ascii_lowercase();
            quote!(KeyLocation::Header(#h))
        }
        KeyLocation::Query(q) => quote!(KeyLocation::Query(#q)),
        KeyLocation::Cookie(c) => quote!(KeyLocation::Cookie(#c)),
    }
}

/// A `u16` literal without a suffix.
pub fn unsuffixed(n: u16) -> Literal {
    Literal::u16_unsuffixed(n)
}
