//! The generated code beside the flow: a route's module as `svc emit` writes it, and the
//! lines each node of the flow became.
//!
//! The emitter heads the code of every node with a comment naming it (`// Code node
//! `price`: shop.price-order`, `// Return JSON `created`: 201`); a node's lines run from
//! its comment to the next node's. That is what a reviewer reads too, so the Builder's
//! mapping is the one a person would make.

use crate::check;
use crate::project::Project;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use svc_frontend::Diagnostics;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteCode {
    /// The module's path in the generated crate (`src/routes/create_order.rs`).
    pub file: String,
    pub text: String,
    /// Per node id, the line ranges (1-based, inclusive) its code spans.
    pub nodes: BTreeMap<String, Vec<(usize, usize)>>,
}

/// How the emitter names each kind of node in the comment that heads its code.
const NODE_COMMENTS: &[&str] = &[
    "Check Origin `",
    "Rate Limit `",
    "Check API Key `",
    "Code node `",
    "Return JSON `",
];

/// The generated module of the route whose flow file is `flows/<route>.yaml`, or why
/// there is none (a project with errors has no generated code).
pub fn route_code(dir: &Path, route: &str) -> Result<RouteCode, String> {
    let mut diags = Diagnostics::new();
    let project = Project::load_confined(dir, &mut diags);
    let checked = check::check(&project, &mut diags);
    if checked.has_errors {
        return Err("the project has errors: there is no generated code until `svc check` passes".into());
    }
    let ir = crate::pipeline::lower(&checked, true);
    let Some(module) = ir
        .routes
        .iter()
        .find(|r| Path::new(&r.file).file_stem().is_some_and(|s| s == route))
        .map(|r| r.module.clone())
    else {
        return Err(format!("no flow is named `{route}`"));
    };
    let out = crate::pipeline::default_out(dir);
    let files = crate::emit::emit(
        &ir,
        &crate::pipeline::layout(dir, &ir, &out, crate::pipeline::Flavour::Shipped),
    )?;
    let file = format!("src/routes/{module}.rs");
    let text = files
        .iter()
        .find(|f| f.path == Path::new(&file))
        .and_then(|f| f.as_text())
        .ok_or_else(|| format!("svc generated no `{file}`"))?
        .to_string();
    let nodes = node_lines(&text);
    Ok(RouteCode { file, text, nodes })
}

/// The lines of each node: from the comment naming it to the line before the next such
/// comment, the end of the function, or the end of the file.
pub fn node_lines(text: &str) -> BTreeMap<String, Vec<(usize, usize)>> {
    let lines: Vec<&str> = text.lines().collect();
    let heads: Vec<(usize, String)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let comment = line.trim_start().strip_prefix("// ")?;
            let rest = NODE_COMMENTS.iter().find_map(|p| comment.strip_prefix(p))?;
            let id = rest.split('`').next()?;
            Some((i, id.to_string()))
        })
        .collect();
    let mut out: BTreeMap<String, Vec<(usize, usize)>> = BTreeMap::new();
    for (k, (start, id)) in heads.iter().enumerate() {
        let next = heads.get(k + 1).map_or(lines.len(), |(n, _)| *n);
        // A node's code ends where its function does, if that comes first.
        let end = (start + 1..next).find(|&i| lines[i].starts_with('}')).unwrap_or(next);
        out.entry(id.clone()).or_default().push((start + 1, end));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_node_spans_from_its_comment_to_the_next() {
        let text = "fn handle() {\n    // Check Origin `origin`\n    if x {\n        // Return JSON `forbidden`: 403\n        return y;\n    }\n    // Code node `price`: shop.price-order\n    let a = 1;\n}\nfn other() {}\n";
        let lines = node_lines(text);
        assert_eq!(lines["origin"], vec![(2, 3)]);
        assert_eq!(lines["forbidden"], vec![(4, 6)]);
        assert_eq!(lines["price"], vec![(7, 8)]);
    }
}
