//! A checked module as the JavaScript the engine compiles: its types stripped by oxc's
//! TypeScript transform, and each project import rewritten to the imported module's
//! name in the bundle (`./pricing` → `src/nodes/pricing.ts`), so that the server loads
//! modules by name, with no resolution rules of its own.

use oxc_allocator::{Allocator, FromIn};
use oxc_ast::ast::{Statement, StringLiteral};
use oxc_codegen::Codegen;
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::SourceType;
use oxc_transformer::{TransformOptions, Transformer};
use std::path::Path;

/// `text` (the module `name`) as JavaScript; `imports` maps each project import as
/// written to its bundle name. An error names what failed: the module was checked, so
/// this means a bug in svc or in oxc.
pub fn to_javascript(name: &str, text: &str, imports: &[(String, String)]) -> Result<String, String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, text, SourceType::ts()).parse();
    if parsed.panicked || parsed.diagnostics.has_errors() {
        return Err(format!("`{name}` does not parse"));
    }
    let mut program = parsed.program;
    for statement in program.body.iter_mut() {
        match statement {
            Statement::ImportDeclaration(d) => rewrite(&mut d.source, imports, &allocator),
            Statement::ExportAllDeclaration(d) => rewrite(&mut d.source, imports, &allocator),
            Statement::ExportFromDeclaration(d) => rewrite(&mut d.source, imports, &allocator),
            _ => {}
        }
    }
    let scoping = SemanticBuilder::new().build(&program).semantic.into_scoping();
    let transformed = Transformer::new(&allocator, Path::new(name), &TransformOptions::default())
        .build_with_scoping(scoping, &mut program);
    if let Some(error) = transformed.diagnostics.errors().next() {
        return Err(format!("`{name}` cannot be stripped of its types: {}", error.message));
    }
    Ok(Codegen::new().build(&program).code)
}

fn rewrite<'a>(source: &mut StringLiteral<'a>, imports: &[(String, String)], allocator: &'a Allocator) {
    if let Some((_, target)) = imports
        .iter()
        .find(|(written, _)| written.as_str() == source.value.as_str())
    {
        source.value = oxc_str::Str::from_in(target.as_str(), allocator);
        source.raw = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_go_and_imports_name_bundle_modules() {
        let js = to_javascript(
            "src/nodes/a.ts",
            "import { t } from \"@svc/sdk\";\nimport type { X } from \"./types\";\nimport { cents } from \"./money\";\nexport * from \"./more\";\ninterface Order { total: number }\nexport const pin = t.string();\nexport function f(o: Order, x: X): number { return cents(o.total as number); }\n",
            &[
                ("./money".into(), "src/nodes/money.ts".into()),
                ("./more".into(), "src/more.ts".into()),
            ],
        )
        .unwrap();
        assert!(js.contains("from \"src/nodes/money.ts\""), "{js}");
        assert!(js.contains("from \"src/more.ts\""), "{js}");
        assert!(js.contains("from \"@svc/sdk\""), "{js}");
        assert!(
            !js.contains("interface") && !js.contains(": number") && !js.contains("./types"),
            "{js}"
        );
    }
}
