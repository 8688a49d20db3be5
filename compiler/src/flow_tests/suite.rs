//! The test files of a project, read and checked against its flows: every route, key
//! fixture, parameter and trace step a case names must exist. Problems are located
//! diagnostics, like the checker's.

use crate::project::Project;
use std::path::PathBuf;
use svc_frontend::diagnostic::{Code, Diagnostic, Diagnostics};
use svc_frontend::flow::{Flow, NodeKind, param_names};
use svc_frontend::source::{FileId, SourceFile, Span, display_path};
use svc_frontend::testfile::{self, TestFile};
use svc_frontend::vfs::{Disk, ReadError, Vfs};

/// Where test files live in a project.
pub const TESTS_DIR: &str = "tests";

/// One read test file.
pub struct Suite {
    pub file: FileId,
    /// `tests/greeting.yaml`
    pub shown: String,
    pub tests: TestFile,
}

/// Reads every `tests/*.yaml` (sorted) into `project.sources`, and checks each against the
/// project. Files that cannot be read at all are reported and left out.
pub fn load(project: &mut Project, diags: &mut Diagnostics) -> Vec<Suite> {
    load_from(&Disk, project, diags)
}

/// [`load`] through `vfs` (memory, for the diagnostics corpus and fuzzing).
pub fn load_from(vfs: &dyn Vfs, project: &mut Project, diags: &mut Diagnostics) -> Vec<Suite> {
    let dir = project.root.join(TESTS_DIR);
    let mut paths: Vec<PathBuf> = vfs
        .list(&dir)
        .into_iter()
        .filter(|p| !vfs.is_dir(p) && p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    paths.sort();
    let mut suites = Vec::new();
    for path in paths {
        let shown = display_path(&project.root, &path);
        let text = match vfs.read(&path) {
            Ok(text) => text,
            Err(ReadError::Unreadable(bad)) => {
                bad.report(&shown, path.clone(), &mut project.sources, diags);
                continue;
            }
            Err(ReadError::Missing) => continue,
        };
        let file = project
            .sources
            .add(SourceFile::new(shown.clone(), Some(path), text.clone()));
        if let Some(tests) = testfile::load(file, &text, diags) {
            check(project, &tests, diags);
            suites.push(Suite { file, shown, tests });
        }
    }
    suites
}

/// The flow a test names (see [`flow_name`]).
pub fn flow_named<'p>(project: &'p Project, name: &str) -> Option<&'p Flow> {
    project.flows.iter().find(|f| flow_name(project, f) == name)
}

/// How a test names a flow: its path under `flows/` without the extension (`greeting`
/// for `flows/greeting.yaml`, `admin/users` for `flows/admin/users.yaml`), unique in a
/// project as flows may sit in subdirectories.
pub fn flow_name(project: &Project, flow: &Flow) -> String {
    let shown = &project.sources.get(flow.file).display_path;
    let under = shown
        .strip_prefix(crate::project::FLOWS_DIR)
        .and_then(|s| s.strip_prefix('/'))
        .unwrap_or(shown);
    under.rsplit_once('.').map_or(under, |(stem, _)| stem).to_string()
}

fn check(project: &Project, tests: &TestFile, diags: &mut Diagnostics) {
    let flows: Vec<String> = project.flows.iter().map(|f| flow_name(project, f)).collect();
    // Without a config (already reported), nothing is known about secrets.
    for (name, _) in tests.secrets.iter().filter(|_| project.config.is_some()) {
        let declared = project
            .config
            .as_ref()
            .is_some_and(|c| c.assets.secrets.iter().any(|s| s.name == name.value));
        if !declared {
            let names = project
                .config
                .iter()
                .flat_map(|c| c.assets.secrets.iter().map(|s| s.name.as_str()));
            let help = match svc_types::assets::closest(&name.value, names) {
                Some(best) => format!("did you mean `{best}`?"),
                None => "give values only to the secrets listed under `secrets:` in svc.config.yaml".to_string(),
            };
            diags.push(
                Diagnostic::new(
                    Code::TestRequestMismatch,
                    name.span,
                    format!("the project declares no secret `{}`", name.value),
                )
                .label("not in svc.config.yaml")
                .help(help),
            );
        }
    }
    for case in &tests.cases {
        let request = &case.request;
        let Some(flow) = flow_named(project, &request.route.value) else {
            let help = match svc_types::assets::closest(&request.route.value, flows.iter().map(String::as_str)) {
                Some(best) => format!("did you mean `{best}`? A route is named by its flow's file name"),
                None => format!(
                    "a route is named by its flow's file name: {}",
                    svc_types::assets::listed(&flows)
                ),
            };
            let message = format!("no flow is named `{}`", request.route.value);
            diags.push(
                Diagnostic::new(Code::UnknownTestRoute, request.route.span, message)
                    .label("unknown route")
                    .help(help),
            );
            continue;
        };
        if let Some(method) = &request.method
            && !flow.methods.iter().any(|m| m.value.as_str() == method.value)
        {
            diags.push(
                Diagnostic::new(
                    Code::TestRequestMismatch,
                    method.span,
                    format!("the route `{}` does not answer {}", request.route.value, method.value),
                )
                .label("not one of the flow's methods")
                .help(format!(
                    "the flow's methods: {}",
                    flow.methods
                        .iter()
                        .map(|m| m.value.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        }
        let params: Vec<&str> = param_names(&flow.route.value).collect();
        for (name, _) in &request.params {
            if !params.contains(&name.value.as_str()) {
                diags.push(
                    Diagnostic::new(
                        Code::TestRequestMismatch,
                        name.span,
                        format!("the route `{}` has no parameter `{}`", flow.route.value, name.value),
                    )
                    .label("unknown parameter")
                    .help(if params.is_empty() {
                        "this route has no `{parameters}`: remove `params`".to_string()
                    } else {
                        format!("its parameters: {}", params.join(", "))
                    }),
                );
            }
        }
        for param in &params {
            if !request.params.iter().any(|(n, _)| n.value == *param) {
                diags.push(
                    Diagnostic::new(
                        Code::TestRequestMismatch,
                        request.route.span,
                        format!("the route `{}` needs a value for `{{{param}}}`", flow.route.value),
                    )
                    .label("no value for a path parameter")
                    .help(format!("add `params: {{ {param}: … }}` to the request")),
                );
            }
        }
        if let Some(key) = &request.key
            && !tests.keys.iter().any(|k| k.name.value == key.value)
        {
            diags.push(
                Diagnostic::new(
                    Code::UnknownKeyFixture,
                    key.span,
                    format!("no key fixture is named `{}`", key.value),
                )
                .label("unknown key")
                .help("declare it at the top of the file: `keys: { alice: { owner: alice } }`"),
            );
        }
        if let Some(token) = &request.token {
            if !tests.tokens.iter().any(|t| t.name.value == token.value) {
                diags.push(
                    Diagnostic::new(
                        Code::UnknownKeyFixture,
                        token.span,
                        format!("no token fixture is named `{}`", token.value),
                    )
                    .label("unknown token")
                    .help("declare it at the top of the file: `tokens: { alice: { subject: alice } }`"),
                );
            } else if !flow
                .nodes
                .iter()
                .any(|n| matches!(n.kind, svc_frontend::flow::NodeKind::CheckJwt(_)))
            {
                diags.push(
                    Diagnostic::new(
                        Code::TestRequestMismatch,
                        token.span,
                        format!("the route `{}` has no Check JWT node", flow.route.value),
                    )
                    .label("a token nothing reads")
                    .help("a token fixture is sent where the route's Check JWT reads tokens; send a key with `key:` to a Check API Key"),
                );
            }
        }
        if let Some(signed) = request.signed.as_ref().filter(|s| s.value) {
            let check = flow.nodes.iter().find_map(|n| match &n.kind {
                svc_frontend::flow::NodeKind::CheckSignature(c) => Some(c),
                _ => None,
            });
            match check.and_then(|c| c.secrets.first()) {
                None => diags.push(
                    Diagnostic::new(
                        Code::TestRequestMismatch,
                        signed.span,
                        format!("the route `{}` has no Check Signature node", flow.route.value),
                    )
                    .label("a signature nothing checks")
                    .help("`signed: true` signs a request for the route's Check Signature; remove it here"),
                ),
                Some(secret) if !tests.secrets.iter().any(|(name, _)| name.value == secret.value) => diags.push(
                    Diagnostic::new(
                        Code::TestRequestMismatch,
                        signed.span,
                        format!("`signed` needs the value of secret `{}`", secret.value),
                    )
                    .label("no value to sign with")
                    .help(format!(
                        "give the test server the secret the route's Check Signature lists first: `secrets: {{ {}: a-test-secret }}` at the top of the file",
                        secret.value
                    )),
                ),
                Some(_) => {}
            }
        }
        for (node_id, outcome) in &case.expect.trace {
            let Some(node) = flow.node(&node_id.value) else {
                diags.push(
                    Diagnostic::new(
                        Code::UnknownTraceStep,
                        node_id.span,
                        format!("the flow `{}` has no node `{}`", request.route.value, node_id.value),
                    )
                    .label("unknown node")
                    .help(format!(
                        "the flow's checks and code nodes: {}",
                        traced_nodes(flow).join(", ")
                    )),
                );
                continue;
            };
            let outputs: Vec<&str> = node.kind.edges().iter().map(|(pin, _)| *pin).collect();
            if !outputs.contains(&outcome.value.as_str()) {
                let help = if outputs.is_empty() {
                    "a Return JSON node has no outputs; expect its status and body instead".to_string()
                } else {
                    format!("the outputs of `{}`: {}", node_id.value, outputs.join(", "))
                };
                diags.push(
                    Diagnostic::new(
                        Code::UnknownTraceStep,
                        outcome.span,
                        format!("`{}` has no output `{}`", node_id.value, outcome.value),
                    )
                    .label("not one of its outputs")
                    .help(help),
                );
            }
        }
    }
}

/// The nodes a trace can name: every node with outputs.
fn traced_nodes(flow: &Flow) -> Vec<String> {
    flow.nodes
        .iter()
        .filter(|n| !matches!(n.kind, NodeKind::ReturnJson(_)))
        .map(|n| format!("`{}`", n.id.value))
        .collect()
}

/// The place of a case's name, for reports.
pub fn case_place(project: &Project, span: Span) -> String {
    format!("{}:{}", project.sources.get(span.file).display_path, span.line)
}
