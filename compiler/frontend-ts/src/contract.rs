//! The runtime contract of spec §4.3, checked in a TypeScript module without running it:
//! what node code may not touch (`process`, `require`, Node's core modules, `eval`,
//! `new Function`, dynamic `import()`), where it may import from (`@svc/sdk` and the
//! project's own modules), and the secrets it reads (`ctx.secret("NAME")`).
//!
//! Globals are found with oxc's semantic analysis: a `process` the module declares itself
//! (a parameter, a local) is not the Node.js global and is not reported. The server's
//! QuickJS context has no `eval` and no `Function` constructor either, so what slips past
//! this reader still cannot generate code at run time.

use crate::module::{Module, SDK_PACKAGE};
use oxc_ast::ast::{
    Argument, CallExpression, Expression, ImportExpression, ImportOrExportKind, StaticMemberExpression,
    TSImportEqualsDeclaration,
};
use oxc_ast_visit::{Visit, walk};
use oxc_semantic::SemanticBuilder;
use oxc_span::GetSpan;
use svc_frontend::node_crate::SecretUse;
use svc_frontend::{Code, Diagnostic, Diagnostics, Span};

/// Node.js's core modules, importable with or without `node:`.
const NODE_CORE_MODULES: &[&str] = &[
    "assert",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "events",
    "fs",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "repl",
    "sqlite",
    "stream",
    "string_decoder",
    "sys",
    "test",
    "timers",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

/// Globals of Node.js (and other server engines) that node code may not use, and what
/// they give.
const FORBIDDEN_GLOBALS: &[(&str, &str)] = &[
    ("process", "the Node.js process (its environment, its exit)"),
    ("require", "Node.js's module loader"),
    ("module", "Node.js's module object"),
    ("exports", "Node.js's module exports"),
    ("__dirname", "a filesystem path"),
    ("__filename", "a filesystem path"),
    ("Buffer", "a Node.js-only API"),
    ("global", "Node.js's global object"),
    ("eval", "code generated at run time"),
    ("Function", "code generated at run time (`new Function`)"),
    ("WebAssembly", "code loaded at run time"),
    ("Deno", "another engine's runtime API"),
    ("Bun", "another engine's runtime API"),
];

/// The names under which code reaches the global object.
const GLOBAL_OBJECTS: &[&str] = &["globalThis", "self", "window"];

const CONTRACT_HINT: &str = "code nodes run in a Worker-style runtime (spec §4.3): read credentials with `ctx.secret(\"NAME\")`, runtime metadata with `ctx.env`, and use the web globals (`fetch`, `URL`, `crypto.randomUUID`, `TextEncoder`, …)";

/// An `import … from "./x"` (or `export … from`) of a module of the project.
#[derive(Debug, Clone)]
pub struct RelativeImport {
    /// As written: `./pricing`, `../lib/money.ts`.
    pub specifier: String,
    pub span: Span,
}

/// What the contract scan found in one module.
#[derive(Debug, Default)]
pub struct Findings {
    pub secrets: Vec<SecretUse>,
    /// The project modules it imports (values, not only types).
    pub imports: Vec<RelativeImport>,
    /// Whether it mentions `request` anywhere a property could be read: the server then
    /// gives the node `ctx.request` (building it costs a little per call).
    pub mentions_request: bool,
}

/// Scans `module`, reporting every breach of the runtime contract.
pub fn scan(module: &Module, diags: &mut Diagnostics) -> Findings {
    let mut scanner = Scanner {
        module,
        diags,
        findings: Findings::default(),
    };
    scanner.globals();
    scanner.visit_program(module.program);
    scanner.findings
}

struct Scanner<'m, 'a, 'd> {
    module: &'m Module<'a>,
    diags: &'d mut Diagnostics,
    findings: Findings,
}

impl<'a> Scanner<'_, 'a, '_> {
    fn forbidden(&mut self, span: Span, what: String, why: &str) {
        self.diags.push(
            Diagnostic::new(Code::ForbiddenApi, span, format!("node code may not use {what}"))
                .label(why.to_string())
                .help(CONTRACT_HINT),
        );
    }

    /// Every reference to a forbidden global the module does not declare itself.
    fn globals(&mut self) {
        let semantic = SemanticBuilder::new()
            .with_build_nodes(true)
            .build(self.module.program)
            .semantic;
        let scoping = semantic.scoping();
        let mut found: Vec<(Span, &str, &str)> = Vec::new();
        for (name, references) in scoping.root_unresolved_references() {
            let Some((name, why)) = FORBIDDEN_GLOBALS.iter().find(|(n, _)| *n == name.as_str()) else {
                continue;
            };
            for reference in references {
                let node = scoping.get_reference(*reference).node_id();
                let span = self.module.lines.span(semantic.nodes().kind(node).span());
                found.push((span, name, why));
            }
        }
        // In source order, whatever order the hash map gave.
        found.sort_by_key(|(span, ..)| (span.line, span.column));
        for (span, name, why) in found {
            self.forbidden(span, format!("`{name}`"), why);
        }
        self.module_state(&semantic);
    }

    /// A top-level `let` or `var` that a function assigns: the engine keeps one instance
    /// of each module for every call on its thread, so the value one call leaves is the
    /// next call's, possibly another user's (spec §4.3: logic is deterministic). Writes at
    /// the top level itself run once, when the module loads, and are fine.
    fn module_state(&mut self, semantic: &oxc_semantic::Semantic) {
        let scoping = semantic.scoping();
        let mut found: Vec<(Span, String)> = Vec::new();
        for (_, &symbol) in scoping.get_bindings(scoping.root_scope_id()) {
            let flags = scoping.symbol_flags(symbol);
            if !flags.is_variable() || flags.is_const_variable() {
                continue;
            }
            for &reference in scoping.get_resolved_reference_ids(symbol) {
                let reference = scoping.get_reference(reference);
                if !reference.is_write() {
                    continue;
                }
                let scope = semantic.nodes().get_node(reference.node_id()).scope_id();
                if scoping
                    .scope_ancestors(scope)
                    .any(|s| scoping.scope_flags(s).is_function())
                {
                    let span = self
                        .module
                        .lines
                        .span(semantic.nodes().kind(reference.node_id()).span());
                    found.push((span, scoping.symbol_name(symbol).to_string()));
                }
            }
        }
        found.sort_by_key(|(span, _)| (span.line, span.column));
        for (span, name) in found {
            self.diags.push(
                Diagnostic::new(
                    Code::ModuleStateBetweenCalls,
                    span,
                    format!("`{name}` is a variable of the module, assigned here in a function"),
                )
                .label("kept from one call to the next")
                .help("one instance of each module serves every call, for every user, so the value one call leaves is the next call's: keep per-call data in `run`'s own variables, or make it a `const` the module computes once"),
            );
        }
    }

    fn import_source(&mut self, specifier: &str, span: Span, kind: ImportOrExportKind) {
        // Type-only imports are erased before the code runs.
        if kind == ImportOrExportKind::Type {
            return;
        }
        if specifier == SDK_PACKAGE {
            return;
        }
        if specifier.starts_with("./") || specifier.starts_with("../") {
            self.findings.imports.push(RelativeImport {
                specifier: specifier.to_string(),
                span,
            });
            return;
        }
        let bare = specifier.strip_prefix("node:");
        let core = bare.unwrap_or(specifier);
        let root = core.split('/').next().unwrap_or(core);
        if bare.is_some() || NODE_CORE_MODULES.contains(&root) {
            self.forbidden(
                span,
                format!("the Node.js module `{specifier}`"),
                "a Node.js core module",
            );
            return;
        }
        self.diags.push(
            Diagnostic::new(
                Code::ImportNotAllowed,
                span,
                format!("node code may not import `{specifier}`"),
            )
            .label("not @svc/sdk or a module of the project")
            .help(format!(
                "node code imports only from `{SDK_PACKAGE}` and the project's own modules (`./pricing`): svc compiles them into the server, with no node_modules at run time"
            )),
        );
    }

    fn secret_call(&mut self, call: &CallExpression<'a>) {
        let Some(argument) = call.arguments.first() else {
            return;
        };
        let name = match argument {
            Argument::SpreadElement(_) => None,
            a => crate::literal::plain_string(a.to_expression()),
        };
        let span = self.module.span(argument);
        match name {
            Some(name) => self.findings.secrets.push(SecretUse { name, span }),
            None => self.diags.push(
                Diagnostic::new(Code::NonLiteralSecretName, span, "the secret name is not written out")
                    .label("computed secret name")
                    .help("write the name as a string literal, `ctx.secret(\"STRIPE_API_KEY\")`, so that svc can check it is declared"),
            ),
        }
    }
}

/// Whether `callee` reads a secret: `ctx.secret(…)`, or `secret(…)` taken out of the
/// context (`const { secret } = ctx`).
fn is_secret_call(callee: &Expression) -> bool {
    match callee.get_inner_expression() {
        Expression::StaticMemberExpression(m) => m.property.name == "secret",
        Expression::Identifier(id) => id.name == "secret",
        _ => false,
    }
}

impl<'a> Visit<'a> for Scanner<'_, 'a, '_> {
    fn visit_import_declaration(&mut self, it: &oxc_ast::ast::ImportDeclaration<'a>) {
        let all_types = it.specifiers.as_ref().is_some_and(|s| {
            !s.is_empty()
                && s.iter().all(|s| {
                    matches!(s, oxc_ast::ast::ImportDeclarationSpecifier::ImportSpecifier(s) if s.import_kind == ImportOrExportKind::Type)
                })
        });
        let kind = if all_types {
            ImportOrExportKind::Type
        } else {
            it.import_kind
        };
        self.import_source(&it.source.value, self.module.span(&it.source), kind);
        walk::walk_import_declaration(self, it);
    }

    fn visit_export_from_declaration(&mut self, it: &oxc_ast::ast::ExportFromDeclaration<'a>) {
        self.import_source(&it.source.value, self.module.span(&it.source), it.export_kind);
        walk::walk_export_from_declaration(self, it);
    }

    fn visit_export_all_declaration(&mut self, it: &oxc_ast::ast::ExportAllDeclaration<'a>) {
        self.import_source(&it.source.value, self.module.span(&it.source), it.export_kind);
        walk::walk_export_all_declaration(self, it);
    }

    fn visit_ts_import_equals_declaration(&mut self, it: &TSImportEqualsDeclaration<'a>) {
        if matches!(
            it.module_reference,
            oxc_ast::ast::TSModuleReference::ExternalModuleReference(_)
        ) {
            self.forbidden(
                self.module.span(it),
                "`import … = require(…)`".to_string(),
                "Node.js's module loader",
            );
        }
        walk::walk_ts_import_equals_declaration(self, it);
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        self.forbidden(
            self.module.span(it),
            "a dynamic `import()`".to_string(),
            "code loaded at run time",
        );
        walk::walk_import_expression(self, it);
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        if is_secret_call(&it.callee) {
            self.secret_call(it);
        }
        walk::walk_call_expression(self, it);
    }

    fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
        let property = it.property.name.as_str();
        if property == "request" {
            self.findings.mentions_request = true;
        }
        // `globalThis.process`, `self.eval`: the same globals, reached another way.
        if let Expression::Identifier(object) = it.object.get_inner_expression()
            && GLOBAL_OBJECTS.contains(&object.name.as_str())
            && let Some((name, why)) = FORBIDDEN_GLOBALS.iter().find(|(n, _)| *n == property)
        {
            self.forbidden(self.module.span(it), format!("`{}.{name}`", object.name), why);
        }
        walk::walk_static_member_expression(self, it);
    }

    fn visit_computed_member_expression(&mut self, it: &oxc_ast::ast::ComputedMemberExpression<'a>) {
        if let Expression::StringLiteral(s) = it.expression.get_inner_expression() {
            if s.value == "request" {
                self.findings.mentions_request = true;
            }
            if let Expression::Identifier(object) = it.object.get_inner_expression()
                && GLOBAL_OBJECTS.contains(&object.name.as_str())
                && let Some((name, why)) = FORBIDDEN_GLOBALS.iter().find(|(n, _)| *n == s.value.as_str())
            {
                self.forbidden(self.module.span(it), format!("`{}[\"{name}\"]`", object.name), why);
            }
        }
        walk::walk_computed_member_expression(self, it);
    }

    fn visit_binding_property(&mut self, it: &oxc_ast::ast::BindingProperty<'a>) {
        // `const { request } = ctx`, `run({ inputs, request })`.
        if crate::literal::static_key(&it.key, it.computed).as_deref() == Some("request") {
            self.findings.mentions_request = true;
        }
        walk::walk_binding_property(self, it);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxc_allocator::Allocator;
    use svc_frontend::FileId;

    fn scan_text(text: &str) -> (Findings, Vec<(Code, u32, String)>) {
        let allocator = Allocator::default();
        let mut diags = Diagnostics::new();
        let module = Module::parse(&allocator, FileId(0), text, &mut diags).expect("parses");
        let findings = scan(&module, &mut diags);
        let mut found: Vec<(Code, u32, String)> = diags
            .into_iter()
            .map(|d| (d.code, d.primary.span.line, d.message))
            .collect();
        found.sort_by_key(|f| f.1);
        (findings, found)
    }

    #[test]
    fn node_globals_and_modules_are_refused_where_they_are_used() {
        let (_, found) = scan_text(
            r#"import fs from "fs";
import { join } from "node:path";
import { readFile } from "fs/promises";
const key = process.env.KEY;
const m = require("x");
eval("1");
const f = new Function("return 1");
const lazy = import("./other");
const g = globalThis.process;
import cp = require("child_process");
"#,
        );
        let lines: Vec<u32> = found.iter().map(|f| f.1).collect();
        assert_eq!(lines, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "{found:#?}");
        assert!(found.iter().all(|f| f.0 == Code::ForbiddenApi), "{found:#?}");
        assert!(found[0].2.contains("`fs`"), "{:?}", found[0]);
        assert!(found[3].2.contains("`process`"), "{:?}", found[3]);
    }

    #[test]
    fn names_the_module_declares_itself_are_its_own() {
        let (_, found) = scan_text(
            "function run(process: { env: string }, require: (x: string) => void) { require(process.env); }\nconst eval2 = 1;\n",
        );
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn imports_only_from_the_sdk_and_the_project() {
        let (findings, found) = scan_text(
            r#"import { t } from "@svc/sdk";
import { price } from "./pricing";
import { money } from "../lib/money.ts";
import lodash from "lodash";
import type { Order } from "some-types";
import { type Line } from "other-types";
export { x } from "./x";
export * from "left-pad";
"#,
        );
        let imports: Vec<&str> = findings.imports.iter().map(|i| i.specifier.as_str()).collect();
        assert_eq!(imports, ["./pricing", "../lib/money.ts", "./x"]);
        assert_eq!(
            found.iter().map(|f| (f.0, f.1)).collect::<Vec<_>>(),
            [(Code::ImportNotAllowed, 4), (Code::ImportNotAllowed, 8)],
            "{found:#?}"
        );
    }

    #[test]
    fn secrets_are_collected_and_computed_names_refused() {
        let (findings, found) = scan_text(
            "export async function run(ctx: any) {\n  const a = ctx.secret(\"API_TOKEN\");\n  const { secret } = ctx;\n  const b = secret(`OTHER`);\n  const c = ctx.secret(name);\n}\n",
        );
        let names: Vec<&str> = findings.secrets.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["API_TOKEN", "OTHER"]);
        assert_eq!(
            found.iter().map(|f| (f.0, f.1)).collect::<Vec<_>>(),
            [(Code::NonLiteralSecretName, 5)]
        );
        assert!(!findings.mentions_request);
    }

    #[test]
    fn request_is_noticed_however_it_is_read() {
        for text in [
            "const r = (ctx: any) => ctx.request?.url;",
            "const r = ({ request }: any) => request;",
            "const r = (ctx: any) => ctx[\"request\"];",
        ] {
            assert!(scan_text(text).0.mentions_request, "{text}");
        }
    }
}
