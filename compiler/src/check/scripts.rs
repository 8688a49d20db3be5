//! The project's TypeScript, made into what the server runs: each module stripped of its
//! types (`svc-frontend-ts`), then all of them, with `@svc/sdk`, compiled to one QuickJS
//! bytecode bundle (`svc-script`).
//!
//! This runs in the checker, not only when emitting, so that a module the engine cannot
//! compile (a syntax QuickJS lacks, such as decorators) is a located error of `svc check`,
//! and a project the checker accepts always builds.

use crate::project::Project;
use std::collections::BTreeSet;
use svc_frontend::{Code, Diagnostic, Diagnostics, Span};

/// The JavaScript of `@svc/sdk` (the package in `sdk-ts/`), compiled into every bundle:
/// node modules import it.
pub const SDK_JAVASCRIPT: &str = include_str!("../../../sdk-ts/index.js");

/// A project's TypeScript, compiled.
#[derive(Debug, Clone)]
pub struct CompiledScripts {
    /// Every module, by bundle name (`src/nodes/greet.ts`), as the JavaScript that was
    /// compiled: emitted beside the bundle for review.
    pub modules: Vec<(String, String)>,
    /// The bytecode of the modules and the SDK ([`svc_script::bundle`]'s format).
    pub bundle: Vec<u8>,
}

/// Compiles the project's TypeScript modules; `None` when it has none, or when a module
/// already has an error (its JavaScript would only repeat it).
pub fn compile(project: &Project, diags: &mut Diagnostics) -> Option<CompiledScripts> {
    let scripts = project.script_nodes.as_ref()?;
    if scripts.unreadable || scripts.modules.is_empty() {
        return None;
    }
    let files: BTreeSet<_> = scripts.modules.iter().map(|m| m.file).collect();
    if diags
        .iter()
        .any(|d| d.is_error() && files.contains(&d.primary.span.file))
    {
        return None;
    }
    let mut stripped = Vec::with_capacity(scripts.modules.len());
    for module in &scripts.modules {
        let text = &project.sources.get(module.file).text;
        match svc_frontend_ts::strip::to_javascript(&module.name, text, &module.imports) {
            Ok(s) => stripped.push(s),
            Err(message) => {
                diags.push(unsupported(Span::file_start(module.file), message));
                return None;
            }
        }
    }
    let modules: Vec<(String, String)> = scripts
        .modules
        .iter()
        .zip(&stripped)
        .map(|(m, s)| (m.name.clone(), s.javascript.clone()))
        .collect();
    match svc_script::compile(&modules, SDK_JAVASCRIPT) {
        Ok(bundle) => Some(CompiledScripts { modules, bundle }),
        Err(failure) => {
            // The engine names the module that failed, and where in its JavaScript: the
            // error is placed where that was in the TypeScript.
            let (module, javascript) = scripts
                .modules
                .iter()
                .zip(&stripped)
                .find(|(m, _)| failure.starts_with(&format!("`{}`", m.name)))
                .unwrap_or((&scripts.modules[0], &stripped[0]));
            let span = engine_position(&failure, &module.name)
                .and_then(|(line, column)| javascript.original_position(line, column))
                .map_or(Span::file_start(module.file), |(line, column)| {
                    Span::new(module.file, line, column, 1)
                });
            let message = failure.lines().next().unwrap_or_default().to_string();
            diags.push(unsupported(span, message));
            None
        }
    }
}

/// `(line, column)` from the engine's `at src/nodes/x.ts:5:1` in `failure`.
fn engine_position(failure: &str, module: &str) -> Option<(u32, u32)> {
    let at = format!("at {module}:");
    let rest = &failure[failure.find(&at)? + at.len()..];
    let (line, rest) = rest.split_once(':')?;
    let column: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((line.parse().ok()?, column.parse().ok()?))
}

fn unsupported(span: Span, message: String) -> Diagnostic {
    Diagnostic::new(
        Code::UnsupportedByEngine,
        span,
        format!("the server's JavaScript engine cannot run this module: {message}"),
    )
    .label("compiled for QuickJS")
    .help(
        "svc runs node code on QuickJS (ES2023): write it without syntax the engine lacks (decorators, \
         `using` declarations)",
    )
}
