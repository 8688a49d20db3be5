//! `svc openapi`: an OpenAPI 3.1 document of every route of a checked project.
//!
//! - Structures and enums become `components/schemas` (enums by their wire values).
//! - Each flow becomes one path item with one operation per method: path, query and
//!   header parameters and the request body from the Start node's schema; one response
//!   per Return JSON node the flow can reach, with a schema built from its body template
//!   (wired values typed as the checker types them); the standard error answers the
//!   server adds (400, 413, 500) and those of its protections (401 with
//!   `WWW-Authenticate`, 403, 429 with `Retry-After`).
//! - Check API Key nodes become security schemes (`apiKey` in a header or the query, or
//!   HTTP bearer), required by the operations whose every successful path passes one.

use crate::check::Checked;
use crate::check::flow::FlowContext;
use crate::check::types::ValueType;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use svc_frontend::Diagnostics;
use svc_frontend::flow::{BodySchema, FieldSchema, Flow, KeyLocation, NodeKind, Template};
use svc_types::constraints;
use svc_types::{Assets, Constraints, TypeRef};

/// The OpenAPI schema of a svc type.
pub fn type_schema(ty: &TypeRef) -> Value {
    match ty {
        TypeRef::String => json!({ "type": "string" }),
        TypeRef::Number => json!({ "type": "number" }),
        TypeRef::Boolean => json!({ "type": "boolean" }),
        TypeRef::Any => json!({}),
        TypeRef::Object => json!({ "type": "object" }),
        TypeRef::Structure(name) | TypeRef::Enum(name) => json!({ "$ref": format!("#/components/schemas/{name}") }),
        TypeRef::Array(inner) => json!({ "type": "array", "items": type_schema(inner) }),
    }
}

/// The schema of a value of `ty` held to `constraints`: JSON Schema's own keywords (on an
/// array, the array keywords on the array and the others on its items), with
/// `integer` as `"type": "integer"`.
pub fn constrained_schema(ty: &TypeRef, constraints: &Constraints) -> Value {
    let mut schema = type_schema(ty);
    if constraints.is_empty() {
        return schema;
    }
    let Value::Object(mut keywords) = serde_json::to_value(constraints).expect("constraints serialize") else {
        unreachable!("constraints are an object")
    };
    let integer = keywords.remove("integer").is_some();
    let mut target = &mut schema;
    if let TypeRef::Array(_) = ty {
        for key in constraints::ARRAY_KEYS {
            if let Some(v) = keywords.remove(*key) {
                schema[*key] = v;
            }
        }
        target = &mut schema["items"];
    }
    if integer {
        target["type"] = json!("integer");
    }
    for (k, v) in keywords {
        target[k] = v;
    }
    schema
}

fn assets_schemas(assets: &Assets) -> Map<String, Value> {
    let mut schemas = Map::new();
    for e in &assets.enums {
        let mut s = json!({
            "type": "string",
            "enum": e.values.iter().map(|v| v.value()).collect::<Vec<_>>(),
        });
        if let Some(d) = &e.description {
            s["description"] = json!(d);
        }
        schemas.insert(e.name.clone(), s);
    }
    for st in &assets.structures {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for f in &st.fields {
            let mut p = f
                .type_ref()
                .map(|t| constrained_schema(&t, &f.constraints))
                .unwrap_or_else(|| json!({}));
            if let Some(d) = &f.description {
                // `$ref` siblings are allowed in 3.1 (JSON Schema 2020-12).
                p["description"] = json!(d);
            }
            if f.required {
                required.push(json!(f.name));
            } else {
                p = or_null(p);
            }
            properties.insert(f.name.clone(), p);
        }
        // The server refuses members a structure does not declare.
        let mut s = json!({ "type": "object", "properties": properties, "additionalProperties": false });
        if !required.is_empty() {
            s["required"] = Value::Array(required);
        }
        if let Some(d) = &st.description {
            s["description"] = json!(d);
        }
        schemas.insert(st.name.clone(), s);
    }
    schemas.insert(
        "Error".into(),
        json!({
            "type": "object",
            "description": "The one error shape of svc servers (docs/runtime.md).",
            "required": ["error"],
            "properties": {
                "error": {
                    "type": "object",
                    "required": ["status", "code", "message"],
                    "properties": {
                        "status": { "type": "integer" },
                        "code": { "type": "string" },
                        "message": { "type": "string" },
                        "field": { "type": "string", "description": "The request field that did not fit (400)." },
                        "violations": {
                            "type": "array",
                            "description": "The field constraints the request breaks (400 `invalid_request`), at most 20.",
                            "items": { "$ref": "#/components/schemas/Violation" }
                        },
                        "violation_count": { "type": "integer", "description": "How many constraints the request breaks in all." },
                        "node": { "type": "string", "description": "The node key of a failed code node." },
                        "retry_after": { "type": "integer", "description": "Seconds until a retry can pass (429)." },
                        "request_id": { "type": "string" }
                    }
                }
            }
        }),
    );
    schemas.insert(
        "Violation".into(),
        json!({
            "type": "object",
            "description": "One field constraint a request breaks. The offending value is never repeated.",
            "required": ["in", "pointer", "constraint", "limit", "message"],
            "properties": {
                "in": { "enum": ["body", "query", "header"] },
                "pointer": { "type": "string", "description": "The JSON pointer of the value in its part (`/lines/0/quantity`; `/<name>` for a parameter)." },
                "constraint": { "type": "string", "description": "The constraint's keyword: `minimum`, `format`, …" },
                "limit": { "description": "The constraint's value: `1`, `\"email\"`, `true`." },
                "message": { "type": "string" }
            }
        }),
    );
    schemas
}

/// An optional member's schema: servers read `null` as absent (as JavaScript clients
/// send it), so the document says `null` is accepted.
fn or_null(schema: Value) -> Value {
    match schema.get("type") {
        Some(Value::String(t)) => {
            let mut schema = schema.clone();
            schema["type"] = json!([t, "null"]);
            schema
        }
        // `any`: null is already a value.
        None if schema.as_object().is_some_and(|o| o.is_empty()) => schema,
        _ => {
            let description = schema.get("description").cloned();
            let mut schema = schema;
            if let Some(o) = schema.as_object_mut() {
                o.remove("description");
            }
            let mut s = json!({ "anyOf": [schema, { "type": "null" }] });
            if let Some(d) = description {
                s["description"] = d;
            }
            s
        }
    }
}

fn fields_schema(fields: &[FieldSchema]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for f in fields {
        let mut p = constrained_schema(&f.type_ref.value, &f.constraints);
        if let Some(d) = &f.description {
            p["description"] = json!(d);
        }
        if f.required {
            required.push(json!(f.name.value));
        } else {
            p = or_null(p);
        }
        properties.insert(f.name.value.clone(), p);
    }
    let mut s = json!({ "type": "object", "properties": properties, "additionalProperties": false });
    if !required.is_empty() {
        s["required"] = Value::Array(required);
    }
    s
}

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
    })
}

fn scheme_name(location: &KeyLocation) -> String {
    match location {
        KeyLocation::HeaderXApiKey => "apiKeyHeader".into(),
        KeyLocation::AuthorizationBearer => "bearer".into(),
        KeyLocation::Header(h) => format!("apiKeyHeader_{}", sanitize(h)),
        KeyLocation::Query(q) => format!("apiKeyQuery_{}", sanitize(q)),
        KeyLocation::Cookie(c) => format!("apiKeyCookie_{}", sanitize(c)),
    }
}

fn scheme(location: &KeyLocation) -> Value {
    let described = "Issued with `svc keys create`; stored only as a hash.";
    match location {
        KeyLocation::HeaderXApiKey => {
            json!({ "type": "apiKey", "in": "header", "name": "X-API-Key", "description": described })
        }
        KeyLocation::AuthorizationBearer => json!({ "type": "http", "scheme": "bearer", "description": described }),
        KeyLocation::Header(h) => json!({ "type": "apiKey", "in": "header", "name": h, "description": described }),
        KeyLocation::Query(q) => json!({
            "type": "apiKey", "in": "query", "name": q,
            "description": format!("{described} Discouraged: URLs end up in logs.")
        }),
        KeyLocation::Cookie(c) => json!({ "type": "apiKey", "in": "cookie", "name": c, "description": described }),
    }
}

/// A Check JWT node's security scheme: OpenID Connect when the keys come from the
/// issuer's discovery document, else a bearer JWT (or where the node reads it).
fn token_scheme(t: &svc_frontend::flow::CheckJwt) -> Value {
    let described = format!(
        "A JWT issued by `{}` for {}.",
        t.issuer.value,
        t.audiences
            .iter()
            .map(|a| format!("`{}`", a.value))
            .collect::<Vec<_>>()
            .join(" or ")
    );
    match (&t.keys, &t.location.value) {
        (svc_frontend::flow::JwtKeys::Discovery(url), KeyLocation::AuthorizationBearer) => {
            json!({ "type": "openIdConnect", "openIdConnectUrl": url, "description": described })
        }
        (_, KeyLocation::AuthorizationBearer | KeyLocation::HeaderXApiKey) => {
            json!({ "type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": described })
        }
        (_, KeyLocation::Header(h)) => json!({ "type": "apiKey", "in": "header", "name": h, "description": described }),
        (_, KeyLocation::Query(q)) => json!({ "type": "apiKey", "in": "query", "name": q, "description": described }),
        (_, KeyLocation::Cookie(c)) => json!({ "type": "apiKey", "in": "cookie", "name": c, "description": described }),
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The response schema of a Return JSON body template.
fn template_schema(t: &Template, ctx: &FlowContext, consumer: usize) -> Value {
    match t {
        Template::Literal(node) => {
            let v = node.to_json();
            let ty = match &v {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            };
            json!({ "type": ty, "const": v })
        }
        Template::Wire(r) => {
            let mut quiet = Diagnostics::new();
            match ctx.reference(r, Some(consumer), &mut quiet) {
                Some(ValueType { ty, optional, .. }) => {
                    let s = type_schema(&ty);
                    if optional {
                        json!({ "anyOf": [s, { "type": "null" }] })
                    } else {
                        s
                    }
                }
                None => json!({}),
            }
        }
        Template::Object(fields, _) => {
            let mut properties = Map::new();
            for (k, v) in fields {
                properties.insert(k.value.clone(), template_schema(v, ctx, consumer));
            }
            let required: Vec<Value> = fields.iter().map(|(k, _)| json!(k.value)).collect();
            json!({ "type": "object", "properties": properties, "required": required })
        }
        Template::Array(items, _) => {
            let items: Vec<Value> = items.iter().map(|v| template_schema(v, ctx, consumer)).collect();
            json!({ "type": "array", "prefixItems": items, "items": false })
        }
    }
}

/// The reason phrase of a status code (`Created`), for response descriptions.
fn reason(status: u16) -> &'static str {
    http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Response")
}

/// Which protections a flow can run, for the answers they add.
#[derive(Default)]
struct Protections {
    api_key: bool,
    token: bool,
    /// A Check JWT node sends a token without a required scope its own way (403).
    token_scope: bool,
    origin: bool,
    rate_limit: bool,
    /// A Check Signature node reads the body's bytes, whatever the flow declares.
    signature: bool,
}

fn operation(checked: &Checked, flow_index: usize, security: &mut BTreeMap<String, Value>) -> (String, Value) {
    let flow: &Flow = &checked.project.flows[flow_index];
    let graph = &checked.graphs[flow_index];
    let ctx = FlowContext {
        flow,
        graph,
        assets: &checked.assets,
        catalog: &checked.catalog,
    };
    let config = checked.project.config.as_ref().expect("a checked project has a config");
    let path = config.served_path(&flow.route.value);

    let mut parameters = Vec::new();
    for p in &flow.request.params {
        parameters.push(json!({ "name": p.value, "in": "path", "required": true, "schema": { "type": "string" } }));
    }
    for (fields, place) in [(&flow.request.query, "query"), (&flow.request.headers, "header")] {
        for f in fields {
            let mut p = json!({
                "name": f.name.value, "in": place, "required": f.required, "schema": constrained_schema(&f.type_ref.value, &f.constraints)
            });
            if let Some(d) = &f.description {
                p["description"] = json!(d);
            }
            parameters.push(p);
        }
    }

    let mut responses = Map::new();
    let mut has_code = false;
    let mut schemes: Vec<String> = Vec::new();
    // The scopes a scheme's requirement lists (a Check JWT's `required_scopes`).
    let mut scopes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut protections = Protections::default();
    let refusals: std::collections::BTreeSet<&str> = flow
        .nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Code(c) => c.on_fail.as_ref().map(|e| e.value.as_str()),
            _ => None,
        })
        .collect();
    for (i, node) in flow.nodes.iter().enumerate() {
        if !graph.reachable.get(i).copied().unwrap_or(false) {
            continue;
        }
        match &node.kind {
            NodeKind::ReturnJson(ret) => {
                let status = ret.status.value;
                // A node's own refusal of a valid request (`ctx.fail` routed by `on_fail`)
                // is said, so that a client (or a conformance tool) can tell it from the
                // server's refusal of an invalid one.
                let after = if refusals.contains(node.id.value.as_str()) {
                    ", after a code node fails"
                } else {
                    ""
                };
                let description = format!("{} (Return JSON `{}`{after})", reason(status), node.id.value);
                let response = match &ret.body {
                    Some(body) => json!({
                        "description": description,
                        "content": { "application/json": { "schema": template_schema(body, &ctx, i) } }
                    }),
                    None => error_response(&description),
                };
                let key = status.to_string();
                match responses.get_mut(&key) {
                    // Several Return JSON nodes with one status: any of their bodies.
                    Some(existing) => merge_response(existing, response),
                    None => {
                        responses.insert(key, response);
                    }
                }
            }
            NodeKind::CheckApiKey(k) => {
                protections.api_key = true;
                let name = scheme_name(&k.location.value);
                security.insert(name.clone(), scheme(&k.location.value));
                if !schemes.contains(&name) {
                    schemes.push(name);
                }
            }
            NodeKind::CheckJwt(t) => {
                protections.token = true;
                protections.token_scope |= t.forbidden.is_some();
                let name = format!("jwt_{}", sanitize(&node.id.value));
                security.insert(name.clone(), token_scheme(t));
                scopes.insert(name.clone(), t.required_scopes.clone());
                if !schemes.contains(&name) {
                    schemes.push(name);
                }
            }
            NodeKind::CheckSignature(_) => protections.signature = true,
            NodeKind::CheckOrigin(_) => protections.origin = true,
            NodeKind::RateLimit(_) => protections.rate_limit = true,
            NodeKind::Code(_) => has_code = true,
        }
    }
    // The server's own answers, where no Return JSON gives that status; the headers of a
    // protection's answer also on a Return JSON that answers for it.
    let mut add = |status: &str, response: Value| match responses.get_mut(status) {
        Some(existing) => {
            if let Some(headers) = response.get("headers") {
                existing["headers"] = headers.clone();
            }
        }
        None => {
            responses.insert(status.to_string(), response);
        }
    };
    if !flow.request.is_empty_schema() {
        add(
            "400",
            error_response(
                "The request does not fit the route's schema: `field` names what does not parse, `violations` the constraints it breaks.",
            ),
        );
    }
    if protections.api_key {
        let mut r = error_response("No valid API key: missing, malformed, unknown, revoked or expired.");
        r["headers"] = json!({ "WWW-Authenticate": { "schema": { "type": "string" } } });
        add("401", r);
    }
    if protections.token {
        let mut r = error_response(
            "No valid token: missing, malformed, expired, for another audience, or not signed by the issuer.",
        );
        r["headers"] = json!({ "WWW-Authenticate": { "schema": { "type": "string" } } });
        add("401", r);
    }
    if protections.token_scope {
        let mut r = error_response("The token does not grant a scope the route requires.");
        r["headers"] = json!({ "WWW-Authenticate": { "schema": { "type": "string" } } });
        add("403", r);
    }
    if protections.origin {
        add("403", error_response("The Origin is not allowed."));
    }
    if protections.signature {
        add(
            "401",
            error_response(
                "The webhook's signature is missing or does not match, its timestamp is too old, or the delivery was accepted already.",
            ),
        );
    }
    if flow.request.body.is_some() || protections.signature {
        add("413", error_response("The body is larger than the server's limit."));
    }
    if protections.rate_limit {
        let mut r = error_response("Rate limited.");
        r["headers"] = json!({
            "Retry-After": { "schema": { "type": "integer" }, "description": "Seconds until a request can pass." },
            "RateLimit-Policy": { "schema": { "type": "string" } },
            "RateLimit": { "schema": { "type": "string" } }
        });
        add("429", r);
    }
    if has_code {
        add("500", error_response("A code node failed or panicked."));
    }

    let mut op = Map::new();
    if let Some(s) = &flow.summary {
        op.insert("summary".into(), json!(s));
    }
    let source = checked.project.sources.get(flow.file).display_path.clone();
    op.insert("description".into(), json!(format!("From `{source}`.")));
    if !parameters.is_empty() {
        op.insert("parameters".into(), Value::Array(parameters));
    }
    if let Some(body) = &flow.request.body {
        let schema = match body {
            BodySchema::Typed(t) => type_schema(&t.value),
            BodySchema::Fields(fields) => fields_schema(fields),
        };
        op.insert(
            "requestBody".into(),
            json!({ "required": true, "content": { "application/json": { "schema": schema } } }),
        );
    }
    op.insert("responses".into(), Value::Object(responses));
    if !schemes.is_empty() {
        let alternatives: Vec<Value> = schemes
            .iter()
            .map(|s| json!({ s: scopes.get(s).cloned().unwrap_or_default() }))
            .collect();
        op.insert("security".into(), Value::Array(alternatives));
    } else {
        op.insert("security".into(), json!([]));
    }
    (path, Value::Object(op))
}

fn merge_response(existing: &mut Value, other: Value) {
    let a = existing.pointer("/content/application~1json/schema").cloned();
    let b = other.pointer("/content/application~1json/schema").cloned();
    if let (Some(a), Some(b)) = (a, b)
        && a != b
    {
        existing["content"]["application/json"]["schema"] = json!({ "oneOf": [a, b] });
    }
}

/// The OpenAPI 3.1 document of a checked project without errors.
pub fn document(checked: &Checked) -> Value {
    let config = checked.project.config.as_ref().expect("a checked project has a config");
    let mut paths = Map::new();
    let mut security = BTreeMap::new();
    let mut order: Vec<usize> = (0..checked.project.flows.len()).collect();
    order.sort_by(|&a, &b| {
        checked.project.flows[a]
            .route
            .value
            .cmp(&checked.project.flows[b].route.value)
    });
    for i in order {
        let (path, op) = operation(checked, i, &mut security);
        let item = paths.entry(path).or_insert_with(|| json!({}));
        let flow = &checked.project.flows[i];
        for m in &flow.methods {
            let mut op = op.clone();
            op["operationId"] = json!(format!(
                "{}_{}",
                m.value.as_str().to_ascii_lowercase(),
                sanitize(&flow.route.value.replace('/', "_")).replace(['{', '}', '-'], "_")
            ));
            item[m.value.as_str().to_ascii_lowercase()] = op;
        }
    }
    let mut components = Map::new();
    components.insert("schemas".into(), Value::Object(assets_schemas(&checked.assets)));
    if !security.is_empty() {
        components.insert("securitySchemes".into(), Value::Object(security.into_iter().collect()));
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": config.project_name,
            "version": checked.project.node_crate.as_ref().and_then(|k| k.version.clone()).unwrap_or_else(|| "0.1.0".into()),
            "description": format!("Routes of the svc project `{}`, generated by `svc openapi`.", config.project_name)
        },
        "servers": [{ "url": "http://127.0.0.1:8080", "description": "`<binary> serve` with its defaults" }],
        "paths": paths,
        "components": components
    })
}
