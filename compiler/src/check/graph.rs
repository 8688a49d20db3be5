//! The shape of a flow: its sequence edges, and what is known to have happened on every
//! path to each node.
//!
//! Checks: every edge names a node; both outputs of every check node are wired; every
//! path ends in a response (a code node continues at `next`); there is no cycle; every
//! node is reachable (a warning otherwise).
//!
//! Then, since the graph is acyclic, a forward "must" analysis in topological order
//! computes, for each node, the facts true on *every* path from Start to it: which code
//! nodes have produced outputs, which have failed, and which Check API Key nodes have
//! established an identity. A data reference is valid only if its fact holds.

use std::collections::{BTreeMap, BTreeSet};
use svc_frontend::flow::{Flow, NodeKind};
use svc_frontend::{Code, Diagnostic, Diagnostics, Span};

/// Something known to have happened before a node runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fact {
    /// The code node at this index ran and produced its outputs.
    Outputs(usize),
    /// The code node at this index failed (its `on_fail` edge was taken).
    Failure(usize),
    /// The Check API Key node at this index found a valid key, or the Check JWT node a
    /// valid token.
    Identity(usize),
    /// The check at this index authenticated the caller without an identity to read
    /// (Check Signature: the webhook's provider signed it).
    Authenticated(usize),
}

/// A sequence edge: from node, output pin, to node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeRef {
    pub from: Option<usize>,
    pub pin: &'static str,
    pub to: usize,
}

/// The analysed graph of one flow.
#[derive(Debug, Default)]
pub struct FlowGraph {
    pub index: BTreeMap<String, usize>,
    /// The node Start leads to.
    pub start: Option<usize>,
    /// Outgoing edges per node.
    pub succ: Vec<Vec<EdgeRef>>,
    /// Incoming edges per node (`from: None` is the Start node).
    pub preds: Vec<Vec<EdgeRef>>,
    pub reachable: Vec<bool>,
    /// Reachable nodes in topological order; empty when the flow has a cycle.
    pub topo: Vec<usize>,
    /// Facts holding on every path to each reachable node (None: unreachable, or a cycle).
    pub facts_in: Vec<Option<BTreeSet<Fact>>>,
}

impl FlowGraph {
    pub fn facts(&self, node: usize) -> Option<&BTreeSet<Fact>> {
        self.facts_in.get(node).and_then(|f| f.as_ref())
    }
}

/// What taking output `pin` of node `i` establishes.
fn produced(flow: &Flow, i: usize, pin: &str) -> Option<Fact> {
    match (&flow.nodes[i].kind, pin) {
        (NodeKind::Code(_), "next") => Some(Fact::Outputs(i)),
        (NodeKind::Code(_), "on_fail") => Some(Fact::Failure(i)),
        (NodeKind::Code(_), _) => None,
        // A check with data outputs (Check API Key's `user`) gives them on the output it
        // lets a request through by, its first; one that authenticates without them
        // (Check Signature) says so there.
        (kind, pin) => {
            let row = kind.row();
            let passed = row.outputs.first().is_some_and(|o| o.pin == pin);
            match (passed, row.data_outputs.is_empty()) {
                (true, false) => Some(Fact::Identity(i)),
                (true, true) if row.authenticates => Some(Fact::Authenticated(i)),
                _ => None,
            }
        }
    }
}

pub fn analyse(flow: &Flow, diags: &mut Diagnostics) -> FlowGraph {
    let n = flow.nodes.len();
    let mut g = FlowGraph {
        index: flow
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| (node.id.value.clone(), i))
            .collect(),
        succ: vec![Vec::new(); n],
        preds: vec![Vec::new(); n],
        reachable: vec![false; n],
        facts_in: vec![None; n],
        ..Default::default()
    };
    let ids: Vec<&str> = flow.nodes.iter().map(|n| n.id.value.as_str()).collect();
    let resolve = |target: &svc_frontend::flow::Spanned<String>, diags: &mut Diagnostics| -> Option<usize> {
        if let Some(&i) = g.index.get(&target.value) {
            return Some(i);
        }
        if !flow.is_broken(&target.value) {
            let hint = svc_types::assets::nearest_or_all(&target.value, &ids, "the nodes of this flow are");
            diags.push(
                Diagnostic::new(
                    Code::UnknownNodeId,
                    target.span,
                    format!("no node `{}` in this flow", target.value),
                )
                .label("unknown node")
                .help(hint),
            );
        }
        None
    };

    g.start = resolve(&flow.start, diags);
    if let Some(s) = g.start {
        g.preds[s].push(EdgeRef {
            from: None,
            pin: "start",
            to: s,
        });
    }
    for (i, node) in flow.nodes.iter().enumerate() {
        for (pin, target) in node.kind.edges() {
            match target {
                Some(t) => {
                    if let Some(to) = resolve(t, diags) {
                        let e = EdgeRef { from: Some(i), pin, to };
                        g.succ[i].push(e);
                        g.preds[to].push(e);
                    }
                }
                None => report_unwired(flow, i, pin, diags),
            }
        }
    }

    // Reachability from Start.
    let mut stack: Vec<usize> = g.start.into_iter().collect();
    while let Some(i) = stack.pop() {
        if !std::mem::replace(&mut g.reachable[i], true) {
            stack.extend(g.succ[i].iter().map(|e| e.to));
        }
    }
    // A node that could not be read has no edges: what follows it would look unreachable.
    // Its own error is enough until it is fixed.
    let broken = !flow.broken.is_empty();
    for (i, node) in flow.nodes.iter().enumerate() {
        if !g.reachable[i] && g.start.is_some() && !broken {
            diags.push(
                Diagnostic::new(
                    Code::UnreachableNode,
                    node.id.span,
                    format!("node `{}` is never reached", node.id.value),
                )
                .label("no path from Start leads here")
                .help("wire an output to it, or remove it"),
            );
        }
    }

    // Cycles: depth-first search over reachable nodes, reporting each back edge.
    let Some(start) = g.start else { return g };
    let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
    let mut path: Vec<usize> = Vec::new();
    let mut post: Vec<usize> = Vec::new();
    let mut has_cycle = false;
    // Iterative DFS: (node, next successor index).
    let mut work: Vec<(usize, usize)> = vec![(start, 0)];
    state[start] = 1;
    path.push(start);
    while let Some(&mut (node, ref mut next)) = work.last_mut() {
        if let Some(edge) = g.succ[node].get(*next).copied() {
            *next += 1;
            match state[edge.to] {
                0 => {
                    state[edge.to] = 1;
                    path.push(edge.to);
                    work.push((edge.to, 0));
                }
                1 => {
                    has_cycle = true;
                    let from = path.iter().position(|&p| p == edge.to).unwrap_or(0);
                    let cycle: Vec<&str> = path[from..]
                        .iter()
                        .chain(std::iter::once(&edge.to))
                        .map(|&i| flow.nodes[i].id.value.as_str())
                        .collect();
                    let span = edge_span(flow, node, edge.pin);
                    diags.push(
                        Diagnostic::new(Code::Cycle, span, format!("the flow loops: {}", cycle.join(" → ")))
                            .label("this edge goes back to an earlier node")
                            .help("a route runs each node at most once, from Start to a response; remove the edge that goes back"),
                    );
                }
                _ => {}
            }
        } else {
            state[node] = 2;
            post.push(node);
            path.pop();
            work.pop();
        }
    }
    if has_cycle {
        return g;
    }
    post.reverse();
    g.topo = post;

    // Facts on every path, in topological order.
    for &i in &g.topo {
        let mut acc: Option<BTreeSet<Fact>> = None;
        for e in &g.preds[i] {
            let incoming = match e.from {
                None => BTreeSet::new(),
                Some(p) => {
                    let Some(mut f) = g.facts_in[p].clone() else { continue };
                    f.extend(produced(flow, p, e.pin));
                    f
                }
            };
            acc = Some(match acc {
                None => incoming,
                Some(a) => a.intersection(&incoming).copied().collect(),
            });
        }
        g.facts_in[i] = acc;
    }
    g
}

/// The span of the key of output `pin` of node `i` (or of the node when unwired).
pub fn edge_span(flow: &Flow, i: usize, pin: &str) -> Span {
    flow.nodes[i]
        .kind
        .edges()
        .into_iter()
        .find(|(p, _)| *p == pin)
        .and_then(|(_, t)| t.map(|t| t.span))
        .unwrap_or(flow.nodes[i].id.span)
}

fn report_unwired(flow: &Flow, i: usize, pin: &'static str, diags: &mut Diagnostics) {
    let node = &flow.nodes[i];
    let id = &node.id.value;
    if node.kind.row().outputs.iter().any(|o| o.pin == pin && o.optional) {
        return;
    }
    let d = match (&node.kind, pin) {
        (NodeKind::Code(c), "next") => Diagnostic::new(
            Code::PathWithoutResponse,
            node.id.span,
            format!("the flow can end after `{id}` without a response"),
        )
        .label(format!("`{}` has no `next`", c.node_key.value))
        .help(format!(
            "wire `next: <node-id>` on `{id}` to the node that runs after it, ending in a `return-json` node"
        )),
        (kind, pin) => {
            let status = match kind.row().failure_output() {
                Some((failure, status)) if failure == pin => {
                    format!(" (usually a `return-json` with status {status})")
                }
                _ => String::new(),
            };
            Diagnostic::new(
                Code::CheckOutputUnwired,
                node.id.span,
                format!("output `{pin}` of {} node `{id}` is not wired", kind.type_name()),
            )
            .label(format!("`{pin}` goes nowhere"))
            .help(format!(
                "add `{pin}: <node-id>` to `{id}`{status}; each output of a check node must lead somewhere"
            ))
        }
    };
    diags.push(d);
}
