//! The checker: resolve every name, type every wire, and analyse every flow graph,
//! collecting all problems before stopping.
//!
//! - [`catalog`]: the code nodes, by key, against the assets.
//! - [`graph`]: the shape of each flow and what has run on every path.
//! - [`flow`]: names, types, literals and lints within a flow.
//! - [`routes`]: routes across flows.
//! - [`constraints`]: the patterns of field constraints.
//! - [`types`]: the type rules.

pub mod catalog;
pub mod constraints;
pub mod flow;
pub mod graph;
pub mod routes;
pub mod scripts;
pub mod types;

use crate::project::Project;
use catalog::Catalog;
use graph::FlowGraph;
use std::collections::BTreeSet;
use svc_frontend::node_crate::SecretUse;
use svc_frontend::{Code, Diagnostic, Diagnostics};
use svc_types::Assets;

/// A project that has been checked: what later stages (lowering, emitting) build on.
pub struct Checked<'a> {
    pub project: &'a Project,
    pub assets: Assets,
    pub catalog: Catalog<'a>,
    /// One graph per flow, in `project.flows` order.
    pub graphs: Vec<FlowGraph>,
    /// The TypeScript modules compiled for the server (`None`: the project has none).
    pub scripts: Option<scripts::CompiledScripts>,
    /// Whether any error was reported (lowering requires none).
    pub has_errors: bool,
}

impl Checked<'_> {
    /// The context the checker read flow `index` in (types of references, wires).
    pub fn flow_context(&self, index: usize) -> flow::FlowContext<'_> {
        flow::FlowContext {
            flow: &self.project.flows[index],
            graph: &self.graphs[index],
            assets: &self.assets,
            catalog: &self.catalog,
        }
    }

    /// Every wire whose value is checked against its pin's constraints at run time
    /// ([`flow::UncheckedWire`]).
    pub fn unchecked_wires(&self) -> Vec<flow::UncheckedWire> {
        let mut out = Vec::new();
        for (index, flow) in self.project.flows.iter().enumerate() {
            let ctx = self.flow_context(index);
            for i in 0..flow.nodes.len() {
                out.extend(ctx.unchecked_wires(i));
            }
        }
        out
    }
}

/// Checks a loaded project, adding every problem to `diags`.
pub fn check<'a>(project: &'a Project, diags: &mut Diagnostics) -> Checked<'a> {
    let assets = project.config.as_ref().map(|c| c.assets.clone()).unwrap_or_default();
    let catalog = Catalog::build(
        project.node_crate.as_ref(),
        project.script_nodes.as_ref(),
        &assets,
        diags,
    );
    let mut graphs = Vec::with_capacity(project.flows.len());
    for flow in &project.flows {
        let graph = graph::analyse(flow, diags);
        // Without a readable config every type would look unknown: report the config's
        // own problems, and the flows' shapes, but not a cascade of type errors.
        if project.config.is_some() {
            flow::FlowContext {
                flow,
                graph: &graph,
                assets: &assets,
                catalog: &catalog,
            }
            .check(diags);
        }
        graphs.push(graph);
    }
    routes::check(&project.flows, diags);
    constraints::check_patterns(project, diags);
    if let Some(config) = &project.config
        && (project.node_crate.is_some() || project.script_nodes.is_some())
    {
        let rust = project.node_crate.iter().flat_map(|k| &k.secrets);
        let typescript = project.script_nodes.iter().flat_map(|s| &s.secrets);
        let secrets: Vec<&SecretUse> = rust.chain(typescript).collect();
        // A node file that could not be read may read any secret: no unused-secret lint then.
        let incomplete = project.node_crate.as_ref().is_some_and(|k| k.unreadable)
            || project.script_nodes.as_ref().is_some_and(|s| s.unreadable);
        let by_flows: Vec<&str> = project
            .flows
            .iter()
            .flat_map(|f| &f.nodes)
            .flat_map(|n| n.kind.secrets())
            .map(|s| s.value.as_str())
            .collect();
        check_secrets(
            config,
            project.config_is_typescript(),
            &secrets,
            &by_flows,
            incomplete,
            diags,
        );
    }
    if let Some(krate) = &project.node_crate {
        check_assets_reach_rust_nodes(project, krate, diags);
    }
    let scripts = scripts::compile(project, diags);
    let has_errors = diags.has_errors();
    Checked {
        project,
        assets,
        catalog,
        graphs,
        scripts,
        has_errors,
    }
}

/// `include_assets!()` generates the node crate's asset types from `svc.config.yaml` at
/// compile time (the macro cannot read TypeScript: node crates do not build oxc). With
/// `svc.config.ts` it would fail in the build, so it is an error here.
fn check_assets_reach_rust_nodes(
    project: &Project,
    krate: &svc_frontend::node_crate::NodeCrate,
    diags: &mut Diagnostics,
) {
    let Some(call) = krate.include_assets else {
        return;
    };
    if !project.config_is_typescript() {
        return;
    }
    diags.push(
        Diagnostic::new(
            Code::RustNodesWithTypeScriptConfig,
            call,
            "`include_assets!()` reads `svc.config.yaml`, and this project's config is `svc.config.ts`",
        )
        .label("needs svc.config.yaml")
        .help(
            "Rust nodes take their asset types from svc.config.yaml: keep the config in YAML for a project with \
             Rust nodes (a project mixing Rust nodes with svc.config.ts is not supported yet)",
        ),
    );
}

/// `ctx.secret("X")` needs `X` declared; a declared secret that no node and no flow
/// (`by_flows`: Check JWT's and Check Signature's) reads is a warning.
fn check_secrets(
    config: &svc_frontend::config::Config,
    typescript: bool,
    secrets: &[&SecretUse],
    by_flows: &[&str],
    incomplete: bool,
    diags: &mut Diagnostics,
) {
    let declared: BTreeSet<&str> = config.assets.secrets.iter().map(|s| s.name.as_str()).collect();
    for used in secrets {
        if !declared.contains(used.name.as_str()) {
            let declare = if typescript {
                format!(
                    "declare it in svc.config.ts: `defineSecret({{ name: \"{}\" }})` in `collectAssets([…])`",
                    used.name
                )
            } else {
                format!(
                    "declare it in svc.config.yaml: `secrets: [{{ name: {}, description: … }}]`",
                    used.name
                )
            };
            let hint = match svc_types::assets::closest(&used.name, declared.iter().copied()) {
                Some(best) => format!("did you mean `{best}`? Otherwise {declare}"),
                None => declare,
            };
            diags.push(
                Diagnostic::new(
                    Code::UndeclaredSecret,
                    used.span,
                    format!("secret `{}` is not declared", used.name),
                )
                .label("read here")
                .help(hint),
            );
        }
    }
    for (i, s) in config.assets.secrets.iter().enumerate() {
        if !incomplete && !secrets.iter().any(|u| u.name == s.name) && !by_flows.contains(&s.name.as_str()) {
            diags.push(
                Diagnostic::new(
                    Code::UnusedSecret,
                    config.spans.secrets[i],
                    format!("secret `{}` is declared but no node reads it", s.name),
                )
                .label("unused")
                .help("remove the declaration, or read it with `ctx.secret(…)`"),
            );
        }
    }
}
