//! Wires drawn in the Builder: from an output pin to an input pin, checked by the same
//! code as `svc check` before anything is written, and turned into the edit of the flow
//! file a person would make (`next: price`, or `order: { from: request.body }`).
//!
//! A wire is refused while it is being drawn with the checker's own reason (a type
//! mismatch, an optional value into a required input, a value not known on every path
//! to the node), never by a second set of rules here.

use super::edit::{Edit, Step};
use crate::check::{self, Checked};
use crate::project::Project;
use serde::Deserialize;
use serde_json::json;
use std::path::Path;
use svc_frontend::flow::{NodeKind, read_reference};
use svc_frontend::yaml::{Node as YamlNode, Value as YamlValue};
use svc_frontend::{Diagnostics, Severity, Span};

/// The Start node's id in the Builder's model (not a flow node id, so never a node's).
const START: &str = super::model::START;

/// One end of a wire: a node and one of its pins, as the Builder's model names them.
#[derive(Debug, Clone, Deserialize)]
pub struct End {
    pub node: String,
    pub pin: String,
    /// Fields read past an output pin (`["total"]` for `price.quote.total`).
    #[serde(default)]
    pub path: Vec<String>,
}

fn keys(steps: &[&str]) -> Vec<Step> {
    steps.iter().map(|s| Step::Key(s.to_string())).collect()
}

/// The edits that draw the wire `from` → `to` in flow `route` of the project at `dir`,
/// or the checker's reason it cannot be drawn.
pub fn plan(dir: &Path, route: &str, from: &End, to: &End) -> Result<Vec<Edit>, String> {
    let mut diags = Diagnostics::new();
    let project = Project::load_confined(dir, &mut diags);
    let checked = check::check(&project, &mut diags);
    let index = project
        .flows
        .iter()
        .position(|f| super::model::route_name(&project, f.file) == route)
        .ok_or_else(|| format!("no flow `{route}`"))?;
    plan_in(&checked, index, from, to)
}

fn plan_in(checked: &Checked, index: usize, from: &End, to: &End) -> Result<Vec<Edit>, String> {
    let flow = &checked.project.flows[index];
    let node_index = |id: &str| flow.nodes.iter().position(|n| n.id.value == id);
    if to.node == START {
        return Err("the Start node has no inputs: wire into another node".into());
    }
    let target = node_index(&to.node).ok_or_else(|| format!("the flow has no node `{}`", to.node))?;
    // A sequence output: Start's `start`, or an edge of a node (`next`, `valid`, …).
    let sequence = if from.node == START {
        from.pin == "start"
    } else {
        let source = node_index(&from.node).ok_or_else(|| format!("the flow has no node `{}`", from.node))?;
        flow.nodes[source]
            .kind
            .edges()
            .iter()
            .any(|(name, _)| *name == from.pin)
    };
    if sequence {
        if to.pin != "exec" {
            return Err(format!(
                "`{}` orders execution: connect it to a node's `exec`, not to the value `{}`",
                from.pin, to.pin
            ));
        }
        if from.node == to.node {
            return Err(format!("`{}` cannot run itself next", to.node));
        }
        let path = if from.node == START {
            keys(&["start"])
        } else {
            keys(&["nodes", &from.node, &from.pin])
        };
        return Ok(vec![Edit::Set {
            path,
            value: json!(to.node),
        }]);
    }
    if to.pin == "exec" {
        return Err(format!(
            "`{}` carries a value: wire it into a data input; `exec` takes a sequence output such as `next`",
            from.pin
        ));
    }
    if let NodeKind::ReturnJson(_) = &flow.nodes[target].kind {
        return response_wire(checked, index, target, from, to);
    }
    let NodeKind::Code(call) = &flow.nodes[target].kind else {
        return Err(format!(
            "values are wired into the inputs of code nodes and the body and headers of Return JSON; `{}` takes its settings in the inspector",
            to.node
        ));
    };
    let info = checked
        .catalog
        .get(&call.node_key.value)
        .ok_or_else(|| format!("the node `{}` runs is not in the project", call.node_key.value))?;
    let pin = info
        .manifest
        .inputs
        .get(&to.pin)
        .ok_or_else(|| format!("`{}` has no input `{}`", call.node_key.value, to.pin))?;
    let Some(pin_type) = pin.type_ref() else {
        return Err(format!(
            "`{}` is a sequence input: connect a sequence output to it",
            to.pin
        ));
    };
    let (text, reference) = reference_of(flow.file, from)?;
    let mut diags = Diagnostics::new();
    let pin_name = format!("input `{}` of `{}`", to.pin, call.node_key.value);
    checked
        .flow_context(index)
        .check_wire(target, &reference, pin, pin_type, &pin_name, &mut diags);
    if diags.error_count() > 0 {
        return Err(first_error(&diags, &text));
    }
    Ok(vec![Edit::Set {
        path: keys(&["nodes", &to.node, "inputs", &to.pin]),
        value: json!({ "from": text }),
    }])
}

/// The reference a wire from `from` writes (`price.quote.total`), read as a flow file
/// reads it, so that the checker sees the same reference.
fn reference_of(file: svc_frontend::FileId, from: &End) -> Result<(String, svc_frontend::flow::Reference), String> {
    let mut text = if from.node == START {
        format!("request.{}", from.pin)
    } else {
        format!("{}.{}", from.node, from.pin)
    };
    for field in &from.path {
        text.push('.');
        text.push_str(field);
    }
    let mut diags = Diagnostics::new();
    let node = YamlNode {
        value: YamlValue::String(text.clone()),
        span: Span::file_start(file),
    };
    let reference = read_reference(&node, &mut diags).ok_or_else(|| first_error(&diags, &text))?;
    Ok((text, reference))
}

/// A wire into Return JSON `target`: into one of its headers (`headers.x-quote-status`:
/// text, as the checker requires) or a field of its body (`body.quote`, `body.error.code`:
/// any value known on every path), written where the body has it or would have it.
fn response_wire(checked: &Checked, index: usize, target: usize, from: &End, to: &End) -> Result<Vec<Edit>, String> {
    let flow = &checked.project.flows[index];
    let (part, rest) = to.pin.split_once('.').unwrap_or((to.pin.as_str(), ""));
    if !matches!(part, "body" | "headers") || rest.is_empty() {
        return Err(format!(
            "wire into a field of `{}`'s body or one of its headers, not `{}`",
            to.node, to.pin
        ));
    }
    let (text, reference) = reference_of(flow.file, from)?;
    let mut diags = Diagnostics::new();
    let context = checked.flow_context(index);
    if part == "headers" {
        context.check_header_wire(target, &reference, &mut diags);
    } else {
        context.reference(&reference, Some(target), &mut diags);
    }
    if diags.error_count() > 0 {
        return Err(first_error(&diags, &text));
    }
    let mut path = keys(&["nodes", &to.node, part]);
    if part == "headers" {
        path.push(Step::Key(rest.to_string()));
    } else {
        // `body.lines.0`: an index into a list the body already has.
        path.extend(rest.split('.').map(|s| match s.parse::<usize>() {
            Ok(i) => Step::Index(i),
            Err(_) => Step::Key(s.to_string()),
        }));
    }
    Ok(vec![Edit::Set {
        path,
        value: json!({ "from": text }),
    }])
}

fn first_error(diags: &Diagnostics, text: &str) -> String {
    diags
        .iter()
        .find(|d| d.severity == Severity::Error)
        .map(|d| {
            if d.help.is_empty() {
                d.message.clone()
            } else {
                format!("{} ({})", d.message, d.help)
            }
        })
        .unwrap_or_else(|| format!("`{text}` cannot be wired there"))
}
