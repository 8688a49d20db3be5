//! `svc graph`: a flow drawn as Mermaid or Graphviz DOT.
//!
//! Solid arrows are sequence edges, labelled with the output they leave from (`valid`,
//! `sequence-limited`, `on_fail`); dotted arrows are data wires into code node inputs and
//! responses. Node names are positions (`n0`, `n1`, …) so that any node id renders.

use std::fmt::Write;
use svc_frontend::flow::{Binding, Flow, NodeKind, RefRoot, Template};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Mermaid,
    Dot,
}

/// How a node is drawn.
#[derive(Clone, Copy)]
enum Shape {
    Start,
    Check,
    Code,
    Return,
}

struct Drawing {
    /// (name, label, shape)
    nodes: Vec<(String, String, Shape)>,
    /// (from, to, label, data wire?)
    edges: Vec<(String, String, String, bool)>,
}

fn label(kind: &NodeKind, id: &str) -> (String, Shape) {
    let summary = kind.summary();
    match kind {
        NodeKind::Code(_) => (format!("{id}\n{summary}"), Shape::Code),
        NodeKind::ReturnJson(_) => (format!("{id}\nReturn JSON {summary}"), Shape::Return),
        _ => (format!("{id}\n{}\n{summary}", kind.row().label), Shape::Check),
    }
}

fn draw(flow: &Flow) -> Drawing {
    let name = |id: &str| -> String {
        match flow.nodes.iter().position(|n| n.id.value == id) {
            Some(i) => format!("n{i}"),
            None => format!("missing_{}", id.replace(|c: char| !c.is_ascii_alphanumeric(), "_")),
        }
    };
    let mut nodes = vec![(
        "start".to_string(),
        format!(
            "Start\n{} /{}",
            flow.methods
                .iter()
                .map(|m| m.value.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            flow.route.value
        ),
        Shape::Start,
    )];
    let mut edges = vec![("start".to_string(), name(&flow.start.value), String::new(), false)];
    for node in &flow.nodes {
        let (text, shape) = label(&node.kind, &node.id.value);
        let me = name(&node.id.value);
        nodes.push((me.clone(), text, shape));
        for (pin, target) in node.kind.edges() {
            if let Some(target) = target {
                edges.push((me.clone(), name(&target.value), pin.to_string(), false));
            }
        }
        let mut wires = Vec::new();
        match &node.kind {
            NodeKind::Code(call) => {
                for (input, binding) in &call.inputs {
                    if let Binding::Wire(r) = binding {
                        wires.push((r, input.value.clone()));
                    }
                }
            }
            NodeKind::ReturnJson(ret) => {
                if let Some(body) = &ret.body {
                    collect_template_wires(body, "body", &mut wires);
                }
                for (header, binding) in &ret.headers {
                    if let Binding::Wire(r) = binding {
                        wires.push((r, format!("header {}", header.value)));
                    }
                }
            }
            _ => {}
        }
        for (r, into) in wires {
            let (from, what) = match &r.root {
                RefRoot::Node(source) => (name(&source.value), r.path.join(".")),
                RefRoot::Request(part) => (
                    "start".to_string(),
                    std::iter::once(part.as_str().to_string())
                        .chain(r.path.iter().cloned())
                        .collect::<Vec<_>>()
                        .join("."),
                ),
            };
            let label = if what.is_empty() {
                into
            } else {
                format!("{what} → {into}")
            };
            edges.push((from, me.clone(), label, true));
        }
    }
    Drawing { nodes, edges }
}

fn collect_template_wires<'a>(t: &'a Template, at: &str, out: &mut Vec<(&'a svc_frontend::flow::Reference, String)>) {
    match t {
        Template::Wire(r) => out.push((r, at.to_string())),
        Template::Object(fields, _) => {
            for (k, v) in fields {
                collect_template_wires(v, &k.value, out);
            }
        }
        Template::Array(items, _) => {
            for v in items {
                collect_template_wires(v, at, out);
            }
        }
        Template::Literal(_) => {}
    }
}

/// The flow as text in `format`.
pub fn render(flow: &Flow, format: Format) -> String {
    let d = draw(flow);
    let mut out = String::new();
    match format {
        Format::Mermaid => {
            out.push_str("flowchart LR\n");
            for (name, text, shape) in &d.nodes {
                let text = text.replace('"', "#quot;").replace('\n', "<br/>");
                let (open, close) = match shape {
                    Shape::Start => ("([", "])"),
                    Shape::Check => ("{{", "}}"),
                    Shape::Return => ("[/", "/]"),
                    Shape::Code => ("[", "]"),
                };
                let _ = writeln!(out, "    {name}{open}\"{text}\"{close}");
            }
            for (from, to, label, data) in &d.edges {
                let arrow = if *data { "-.->" } else { "-->" };
                if label.is_empty() {
                    let _ = writeln!(out, "    {from} {arrow} {to}");
                } else {
                    let label = label.replace('"', "#quot;");
                    let _ = writeln!(out, "    {from} {arrow}|\"{label}\"| {to}");
                }
            }
        }
        Format::Dot => {
            out.push_str("digraph flow {\n    rankdir=LR;\n    node [fontname=\"Helvetica\"];\n");
            for (name, text, shape) in &d.nodes {
                let shape = match shape {
                    Shape::Start => "oval",
                    Shape::Check => "diamond",
                    Shape::Return => "parallelogram",
                    Shape::Code => "box",
                };
                let _ = writeln!(out, "    {name} [shape={shape}, label={}];", dot_string(text));
            }
            for (from, to, label, data) in &d.edges {
                let style = if *data { ", style=dashed" } else { "" };
                let _ = writeln!(out, "    {from} -> {to} [label={}{style}];", dot_string(label));
            }
            out.push_str("}\n");
        }
    }
    out
}

fn dot_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
