//! What the Builder draws, read from the project through the same pipeline as `svc check`
//! (load, then check): its routes as graphs of nodes, pins and wires, the palette of nodes
//! the project can use, its assets and secrets, and every diagnostic, placed on the
//! route, node and pin it concerns. The browser never parses YAML: this is its only view
//! of the project.
//!
//! A project with errors still gives a model: whatever could be read is drawn, and the
//! diagnostics say what could not.

use crate::check::{self, Checked};
use crate::project::Project;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;
use svc_frontend::flow::{
    Binding, BodySchema, Flow, FlowNode, KeyLocation, NodeKind, RefRoot, Reference, RequestPart,
    Template,
};
use svc_frontend::node_crate::NodeCode;
use svc_frontend::yaml::Node as YamlNode;
use svc_frontend::{Diagnostics, FileId};
use svc_types::{PinDefinition, PinKind, TypeRef};

/// The id of the Start node on the canvas: not a valid flow node id, so it never clashes.
pub const START: &str = "(start)";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// The project's files' revision when this model was read (`watch::revision`): the
    /// page reads the project again when `GET /api/project/revision` answers another.
    pub revision: String,
    pub project: ProjectInfo,
    pub routes: Vec<Route>,
    pub palette: Vec<PaletteNode>,
    /// The built-in node types, as the table has them (`svc_types::builtin_nodes`): the
    /// page keeps no copy of its own.
    pub node_types: Vec<NodeTypeInfo>,
    pub assets: Value,
    pub diagnostics: Vec<Value>,
}

/// A built-in node type, for the page.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeTypeInfo {
    #[serde(rename = "type")]
    pub type_name: &'static str,
    pub label: &'static str,
    pub badge: &'static str,
    pub category: &'static str,
}

fn node_types() -> Vec<NodeTypeInfo> {
    svc_types::builtin_nodes::NODE_TYPES
        .iter()
        .map(|row| NodeTypeInfo {
            type_name: row.type_name,
            label: row.label,
            badge: row.badge,
            category: row.category,
        })
        .collect()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectInfo {
    pub name: String,
    pub dir: String,
    pub errors: usize,
    pub warnings: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Route {
    /// The flow's file name without `.yaml`: how `svc test` and the layout file name it.
    pub name: String,
    pub file: String,
    /// The version of the flow file this model was read from (its SHA-256): what the
    /// Builder's edits are made against.
    pub version: String,
    pub route: String,
    /// The path it is served at (`/acme/shop/orders`).
    pub path: String,
    pub methods: Vec<String>,
    pub summary: Option<String>,
    /// The protection types the flow uses, in flow order (`check-origin`, …).
    pub protections: Vec<&'static str>,
    pub start: String,
    pub nodes: Vec<Node>,
    pub wires: Vec<Wire>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    pub id: String,
    /// `start`, `check-origin`, `rate-limit`, `check-api-key`, `code`, `return-json`.
    #[serde(rename = "type")]
    pub node_type: &'static str,
    /// The Builder label: a code node's `name`, else the node id.
    pub label: String,
    pub category: String,
    pub description: Option<String>,
    /// A code node's key, and the language it is written in.
    pub node_key: Option<String>,
    pub language: Option<&'static str>,
    pub line: u32,
    pub inputs: Vec<Pin>,
    pub outputs: Vec<Pin>,
    /// What the node is set to, as `(label, value)` rows: limit, window, origins, status…
    pub config: Vec<(String, String)>,
    /// The settings the Builder edits, each with its key in the flow file.
    pub settings: Vec<Setting>,
    /// svc could not read the node (its problem is reported on it): it is drawn with its
    /// settings and edges as written, nothing else.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unreadable: bool,
}

/// A setting of a protection or Return JSON node, as the inspector's form edits it:
/// `nodes.<id>.<key>` in the flow file.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Setting {
    pub key: &'static str,
    pub label: &'static str,
    /// `count` (a whole number), `duration` (`30s`, `1m`), `choice`, `status` (an HTTP
    /// status), `origins` (a list of allowed origins) or `headers` (a list of header
    /// names).
    pub kind: &'static str,
    pub value: Value,
    /// The values a `choice` takes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<&'static str>,
    /// The key may be left out (the node then takes the default `unset` describes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unset: Option<&'static str>,
}

/// The settings the inspector edits on a node of `node_type`, each with `value(key)`:
/// what the flow gives it (`""` where it leaves the key out). For a node that was read,
/// the values it was read as; for one that could not be, the values as written, so that
/// the one at fault can be put right in the same form. Which settings, their labels,
/// kinds and defaults are the type's row's ([`svc_types::builtin_nodes`]).
fn settings_of(node_type: &str, value: impl Fn(&str) -> Value) -> Vec<Setting> {
    let Some(row) = svc_types::builtin_nodes::node_type(node_type) else {
        return Vec::new();
    };
    row.inspector_fields()
        .into_iter()
        .map(|(setting, field)| Setting {
            key: setting.key,
            label: field.label,
            kind: field.kind.name(),
            // A list the node leaves out is an empty list to the form.
            value: match value(setting.key) {
                Value::String(s) if s.is_empty() && field.kind.is_list() => Value::Array(Vec::new()),
                written => written,
            },
            choices: field.kind.choices().to_vec(),
            unset: field.unset,
        })
        .collect()
}

#[derive(Serialize, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Pin {
    pub id: String,
    /// `sequence`, or a type string (`string`, `object:Order`, `type:array`, …).
    #[serde(rename = "type")]
    pub type_name: String,
    /// The element type of an array, as a type string.
    pub items: Option<String>,
    pub sequence: bool,
    pub optional: bool,
    pub description: Option<String>,
    /// Its constraints in words ("2 to 40 characters"): checked at the edge for a
    /// request input, before the node runs for a code node's input, after for an output.
    pub checks: Option<String>,
    pub default: Option<Value>,
    /// Whether the pin takes an inline value instead of a wire.
    pub takes_inline: bool,
    /// The inline value a flow gives it.
    pub value: Option<Value>,
    /// Where the flow writes the pin (its line in the flow file), when it does.
    pub line: Option<u32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Wire {
    /// `sequence` or `data`.
    pub kind: &'static str,
    pub from: End,
    pub to: End,
    /// The reference as written (`price.quote.total`), for data wires.
    pub text: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct End {
    pub node: String,
    pub pin: String,
    /// Fields read past the pin (`["total"]` for `price.quote.total`).
    pub path: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaletteNode {
    pub key: String,
    pub label: String,
    pub category: String,
    pub description: Option<String>,
    /// `built-in`, `rust` or `typescript`.
    pub language: &'static str,
    pub inputs: Vec<Pin>,
    pub outputs: Vec<Pin>,
}

/// Reads and checks the project at `dir` and describes it.
pub fn read(dir: &Path) -> Model {
    // Before reading: a change made while the project is read gives a newer revision
    // than the one this model carries, so the page reads it again.
    let revision = crate::watch::revision(dir);
    let mut diags = Diagnostics::new();
    let project = Project::load_confined(dir, &mut diags);
    let checked = check::check(&project, &mut diags);
    describe(&project, &checked, diags, dir, revision)
}

fn describe(project: &Project, checked: &Checked, diags: Diagnostics, dir: &Path, revision: String) -> Model {
    let routes: Vec<Route> = project.flows.iter().map(|flow| route(project, checked, flow)).collect();
    let mut diagnostics: Vec<Value> = Vec::new();
    let (mut errors, mut warnings) = (0, 0);
    for d in diags.sorted(&project.sources) {
        match d.severity {
            svc_frontend::Severity::Error => errors += 1,
            svc_frontend::Severity::Warning => warnings += 1,
        }
        let mut json = d.to_json(&project.sources);
        let file = &project.sources.get(d.primary.span.file).display_path;
        if let Some((route, node, pin)) = place(&routes, file, d.primary.span.line)
            && let Value::Object(map) = &mut json
        {
            map.insert("route".into(), route.into());
            if let Some(node) = node {
                map.insert("node".into(), node.into());
            }
            if let Some(pin) = pin {
                map.insert("pin".into(), pin.into());
            }
        }
        diagnostics.push(json);
    }
    Model {
        revision,
        project: ProjectInfo {
            name: project
                .config
                .as_ref()
                .map(|c| c.project_name.clone())
                .unwrap_or_default(),
            dir: dir.display().to_string(),
            errors,
            warnings,
        },
        routes,
        palette: palette(checked),
        node_types: node_types(),
        assets: assets_json(&checked.assets),
        diagnostics,
    }
}

/// The assets as JSON, each constrained field with its constraints also in words
/// (`checks`: "a whole number, at least 1"), as `svc check` and the generated docs say
/// them.
fn assets_json(assets: &svc_types::Assets) -> Value {
    let mut json = serde_json::to_value(assets).unwrap_or(Value::Null);
    let structures = json.get_mut("structures").and_then(Value::as_array_mut);
    for (s, value) in assets.structures.iter().zip(structures.into_iter().flatten()) {
        let fields = value.get_mut("fields").and_then(Value::as_array_mut);
        for (f, field) in s.fields.iter().zip(fields.into_iter().flatten()) {
            if !f.constraints.is_empty() {
                field["checks"] = Value::String(f.constraints.describe());
            }
        }
    }
    json
}

/// The flow file's name without its extension.
pub(super) fn route_name(project: &Project, file: FileId) -> String {
    let path = &project.sources.get(file).display_path;
    let base = path.rsplit('/').next().unwrap_or(path);
    base.strip_suffix(".yaml")
        .or(base.strip_suffix(".yml"))
        .unwrap_or(base)
        .to_string()
}

/// The route, node and pin a place in a flow file belongs to: the node whose block the
/// line falls in (a node's block runs from its id to the next node's), and the input the
/// flow writes on that line (a code node's pin, a response's header or body field).
fn place(routes: &[Route], file: &str, line: u32) -> Option<(String, Option<String>, Option<String>)> {
    let route = routes.iter().find(|r| r.file == file)?;
    let node = route
        .nodes
        .iter()
        .filter(|n| n.id != START && n.line <= line)
        .max_by_key(|n| n.line);
    let Some(node) = node else {
        return Some((route.name.clone(), None, None));
    };
    let pin = node.inputs.iter().find(|p| p.line == Some(line)).map(|p| p.id.clone());
    Some((route.name.clone(), Some(node.id.clone()), pin))
}

fn route(project: &Project, checked: &Checked, flow: &Flow) -> Route {
    let mut nodes = vec![start_node(flow)];
    let mut wires = Vec::new();
    wires.push(Wire {
        kind: "sequence",
        from: end(START, "start", &[]),
        to: end(&flow.start.value, "exec", &[]),
        text: None,
    });
    let root = svc_frontend::yaml::parse(flow.file, &project.sources.get(flow.file).text).ok();
    let written = |id: &str| root.as_ref().and_then(|r| entry(r, "nodes")).and_then(|n| entry(n, id));
    for node in &flow.nodes {
        nodes.push(flow_node(checked, node, written(&node.id.value)));
        for (output, target) in node.kind.edges() {
            if let Some(target) = target {
                wires.push(Wire {
                    kind: "sequence",
                    from: end(&node.id.value, output, &[]),
                    to: end(&target.value, "exec", &[]),
                    text: None,
                });
            }
        }
        for (pin, reference) in wired_inputs(node) {
            wires.push(Wire {
                kind: "data",
                from: source(flow, reference),
                to: end(&node.id.value, &pin, &[]),
                text: Some(reference.text.clone()),
            });
        }
    }
    let (unreadable, edges) = unreadable_nodes(flow, root.as_ref(), &wires);
    nodes.extend(unreadable);
    wires.extend(edges);
    Route {
        name: route_name(project, flow.file),
        file: project.sources.get(flow.file).display_path.clone(),
        version: super::edit::version(project.sources.get(flow.file).text.as_bytes()),
        route: flow.route.value.clone(),
        path: project
            .config
            .as_ref()
            .map(|c| c.served_path(&flow.route.value))
            .unwrap_or_else(|| format!("/{}", flow.route.value)),
        methods: flow.methods.iter().map(|m| m.value.as_str().to_string()).collect(),
        summary: flow.summary.clone(),
        protections: flow
            .nodes
            .iter()
            .filter(|n| n.kind.row().category == "protection")
            .map(|n| n.kind.type_name())
            .collect(),
        start: flow.start.value.clone(),
        nodes,
        wires,
    }
}

/// The nodes a flow declares but svc could not read, each where the flow has it (its
/// problem is placed on it by its line) with its settings and edges as written: found and
/// put right on the canvas, rather than gone from it. Their edges, as wires; what other
/// nodes read from them (`wires`), as outputs of unknown type.
fn unreadable_nodes(flow: &Flow, root: Option<&YamlNode>, wires_in: &[Wire]) -> (Vec<Node>, Vec<Wire>) {
    let (mut nodes, mut wires) = (Vec::new(), Vec::new());
    for broken in &flow.broken {
        let id = &broken.id.value;
        let written = root.and_then(|r| entry(r, "nodes")).and_then(|n| entry(n, id));
        let value = |key: &str| written_value(written, key);
        let node_type = broken.type_name.unwrap_or("unknown");
        let mut outputs = Vec::new();
        for key in super::flow_ops::edge_keys() {
            if let Some(target) = value(key).as_str().filter(|t| !t.is_empty()) {
                outputs.push(sequence_pin(key));
                wires.push(Wire {
                    kind: "sequence",
                    from: end(id, key, &[]),
                    to: end(target, "exec", &[]),
                    text: None,
                });
            }
        }
        for wire in wires_in.iter().filter(|w| w.kind == "data" && w.from.node == *id) {
            if !outputs.iter().any(|p: &Pin| p.id == wire.from.pin) {
                let mut read = data_pin(&wire.from.pin, &TypeRef::Any);
                read.type_name = "?".into();
                outputs.push(read);
            }
        }
        nodes.push(Node {
            id: id.clone(),
            node_type,
            label: id.clone(),
            category: "unreadable".into(),
            description: None,
            node_key: None,
            language: None,
            line: broken.id.span.line,
            inputs: vec![sequence_pin("exec")],
            outputs,
            config: Vec::new(),
            settings: settings_of(node_type, value),
            unreadable: true,
        });
    }
    (nodes, wires)
}

/// The value of `key` in a YAML mapping.
fn entry<'a>(map: &'a YamlNode, key: &str) -> Option<&'a YamlNode> {
    map.as_map()?.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v)
}

fn end(node: &str, pin: &str, path: &[String]) -> End {
    End {
        node: node.to_string(),
        pin: pin.to_string(),
        path: path.to_vec(),
    }
}

/// Where a wire comes from: a request input on the Start node, or a node's output.
fn source(flow: &Flow, reference: &Reference) -> End {
    match &reference.root {
        RefRoot::Request(part) => {
            // A typed body is one pin (`body`, read into by the path); a body of fields,
            // the query, the headers and the path parameters are a pin each
            // (`body.currency`, `query.page`).
            let typed_body = matches!(flow.request.body, Some(BodySchema::Typed(_)));
            let (pin, rest) = match (part, reference.path.split_first()) {
                (RequestPart::Body, _) if typed_body => ("body".to_string(), &reference.path[..]),
                (part, Some((first, rest))) => (format!("{}.{first}", part.as_str()), rest),
                (part, None) => (part.as_str().to_string(), &reference.path[..]),
            };
            end(START, &pin, rest)
        }
        RefRoot::Node(id) => match reference.path.split_first() {
            Some((output, rest)) => end(&id.value, output, rest),
            None => end(&id.value, "", &[]),
        },
    }
}

/// The inputs of a node that take a wire: `(pin id, reference)`.
fn wired_inputs(node: &FlowNode) -> Vec<(String, &Reference)> {
    match &node.kind {
        NodeKind::Code(call) => call
            .inputs
            .iter()
            .filter_map(|(id, binding)| match binding {
                Binding::Wire(r) => Some((id.value.clone(), r)),
                Binding::Literal(_) => None,
            })
            .collect(),
        NodeKind::ReturnJson(response) => {
            let mut out = Vec::new();
            for (name, binding) in &response.headers {
                if let Binding::Wire(r) = binding {
                    out.push((format!("headers.{}", name.value), r));
                }
            }
            if let Some(body) = &response.body {
                template_wires(body, "body", &mut out);
            }
            out
        }
        _ => Vec::new(),
    }
}

fn template_wires<'a>(template: &'a Template, at: &str, out: &mut Vec<(String, &'a Reference)>) {
    match template {
        Template::Wire(r) => out.push((at.to_string(), r)),
        Template::Literal(_) => {}
        Template::Object(fields, _) => {
            for (name, value) in fields {
                template_wires(value, &format!("{at}.{}", name.value), out);
            }
        }
        Template::Array(items, _) => {
            for (i, item) in items.iter().enumerate() {
                template_wires(item, &format!("{at}.{i}"), out);
            }
        }
    }
}

fn start_node(flow: &Flow) -> Node {
    let mut outputs = vec![sequence_pin("start")];
    let request = &flow.request;
    match &request.body {
        Some(BodySchema::Typed(t)) => outputs.push(data_pin("body", &t.value)),
        Some(BodySchema::Fields(fields)) => {
            for f in fields {
                let mut pin = data_pin(&format!("body.{}", f.name.value), &f.type_ref.value);
                pin.optional = !f.required;
                pin.description = f.description.clone();
                pin.checks = checks(&f.constraints);
                outputs.push(pin);
            }
        }
        None => {}
    }
    for (part, fields) in [("query", &request.query), ("headers", &request.headers)] {
        for f in fields {
            let mut pin = data_pin(&format!("{part}.{}", f.name.value), &f.type_ref.value);
            pin.optional = !f.required;
            pin.description = f.description.clone();
            pin.checks = checks(&f.constraints);
            outputs.push(pin);
        }
    }
    for p in &request.params {
        outputs.push(data_pin(&format!("params.{}", p.value), &TypeRef::String));
    }
    Node {
        id: START.into(),
        node_type: "start",
        label: "Start".into(),
        category: "start".into(),
        description: flow.summary.clone(),
        node_key: None,
        language: None,
        line: flow.start.span.line,
        inputs: Vec::new(),
        outputs,
        config: vec![
            ("route".into(), flow.route.value.clone()),
            (
                "methods".into(),
                flow.methods
                    .iter()
                    .map(|m| m.value.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ],
        settings: Vec::new(),
        unreadable: false,
    }
}

/// The canvas's node for `node`; `written` is its mapping as the file writes it, where
/// the inspector's settings are read from (as for a node svc could not read).
fn flow_node(checked: &Checked, node: &FlowNode, written: Option<&YamlNode>) -> Node {
    let id = node.id.value.clone();
    let mut out = Node {
        id: id.clone(),
        node_type: node.kind.type_name(),
        label: id.clone(),
        category: "protection".into(),
        description: node.description.clone(),
        node_key: None,
        language: None,
        line: node.id.span.line,
        inputs: vec![sequence_pin("exec")],
        outputs: node.kind.edges().iter().map(|(name, _)| sequence_pin(name)).collect(),
        config: Vec::new(),
        settings: Vec::new(),
        unreadable: false,
    };
    out.settings = settings_of(out.node_type, |key| written_value(written, key));
    match &node.kind {
        NodeKind::Code(call) => {
            out.category = "code".into();
            out.node_key = Some(call.node_key.value.clone());
            let info = checked.catalog.nodes.get(call.node_key.value.as_str());
            if let Some(info) = info {
                let m = &info.manifest;
                out.label = m.name.clone();
                out.category = m.category.clone();
                out.description = node.description.clone().or(m.description.clone());
                out.language = Some(language(&info.code));
                out.inputs = vec![sequence_pin("exec")];
                out.inputs.extend(
                    m.inputs
                        .iter()
                        .filter(|(_, p)| !p.is_sequence())
                        .map(|(pin_id, p)| pin(pin_id, p)),
                );
                // After the sequence outputs (`next`, `on_fail`), the manifest's data outputs.
                out.outputs.extend(
                    m.outputs
                        .iter()
                        .filter(|(_, p)| !p.is_sequence())
                        .map(|(pin_id, p)| pin(pin_id, p)),
                );
                if call.on_fail.is_some() {
                    let mut failure = data_pin("failure", &TypeRef::Object);
                    failure.description = Some("`message` and `code` of `ctx.fail`, on the on_fail path".into());
                    out.outputs.push(failure);
                }
            }
            // What the flow gives each input: inline values on their pins; pins the
            // manifest does not have (an error, already reported) are drawn all the same.
            for (pin_id, binding) in &call.inputs {
                let at = out.inputs.iter().position(|p| p.id == pin_id.value);
                let pin = match at {
                    Some(i) => &mut out.inputs[i],
                    None => {
                        let mut unknown = data_pin(&pin_id.value, &TypeRef::Any);
                        unknown.type_name = "?".into();
                        out.inputs.push(unknown);
                        out.inputs.last_mut().expect("just pushed")
                    }
                };
                pin.line = Some(pin_id.span.line);
                if let Binding::Literal(literal) = binding {
                    pin.value = Some(literal.to_json());
                }
            }
        }
        NodeKind::ReturnJson(response) => {
            out.category = "response".into();
            out.config.push(("status".into(), response.status.value.to_string()));
            for (name, binding) in &response.headers {
                let mut pin = data_pin(&format!("headers.{}", name.value), &TypeRef::Any);
                pin.line = Some(name.span.line);
                if let Binding::Literal(literal) = binding {
                    pin.value = Some(literal.to_json());
                }
                out.inputs.push(pin);
            }
            if let Some(body) = &response.body {
                template_pins(body, "body", None, &mut out.inputs);
            }
        }
        // A protection: what it is set to, as the file writes it, and what it gives the
        // nodes after it. Its row says which settings it has: nothing here is per type.
        _ => {
            out.config = written_config(node.kind.row(), written);
            out.outputs
                .extend(node.kind.data_outputs().iter().map(|(name, t)| data_pin(name, t)));
        }
    }
    out
}

/// The value of setting `key` as the node's mapping writes it (`""` when it leaves the
/// key out).
fn written_value(written: Option<&YamlNode>, key: &str) -> Value {
    written
        .and_then(|n| entry(n, key))
        .map_or(Value::String(String::new()), |v| v.to_json())
}

/// A protection's settings as the inspector lists them (label, value as written), in its
/// row's order; the ones the node leaves out are not listed.
fn written_config(row: &svc_types::builtin_nodes::NodeType, written: Option<&YamlNode>) -> Vec<(String, String)> {
    fn text(value: &Value) -> Option<String> {
        match value {
            Value::Null => None,
            Value::String(s) if s.is_empty() => None,
            Value::String(s) => Some(s.clone()),
            Value::Array(items) => Some(items.iter().filter_map(text).collect::<Vec<_>>().join(", ")),
            Value::Object(_) => Some("given in the flow".into()),
            other => Some(other.to_string()),
        }
    }
    row.settings
        .iter()
        .filter_map(|setting| {
            let label = setting.inspector.map_or_else(|| setting.key.replace('_', " "), |f| f.label.to_string());
            Some((label, text(&written_value(written, setting.key))?))
        })
        .collect()
}

/// A response body's leaves as input pins (`body.quote`, `body.error.code`), literals
/// with their values; `line` is where the field was written.
fn template_pins(template: &Template, at: &str, line: Option<u32>, pins: &mut Vec<Pin>) {
    match template {
        Template::Wire(r) => {
            let mut pin = data_pin(at, &TypeRef::Any);
            pin.line = line.or(Some(r.span.line));
            pins.push(pin);
        }
        Template::Literal(literal) => {
            let mut pin = data_pin(at, &TypeRef::Any);
            pin.line = line.or(Some(literal.span.line));
            pin.value = Some(literal.to_json());
            pins.push(pin);
        }
        Template::Object(fields, _) => {
            for (name, value) in fields {
                template_pins(value, &format!("{at}.{}", name.value), Some(name.span.line), pins);
            }
        }
        Template::Array(items, _) => {
            for (i, item) in items.iter().enumerate() {
                template_pins(item, &format!("{at}.{i}"), line, pins);
            }
        }
    }
}

fn language(code: &NodeCode) -> &'static str {
    match code {
        NodeCode::Rust { .. } => "rust",
        NodeCode::TypeScript { .. } => "typescript",
    }
}

fn sequence_pin(id: &str) -> Pin {
    Pin {
        id: id.into(),
        type_name: "sequence".into(),
        items: None,
        sequence: true,
        optional: false,
        description: None,
        checks: None,
        default: None,
        takes_inline: false,
        value: None,
        line: None,
    }
}

fn data_pin(id: &str, t: &TypeRef) -> Pin {
    let (type_name, items) = type_strings(t);
    Pin {
        id: id.into(),
        type_name,
        items,
        sequence: false,
        optional: false,
        description: None,
        checks: None,
        default: None,
        takes_inline: true,
        value: None,
        line: None,
    }
}

fn type_strings(t: &TypeRef) -> (String, Option<String>) {
    match t {
        TypeRef::Array(inner) => ("type:array".into(), Some(inner.to_string())),
        t => (t.to_string(), None),
    }
}

fn checks(c: &svc_types::Constraints) -> Option<String> {
    (!c.is_empty()).then(|| c.describe())
}

/// A manifest pin as drawn.
fn pin(id: &str, p: &PinDefinition) -> Pin {
    let mut out = match &p.kind {
        PinKind::Sequence => sequence_pin(id),
        PinKind::Data(t) => data_pin(id, t),
    };
    out.optional = p.optional;
    out.description = p.description.clone();
    out.checks = checks(&p.constraints);
    out.default = p.default.clone();
    out.takes_inline = p.accepts_inline_value();
    out
}

/// Every node a flow can use: the built-in ones, then the project's code nodes by key.
fn palette(checked: &Checked) -> Vec<PaletteNode> {
    // The built-in types, from their rows (a code node is offered as each node of the
    // project's instead).
    let mut out: Vec<PaletteNode> = svc_types::builtin_nodes::NODE_TYPES
        .iter()
        .filter(|row| row.category != "code")
        .map(|row| PaletteNode {
            key: row.type_name.into(),
            label: row.label.into(),
            category: row.category.into(),
            description: Some(row.description.into()),
            language: "built-in",
            inputs: vec![sequence_pin("exec")],
            outputs: row
                .outputs
                .iter()
                .map(|o| sequence_pin(o.pin))
                .chain(row.data_outputs.iter().map(|o| data_pin(o, &TypeRef::String)))
                .collect(),
        })
        .collect();
    for (key, info) in &checked.catalog.nodes {
        let m = &info.manifest;
        out.push(PaletteNode {
            key: key.to_string(),
            label: m.name.clone(),
            category: m.category.clone(),
            description: m.description.clone(),
            language: language(&info.code),
            inputs: m.inputs.iter().map(|(id, p)| pin(id, p)).collect(),
            outputs: m.outputs.iter().map(|(id, p)| pin(id, p)).collect(),
        });
    }
    out
}

/// Where the project's flows read API keys from: the headers and query parameters whose
/// values traces must never show.
pub fn key_places(dir: &Path) -> super::traces::KeyPlaces {
    let mut diags = Diagnostics::new();
    let project = Project::load_confined(dir, &mut diags);
    let mut places = super::traces::KeyPlaces::default();
    for node in project.flows.iter().flat_map(|f| &f.nodes) {
        let Some(location) = node.kind.credential() else {
            continue;
        };
        match location {
            KeyLocation::Header(h) => places.headers.push(h.to_ascii_lowercase()),
            KeyLocation::Query(q) => places.query.push(q.clone()),
            // Traces never show `X-API-Key`, `Authorization` or `Cookie`.
            KeyLocation::HeaderXApiKey | KeyLocation::AuthorizationBearer | KeyLocation::Cookie(_) => {}
        }
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_hide_where_keys_and_tokens_are_read() {
        let dir = std::env::temp_dir().join(format!("svc-key-places-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("flows")).unwrap();
        std::fs::write(dir.join("svc.config.yaml"), "project_name: p\nworkspace_id: w\napi_id: a\n").unwrap();
        let flow = |check: &str| {
            format!(
                "route: r\nmethods: [GET]\nstart: c\nnodes:\n  c: {{ {check}, valid: ok, invalid: no }}\n  ok: {{ type: return-json, status: 200 }}\n  no: {{ type: return-json, status: 401 }}\n"
            )
        };
        let key = flow("type: check-api-key, location: \"header:X-Partner-Key\"");
        std::fs::write(dir.join("flows/key.yaml"), key).unwrap();
        let token = flow("type: check-jwt, issuer: https://id.example.com/, audiences: [api], location: \"query:access_token\"");
        std::fs::write(dir.join("flows/token.yaml"), token.replace("route: r", "route: t")).unwrap();
        let places = key_places(&dir);
        assert_eq!(places.headers, ["x-partner-key"]);
        assert_eq!(places.query, ["access_token"], "a Check JWT's query parameter is hidden too");

        // The inspector's settings and the listed ones, as the file writes them.
        let model = read(&dir);
        let route = model.routes.iter().find(|r| r.name == "token").expect("the token flow");
        let node = route.nodes.iter().find(|n| n.id == "c").expect("node c");
        let setting = |key: &str| node.settings.iter().find(|s| s.key == key).map(|s| s.value.clone());
        assert_eq!(setting("issuer"), Some(Value::from("https://id.example.com/")));
        assert_eq!(setting("audiences"), Some(serde_json::json!(["api"])));
        assert_eq!(setting("leeway"), Some(Value::from("")), "left out: empty");
        assert_eq!(setting("required_scopes"), Some(serde_json::json!([])), "a list left out: empty");
        assert!(node.config.contains(&("audiences".into(), "api".into())), "{:?}", node.config);
        assert!(node.outputs.iter().any(|p| p.id == "subject" && !p.sequence));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
