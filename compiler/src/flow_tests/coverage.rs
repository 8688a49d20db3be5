//! Flow coverage: which branches of each route the cases reached.
//!
//! A branch is one output of a check (`valid`/`invalid`, `sequence-ok`/`sequence-limited`,
//! `allowed`/`blocked`), a code node's `next` and its `on_fail` (when wired, or when the
//! node can fail and its failure then answers 500: a flow whose failures were never tried
//! is not covered), and each Return JSON node being the response. svc compiled the flow, so it knows every branch;
//! the server's trace (`serve --test-mode`) says which one each request took, and the
//! Return JSON reached is the target of the last step taken.

use crate::project::Project;
use serde::Serialize;
use svc_frontend::flow::{Flow, NodeKind};

/// Which way one check or node went, from the server's `x-svc-trace`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub node: String,
    /// The output taken (`valid`, `sequence-limited`, `next`, `on_fail`, …).
    pub output: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Branch {
    pub node: String,
    /// The output taken, or `returned` for a Return JSON node.
    pub output: String,
    /// The line of the node in its flow file.
    pub line: u32,
    pub reached: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct RouteCoverage {
    /// The flow's name (its file name without `.yaml`).
    pub route: String,
    pub file: String,
    pub covered: usize,
    pub total: usize,
    pub branches: Vec<Branch>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    pub covered: usize,
    pub total: usize,
    pub percent: f64,
    pub routes: Vec<RouteCoverage>,
}

/// Every branch of every route, none reached yet.
pub fn branches(project: &Project) -> Vec<RouteCoverage> {
    project
        .flows
        .iter()
        .map(|flow| {
            let mut branches = Vec::new();
            for node in &flow.nodes {
                let line = node.id.span.line;
                let mut add = |output: &str| {
                    branches.push(Branch {
                        node: node.id.value.clone(),
                        output: output.to_string(),
                        line,
                        reached: false,
                    })
                };
                match &node.kind {
                    NodeKind::ReturnJson(_) => add("returned"),
                    NodeKind::Code(code) => {
                        add("next");
                        if code.on_fail.is_some() {
                            add("on_fail");
                        } else if can_fail(project, &code.node_key.value) {
                            // Not wired: the failure is the route's 500.
                            add(UNWIRED_FAILURE);
                        }
                    }
                    kind => {
                        for (pin, edge) in kind.edges() {
                            if edge.is_some() {
                                add(pin);
                            }
                        }
                    }
                }
            }
            RouteCoverage {
                route: super::suite::flow_name(project, flow),
                file: project.sources.get(flow.file).display_path.clone(),
                covered: 0,
                total: branches.len(),
                branches,
            }
        })
        .collect()
}

/// The branch of a code node that can fail but has no `on_fail`.
const UNWIRED_FAILURE: &str = "failed";

/// Whether the code node `key` calls `ctx.fail` (read from its source file: a node's own
/// failures are the ones a flow answers; a panic or an exception is a defect, not a branch).
fn can_fail(project: &Project, key: &str) -> bool {
    let rust = project.node_crate.iter().flat_map(|k| &k.nodes);
    let typescript = project.script_nodes.iter().flat_map(|s| &s.nodes);
    rust.chain(typescript)
        .find(|n| n.manifest.node_key == key)
        .is_some_and(|n| project.sources.get(n.file).text.contains(".fail("))
}

/// Marks what one response's trace reached in `route`.
pub fn mark(route: &mut RouteCoverage, flow: &Flow, trace: &[Step]) {
    for step in trace {
        reach(route, &step.node, &step.output);
    }
    // The response came from the Return JSON node the last step (or Start) leads to.
    let returned = match trace.last() {
        Some(last) => flow.node(&last.node).and_then(|n| {
            n.kind
                .edges()
                .into_iter()
                .find(|(pin, _)| *pin == last.output)
                .and_then(|(_, edge)| edge.map(|e| e.value.clone()))
        }),
        None => Some(flow.start.value.clone()),
    };
    if let Some(target) = returned
        && flow
            .node(&target)
            .is_some_and(|n| matches!(n.kind, NodeKind::ReturnJson(_)))
    {
        reach(route, &target, "returned");
    }
}

fn reach(route: &mut RouteCoverage, node: &str, output: &str) {
    // The trace says `on_fail` for any failure; unwired, that is the `failed` branch.
    let unwired = (output == "on_fail").then_some(UNWIRED_FAILURE);
    if let Some(b) = route
        .branches
        .iter_mut()
        .find(|b| b.node == node && (b.output == output || Some(b.output.as_str()) == unwired))
    {
        b.reached = true;
    }
}

/// Totals, once every trace is marked.
pub fn finish(mut routes: Vec<RouteCoverage>) -> Coverage {
    for r in &mut routes {
        r.covered = r.branches.iter().filter(|b| b.reached).count();
    }
    let covered = routes.iter().map(|r| r.covered).sum();
    let total = routes.iter().map(|r| r.total).sum();
    Coverage {
        covered,
        total,
        percent: if total == 0 {
            100.0
        } else {
            covered as f64 * 100.0 / total as f64
        },
        routes,
    }
}

/// The human report: one line per route, then each branch no case reached.
pub fn render(coverage: &Coverage) -> String {
    let mut out = format!(
        "flow coverage: {} of {} branches ({:.1}%)\n",
        coverage.covered, coverage.total, coverage.percent
    );
    for r in &coverage.routes {
        out.push_str(&format!("  {:<24} {}/{}\n", r.route, r.covered, r.total));
        for b in r.branches.iter().filter(|b| !b.reached) {
            let what = if b.output == "returned" {
                format!("`{}` never returned", b.node)
            } else if b.output == UNWIRED_FAILURE {
                format!(
                    "`{}` never failed (its `on_fail` is not wired: a failure answers 500; wire it to a 4xx Return JSON, or add a case that fails)",
                    b.node
                )
            } else {
                format!("`{}` never took `{}`", b.node, b.output)
            };
            out.push_str(&format!("    {}:{}: {what}\n", r.file, b.line));
        }
    }
    out
}
