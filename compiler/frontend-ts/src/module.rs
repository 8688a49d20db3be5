//! One TypeScript module, parsed with oxc, and the facts the readers need from its top
//! level: what it imports from where, its `const`s, and its default export.

use crate::position::LineIndex;
use oxc_allocator::Allocator;
use oxc_ast::ast::{
    BindingPattern, Declaration, ExportDefaultDeclarationKind, Expression, ImportDeclarationSpecifier,
    ModuleExportName, Program, Statement, VariableDeclarationKind,
};
use oxc_parser::Parser;
use oxc_span::{GetSpan, SourceType};
use std::collections::HashMap;
use svc_frontend::{Code, Diagnostic, Diagnostics, FileId, Span};

/// The package node code and `svc.config.ts` import the SDK from.
pub const SDK_PACKAGE: &str = "@svc/sdk";

/// A name brought in by an `import` declaration.
#[derive(Debug, Clone)]
pub struct Import {
    /// The module it comes from, as written: `@svc/sdk`, `./util.ts`.
    pub source: String,
    /// The exported name (`defineEnum` in `import { defineEnum as e }`); `default` or `*`
    /// for default and namespace imports.
    pub imported: String,
}

/// A parsed module and its top-level facts.
pub struct Module<'a> {
    pub program: &'a Program<'a>,
    pub lines: LineIndex<'a>,
    /// Local name → where it is imported from.
    pub imports: HashMap<String, Import>,
    /// Top-level `const` bindings with a plain name (`const x = …`, exported or not).
    pub consts: HashMap<String, &'a Expression<'a>>,
}

impl<'a> Module<'a> {
    /// Parses `text`. Syntax errors are reported (with their place) and give `None`:
    /// a module that does not parse has nothing the readers could trust.
    pub fn parse(allocator: &'a Allocator, file: FileId, text: &'a str, diags: &mut Diagnostics) -> Option<Self> {
        let lines = LineIndex::new(file, text);
        let parsed = Parser::new(allocator, text, SourceType::ts()).parse();
        if parsed.panicked || parsed.diagnostics.has_errors() {
            for error in parsed.diagnostics.errors() {
                let span = error
                    .labels
                    .first()
                    .map(|l| lines.span(l.span()))
                    .unwrap_or_else(|| Span::file_start(file));
                let mut d = Diagnostic::new(Code::TypeScriptSyntax, span, error.message.to_string()).label(
                    error
                        .labels
                        .first()
                        .and_then(|l| l.label())
                        .unwrap_or("here")
                        .to_string(),
                );
                d = d.help(match &error.help {
                    Some(help) => help.to_string(),
                    None => "fix the syntax: svc reads this file as TypeScript".to_string(),
                });
                diags.push(d);
            }
            return None;
        }
        // Kept in the allocator, so that the expressions it holds can be borrowed for `'a`.
        let program: &'a Program<'a> = allocator.alloc(parsed.program);
        let mut module = Module {
            program,
            lines,
            imports: HashMap::new(),
            consts: HashMap::new(),
        };
        module.collect_facts(program);
        Some(module)
    }

    fn collect_facts(&mut self, program: &'a Program<'a>) {
        for statement in &program.body {
            match statement {
                Statement::ImportDeclaration(import) => {
                    let source = import.source.value.to_string();
                    for specifier in import.specifiers.iter().flatten() {
                        let (local, imported) = match specifier {
                            ImportDeclarationSpecifier::ImportSpecifier(s) => {
                                (s.local.name.to_string(), export_name(&s.imported))
                            }
                            ImportDeclarationSpecifier::ImportDefaultSpecifier(s) => {
                                (s.local.name.to_string(), "default".to_string())
                            }
                            ImportDeclarationSpecifier::ImportNamespaceSpecifier(s) => {
                                (s.local.name.to_string(), "*".to_string())
                            }
                        };
                        let import = Import {
                            source: source.clone(),
                            imported,
                        };
                        self.imports.insert(local, import);
                    }
                }
                Statement::VariableDeclaration(decl) => self.collect_consts(decl),
                Statement::ExportDeclaration(export) => {
                    if let Declaration::VariableDeclaration(decl) = &export.declaration {
                        self.collect_consts(decl);
                    }
                }
                _ => {}
            }
        }
    }

    fn collect_consts(&mut self, decl: &'a oxc_ast::ast::VariableDeclaration<'a>) {
        if decl.kind != VariableDeclarationKind::Const {
            return;
        }
        for declarator in &decl.declarations {
            if let (BindingPattern::BindingIdentifier(id), Some(init)) = (&declarator.id, &declarator.init) {
                self.consts.insert(id.name.to_string(), init);
            }
        }
    }

    /// The svc span of anything with an oxc span.
    pub fn span(&self, node: &impl GetSpan) -> Span {
        self.lines.span(node.span())
    }

    /// The default export, when the module has one: the expression, or the span of a
    /// declaration that is not an expression (`export default function …`).
    pub fn default_export(&self) -> Option<Result<&'a Expression<'a>, Span>> {
        self.program.body.iter().find_map(|s| match s {
            Statement::ExportDefaultDeclaration(export) => Some(match &export.declaration {
                ExportDefaultDeclarationKind::FunctionDeclaration(_)
                | ExportDefaultDeclarationKind::ClassDeclaration(_)
                | ExportDefaultDeclarationKind::TSInterfaceDeclaration(_) => Err(self.span(&export.declaration)),
                kind => Ok(kind.to_expression()),
            }),
            _ => None,
        })
    }

    /// Whether `local` names the SDK export `name` (`import { name } from "@svc/sdk"`,
    /// renamed or not).
    pub fn is_sdk(&self, local: &str, name: &str) -> bool {
        self.imports
            .get(local)
            .is_some_and(|i| i.source == SDK_PACKAGE && i.imported == name)
    }

    /// The SDK export an expression names: `t` for `t` imported from `@svc/sdk` (renamed
    /// or not), and for `sdk.t` with `import * as sdk from "@svc/sdk"`.
    pub fn sdk_export<'e>(&'e self, expr: &'e Expression) -> Option<&'e str> {
        match expr.get_inner_expression() {
            Expression::Identifier(id) => self
                .imports
                .get(id.name.as_str())
                .filter(|i| i.source == SDK_PACKAGE && i.imported != "*" && i.imported != "default")
                .map(|i| i.imported.as_str()),
            Expression::StaticMemberExpression(member) => match member.object.get_inner_expression() {
                Expression::Identifier(ns) if self.is_sdk(ns.name.as_str(), "*") => Some(member.property.name.as_str()),
                _ => None,
            },
            _ => None,
        }
    }
}

fn export_name(name: &ModuleExportName) -> String {
    match name {
        ModuleExportName::IdentifierName(n) => n.name.to_string(),
        ModuleExportName::IdentifierReference(n) => n.name.to_string(),
        ModuleExportName::StringLiteral(s) => s.value.to_string(),
    }
}
