//! Lowering: a checked project becomes an IR that says, for every route, exactly what
//! straight-line code to emit. The emitter (`emit/`) only prints it.
//!
//! Per route, the flow graph becomes a tree of [`NodeIr`] rooted at the Start node's
//! target. A node reached by one edge is inlined at that edge; a node reached by several
//! edges becomes a [`BlockIr`] (an `async fn` taking, as parameters, the values it and its
//! successors use), called from each edge. Every wire becomes a [`ValueIr`]: where the
//! value lives (a request input, a node's outputs, a failure, an identity) and the path of
//! fields into it, with the optionality of each step.
//!
//! A wire normally clones what it reads into the node's inputs. Where the node is the
//! value's last reader, [`moves`] has it moved instead (see that module).
//!
//! [`ir`] is the IR; this module lowers a project, [`route`] one route's flow.

use crate::check::Checked;
use std::collections::{BTreeMap, BTreeSet};
use svc_frontend::flow::NodeKind;
use svc_frontend::node_crate::NodeCode;
use svc_types::Assets;

mod ir;
mod route;

pub use ir::*;
use route::FlowLowerer;

/// Lowers a checked project (which must have no errors).
/// The structures whose values need checking, in definition order: those with a
/// constrained field, and those with a field of such a structure (to any depth).
pub fn validated_structures(assets: &Assets) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = BTreeSet::new();
    loop {
        let before = out.len();
        for s in &assets.structures {
            if out.contains(&s.name) {
                continue;
            }
            let needs = s
                .fields
                .iter()
                .any(|f| !f.constraints.is_empty() || f.type_ref().is_some_and(|t| checks_type(&t, &out)));
            if needs {
                out.insert(s.name.clone());
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

pub fn lower(checked: &Checked, typescript: TypeScriptNodes) -> ProjectIr {
    let project = checked.project;
    let config = project
        .config
        .as_ref()
        .expect("a checked project without errors has a config");
    let mut routes: Vec<RouteIr> = Vec::new();
    let mut used: BTreeMap<String, UsedNode> = BTreeMap::new();
    let mut modules: BTreeSet<String> = BTreeSet::new();
    let boxed = svc_frontend::assets_codegen::recursive_fields(&checked.assets);
    let validated = validated_structures(&checked.assets);
    for (flow_index, (flow, graph)) in project.flows.iter().zip(&checked.graphs).enumerate() {
        let file = project.sources.get(flow.file).display_path.clone();
        let mut module = module_name(&file);
        while !modules.insert(module.clone()) {
            module.push('_');
        }
        let lowerer = FlowLowerer {
            checked,
            flow_index,
            flow,
            graph,
            assets: &checked.assets,
            boxed: &boxed,
            validated: &validated,
            blocks: Vec::new(),
            scope: route::Scope::default(),
            held_names: BTreeSet::new(),
        };
        let route = lowerer.lower(module, file, config);
        for node in &flow.nodes {
            if let NodeKind::Code(c) = &node.kind
                && let Some(info) = checked.catalog.get(&c.node_key.value)
            {
                used.entry(c.node_key.value.clone()).or_insert_with(|| UsedNode {
                    key: c.node_key.value.clone(),
                    code: info.code.clone(),
                    manifest: info.manifest.clone(),
                });
            }
        }
        routes.push(route);
    }
    routes.sort_by(|a, b| (&a.route, &a.methods).cmp(&(&b.route, &b.methods)));
    let node_crate = project.node_crate.as_ref().map(|k| NodeCrateIr {
        package: k.package_name.clone(),
        crate_name: k.crate_name.clone(),
        dir: k.dir.clone(),
    });
    let version = project
        .node_crate
        .as_ref()
        .and_then(|k| k.version.clone())
        .unwrap_or_else(|| "0.1.0".into());
    let mut ir = ProjectIr {
        name: config.project_name.clone(),
        version,
        workspace_id: config.workspace_id.clone(),
        api_id: config.api_id.clone(),
        assets_from_nodes: project.node_crate.as_ref().is_some_and(|k| k.include_assets.is_some()),
        node_crate,
        assets: checked.assets.clone(),
        validated,
        secrets: config
            .assets
            .secrets
            .iter()
            .map(|s| (s.name.clone(), s.required))
            .collect(),
        routes,
        scripts: used
            .values()
            .any(|n| matches!(n.code, NodeCode::TypeScript { .. }))
            .then(|| checked.scripts.clone())
            .flatten(),
        nodes: used.into_values().collect(),
        native: BTreeMap::new(),
    };
    if typescript == TypeScriptNodes::Compiled {
        ir.compile_typescript(project);
    }
    ir
}

/// `flows/create-order.yaml` → `create_order`; `flows/admin/keys.yaml` → `admin_keys`.
fn module_name(file: &str) -> String {
    let stem = file.strip_prefix("flows/").unwrap_or(file);
    let stem = stem.rsplit_once('.').map(|(s, _)| s).unwrap_or(stem);
    let name = svc_types::case::to_snake(stem);
    if svc_types::case::is_keyword(&name) || name == "mod" {
        format!("{name}_route")
    } else {
        name
    }
}
