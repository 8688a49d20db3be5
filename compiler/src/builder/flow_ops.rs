//! What the Builder does to a flow as a whole (add a node, rename one, delete one),
//! turned into the edits of its YAML ([`super::edit::Edit`]) that a person would make:
//! a renamed node's id changes everywhere it is named (`start`, the edges of other nodes,
//! `{ from: id.… }` wires), and a deleted node takes the edges and wires that named it.
//!
//! The operations read the flow file's meaning (its JSON) only to find what to change;
//! the changes themselves are byte-range edits, so the rest of the file is untouched.

use super::edit::{Edit, Step};
use serde_json::{Value, json};

/// The keys of a node that name the node that runs next: every built-in type's outputs.
pub fn edge_keys() -> impl Iterator<Item = &'static str> {
    let mut keys: Vec<&'static str> = Vec::new();
    for pin in svc_types::builtin_nodes::NODE_TYPES.iter().flat_map(|t| t.outputs.iter().map(|o| o.pin)) {
        // Check API Key and Check JWT share `valid` and `invalid`.
        if !keys.contains(&pin) {
            keys.push(pin);
        }
    }
    keys.into_iter()
}

fn path(steps: &[&str]) -> Vec<Step> {
    steps.iter().map(|s| Step::Key(s.to_string())).collect()
}

fn nodes(flow: &Value) -> Result<&serde_json::Map<String, Value>, String> {
    flow.get("nodes")
        .and_then(Value::as_object)
        .ok_or_else(|| "the flow has no `nodes` mapping".to_string())
}

/// The node a wire reads from: `price` in `price.quote.total`.
fn wire_node(reference: &str) -> &str {
    reference.split('.').next().unwrap_or(reference)
}

/// Every `{ from: … }` under `value` (at `at`, a path of keys and indexes), with its place.
fn wires<'v>(value: &'v Value, at: Vec<Step>, out: &mut Vec<(Vec<Step>, &'v str)>) {
    match value {
        Value::Object(m) => {
            if let (1, Some(Value::String(from))) = (m.len(), m.get("from")) {
                out.push((at, from));
                return;
            }
            for (k, v) in m {
                let mut p = at.clone();
                p.push(Step::Key(k.clone()));
                wires(v, p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let mut p = at.clone();
                p.push(Step::Index(i));
                wires(v, p, out);
            }
        }
        _ => {}
    }
}


/// The edits that rename node `old` to `new` and every mention of it.
pub fn rename_node(flow: &Value, old: &str, new: &str) -> Result<Vec<Edit>, String> {
    svc_types::names::check_flow_node_id(new).map_err(|e| format!("{}; {}", e.message, e.hint))?;
    let nodes = nodes(flow)?;
    if !nodes.contains_key(old) {
        return Err(format!("the flow has no node `{old}`"));
    }
    if nodes.contains_key(new) {
        return Err(format!("the flow already has a node `{new}`"));
    }
    let mut edits = Vec::new();
    if flow.get("start").and_then(Value::as_str) == Some(old) {
        edits.push(Edit::Set {
            path: path(&["start"]),
            value: json!(new),
        });
    }
    for (id, node) in nodes {
        // Edits after the rename address the node by its new id.
        let here = if id == old { new } else { id.as_str() };
        for key in edge_keys() {
            if node.get(key).and_then(Value::as_str) == Some(old) {
                edits.push(Edit::Set {
                    path: path(&["nodes", here, key]),
                    value: json!(new),
                });
            }
        }
        let mut found = Vec::new();
        wires(node, path(&["nodes", here]), &mut found);
        for (mut at, from) in found {
            if wire_node(from) == old {
                at.push(Step::Key("from".into()));
                edits.push(Edit::Set {
                    path: at,
                    value: json!(format!("{new}{}", &from[old.len()..])),
                });
            }
        }
    }
    edits.insert(
        0,
        Edit::Rename {
            path: path(&["nodes", old]),
            to: new.to_string(),
        },
    );
    Ok(edits)
}

/// The edits that delete node `id`, the edges that lead to it and the wires that read
/// from it. The start node cannot be deleted: another must be made the start first.
pub fn delete_node(flow: &Value, id: &str) -> Result<Vec<Edit>, String> {
    let nodes = nodes(flow)?;
    if !nodes.contains_key(id) {
        return Err(format!("the flow has no node `{id}`"));
    }
    if flow.get("start").and_then(Value::as_str) == Some(id) {
        return Err(format!("`{id}` is the flow's start: make another node the start first"));
    }
    let mut edits = vec![Edit::Remove {
        path: path(&["nodes", id]),
    }];
    for (other, node) in nodes.iter().filter(|(other, _)| other.as_str() != id) {
        for key in edge_keys() {
            if node.get(key).and_then(Value::as_str) == Some(id) {
                edits.push(Edit::Remove {
                    path: path(&["nodes", other, key]),
                });
            }
        }
        let mut found = Vec::new();
        wires(node, path(&["nodes", other]), &mut found);
        // From the last: removing an item of a list moves those after it.
        for (at, from) in found.into_iter().rev() {
            if wire_node(from) == id {
                edits.push(Edit::Remove { path: at });
            }
        }
    }
    Ok(edits)
}

/// The built-in node types the palette adds, with the settings a new one starts with
/// (what the examples use; the inspector changes them).
pub fn new_node(node_type: &str, node_key: Option<&str>) -> Result<Value, String> {
    let Some(row) = svc_types::builtin_nodes::node_type(node_type) else {
        return Err(format!("`{node_type}` is not a node type the Builder adds"));
    };
    row.new_node(node_key)
        .map(Value::Object)
        .ok_or_else(|| "a code node needs the key of the node it runs".to_string())
}

/// An id for a new node of `node_type` (`limit`, `limit-2`, …; a code node's from its
/// key's last part) that the flow does not use yet.
pub fn fresh_id(flow: &Value, node_type: &str, node_key: Option<&str>) -> String {
    let taken = |id: &str| flow.get("nodes").and_then(|n| n.get(id)).is_some();
    match svc_types::builtin_nodes::node_type(node_type) {
        Some(row) => row.fresh_id(node_key, taken),
        None => svc_types::builtin_nodes::CODE.fresh_id(node_key, taken),
    }
}

/// The edits that add a node of `node_type` as `id` at the end of `nodes`.
pub fn add_node(flow: &Value, id: &str, node_type: &str, node_key: Option<&str>) -> Result<Vec<Edit>, String> {
    svc_types::names::check_flow_node_id(id).map_err(|e| format!("{}; {}", e.message, e.hint))?;
    if nodes(flow)?.contains_key(id) {
        return Err(format!("the flow already has a node `{id}`"));
    }
    Ok(vec![Edit::Insert {
        path: path(&["nodes"]),
        key: id.to_string(),
        value: new_node(node_type, node_key)?,
        after: None,
    }])
}

/// A new route, as the Builder's form gives it.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewRoute {
    /// The flow file's name, without `.yaml`.
    pub name: String,
    /// The route, as a flow writes it (`orders/{id}`).
    pub route: String,
    pub methods: Vec<String>,
    #[serde(default)]
    pub summary: Option<String>,
    /// A structure the request body is read as (`object:Order`), if any.
    #[serde(default)]
    pub body: Option<String>,
    /// The query parameters and headers the route reads (`request.query`,
    /// `request.headers`).
    #[serde(default)]
    pub query: Vec<NewInput>,
    #[serde(default)]
    pub headers: Vec<NewInput>,
}

impl NewRoute {
    /// Why this cannot be written as a flow, if it cannot: each part is checked before
    /// any of it reaches the file (the comment line above the route is written as is).
    pub fn problem(&self) -> Option<String> {
        if self.route.trim().is_empty() || self.methods.is_empty() {
            return Some("a route needs a path and at least one method".into());
        }
        if self.route.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Some("a route is a path such as `orders/{id}`: no spaces, line breaks or control characters".into());
        }
        if let Some(bad) = self
            .methods
            .iter()
            .find(|m| svc_frontend::flow::Method::parse(m).is_none_or(|known| known.as_str() != m.as_str()))
        {
            let known: Vec<&str> = svc_frontend::flow::Method::ALL.iter().map(|m| m.as_str()).collect();
            return Some(format!(
                "`{}` is not a method a flow answers: one of {}",
                bad.escape_debug(),
                known.join(", ")
            ));
        }
        None
    }
}

/// A query parameter or header of a new route.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewInput {
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub description: Option<String>,
}

impl NewInput {
    /// As the examples write one: `name: string` when required and undescribed, else
    /// `name: { type: string, required: false, description: … }`.
    fn flow_value(&self) -> Value {
        let description = self.description.as_deref().map(str::trim).filter(|d| !d.is_empty());
        if self.required && description.is_none() {
            return json!(self.type_name);
        }
        let mut field = serde_json::Map::new();
        field.insert("type".into(), json!(self.type_name));
        if !self.required {
            field.insert("required".into(), json!(false));
        }
        if let Some(d) = description {
            field.insert("description".into(), json!(d));
        }
        Value::Object(field)
    }
}

/// `request.query` or `request.headers` of a new flow.
fn inputs(list: &[NewInput]) -> Option<Value> {
    let fields: serde_json::Map<String, Value> = list
        .iter()
        .filter(|i| !i.name.trim().is_empty())
        .map(|i| (i.name.trim().to_string(), i.flow_value()))
        .collect();
    (!fields.is_empty()).then_some(Value::Object(fields))
}

/// The text of a new flow file, as the examples are written: the editor's schema line
/// when the project's other flows have one, a comment with the method and path it
/// answers, then the route, and a Start that answers 200.
pub fn new_flow_text(new: &NewRoute, served_path: &str, schema_line: Option<&str>) -> String {
    let mut text = String::new();
    if let Some(line) = schema_line {
        text.push_str(line);
        text.push('\n');
    }
    let methods = new.methods.join(", ");
    text.push_str(&format!("# {methods} {served_path}\n"));
    let mut doc = serde_json::Map::new();
    doc.insert("route".into(), json!(new.route));
    doc.insert("methods".into(), json!(new.methods));
    if let Some(summary) = new.summary.as_deref().filter(|s| !s.trim().is_empty()) {
        doc.insert("summary".into(), json!(summary.trim()));
    }
    let mut request = serde_json::Map::new();
    if let Some(body) = new.body.as_deref().filter(|s| !s.is_empty()) {
        request.insert("body".into(), json!(body));
    }
    if let Some(query) = inputs(&new.query) {
        request.insert("query".into(), query);
    }
    if let Some(headers) = inputs(&new.headers) {
        request.insert("headers".into(), headers);
    }
    if !request.is_empty() {
        doc.insert("request".into(), Value::Object(request));
    }
    doc.insert("start".into(), json!("respond"));
    doc.insert(
        "nodes".into(),
        json!({ "respond": { "type": "return-json", "status": 200 } }),
    );
    // Written by the same layer as every edit, key by key into a block mapping.
    let mut yaml = svc_frontend::yaml_edit::YamlDoc::parse("_: 0\n").expect("a mapping");
    for (key, value) in &doc {
        let _ = yaml.insert(&[], key, value, None);
    }
    let _ = yaml.remove(&[svc_frontend::yaml_edit::Seg::Key("_")]);
    text.push_str(yaml.text());
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::edit::edited;

    const FLOW: &str = "route: orders\nmethods: [POST]\nstart: auth\nnodes:\n  auth: { type: check-api-key, valid: price, invalid: denied }\n  # Prices it.\n  price:\n    type: code\n    node: shop.price-order\n    inputs:\n      order: { from: request.body }\n    next: ok\n  ok:\n    type: return-json\n    status: 200\n    body:\n      total: { from: price.quote.total }\n      lines: [{ from: price.line_count }, 1]\n  denied: { type: return-json, status: 401 }\n";

    fn meaning(text: &str) -> Value {
        svc_frontend::yaml::parse(svc_frontend::FileId(0), text)
            .unwrap()
            .to_json()
    }

    #[test]
    fn a_renamed_node_is_renamed_wherever_it_is_named() {
        let edits = rename_node(&meaning(FLOW), "price", "quote").unwrap();
        let out = edited(FLOW, &edits).unwrap();
        assert_eq!(
            out,
            FLOW.replace("  price:\n", "  quote:\n")
                .replace("valid: price,", "valid: quote,")
                .replace("from: price.", "from: quote.")
        );
        assert!(
            rename_node(&meaning(FLOW), "price", "ok")
                .unwrap_err()
                .contains("already has")
        );
        assert!(rename_node(&meaning(FLOW), "price", "Price Order").is_err());
        let start = edited(FLOW, &rename_node(&meaning(FLOW), "auth", "check").unwrap()).unwrap();
        assert!(start.contains("start: check\n") && start.contains("  check: { type: check-api-key"));
    }

    #[test]
    fn a_deleted_node_takes_its_edges_wires_and_comment() {
        let out = edited(FLOW, &delete_node(&meaning(FLOW), "price").unwrap()).unwrap();
        assert_eq!(
            out,
            "route: orders\nmethods: [POST]\nstart: auth\nnodes:\n  auth: { type: check-api-key, invalid: denied }\n  ok:\n    type: return-json\n    status: 200\n    body:\n      lines: [1]\n  denied: { type: return-json, status: 401 }\n"
        );
        assert!(delete_node(&meaning(FLOW), "auth").unwrap_err().contains("start"));
    }

    #[test]
    fn a_new_node_gets_a_free_id_and_its_block() {
        let flow = meaning(FLOW);
        assert_eq!(fresh_id(&flow, "return-json", None), "respond");
        assert_eq!(fresh_id(&flow, "code", Some("shop.price")), "price-2");
        let out = edited(FLOW, &add_node(&flow, "limit", "rate-limit", None).unwrap()).unwrap();
        assert!(
            out.ends_with(
                "  denied: { type: return-json, status: 401 }\n  limit:\n    type: rate-limit\n    limit: 60\n    window: 1m\n    by: ip\n"
            ),
            "{out}"
        );
        assert!(add_node(&flow, "x", "teleport", None).is_err());
    }

    #[test]
    fn a_new_flow_reads_like_the_examples() {
        let new = NewRoute {
            name: "orders".into(),
            route: "orders/{id}".into(),
            methods: vec!["GET".into()],
            summary: Some("Shows an order".into()),
            body: None,
            query: vec![],
            headers: vec![],
        };
        let text = new_flow_text(
            &new,
            "/acme/shop/orders/{id}",
            Some("# yaml-language-server: $schema=../schemas/flow.schema.json"),
        );
        assert_eq!(
            text,
            "# yaml-language-server: $schema=../schemas/flow.schema.json\n# GET /acme/shop/orders/{id}\nroute: orders/{id}\nmethods: [GET]\nsummary: Shows an order\nstart: respond\nnodes:\n  respond: { type: return-json, status: 200 }\n"
        );
    }

    #[test]
    fn a_new_flows_request_inputs_are_written_as_the_examples_write_them() {
        let input = |name: &str, type_name: &str, required: bool, description: Option<&str>| NewInput {
            name: name.into(),
            type_name: type_name.into(),
            required,
            description: description.map(str::to_string),
        };
        let new = NewRoute {
            name: "greeting".into(),
            route: "greeting".into(),
            methods: vec!["POST".into()],
            summary: None,
            body: Some("object:Order".into()),
            query: vec![
                input("name", "string", false, Some("Who to greet")),
                input("tone", "enum-value:Tone", true, None),
                input(" ", "string", true, None),
            ],
            headers: vec![input("x-request-id", "string", false, None)],
        };
        let text = new_flow_text(&new, "/demo/hello/greeting", None);
        assert_eq!(
            text,
            "# POST /demo/hello/greeting\nroute: greeting\nmethods: [POST]\nrequest:\n  body: object:Order\n  query:\n    name: { type: string, required: false, description: Who to greet }\n    tone: enum-value:Tone\n  headers:\n    x-request-id: { type: string, required: false }\nstart: respond\nnodes:\n  respond: { type: return-json, status: 200 }\n"
        );
        let flow = meaning(&text);
        assert_eq!(flow["request"]["query"]["tone"], "enum-value:Tone");
    }
}
