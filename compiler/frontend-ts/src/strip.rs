//! A checked module as the JavaScript the engine compiles: its types stripped by oxc's
//! TypeScript transform, and each project import rewritten to the imported module's
//! name in the bundle (`./pricing` → `src/nodes/pricing.ts`), so that the server loads
//! modules by name, with no resolution rules of its own.

use oxc_allocator::{Allocator, FromIn};
use oxc_ast::ast::{Statement, StringLiteral};
use oxc_codegen::{Codegen, CodegenOptions};
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::SourceType;
use oxc_transformer::{TransformOptions, Transformer};
use std::path::Path;

/// A module as JavaScript, with where each part of it was in the TypeScript.
#[derive(Debug, Clone)]
pub struct Stripped {
    pub javascript: String,
    /// `(line, column)` in the JavaScript → `(line, column)` in the TypeScript, 0-based,
    /// sorted (from oxc's source map).
    positions: Vec<((u32, u32), (u32, u32))>,
}

impl Stripped {
    /// The TypeScript position (1-based line and column) of a JavaScript position
    /// (1-based), as the engine reports one in an error: the nearest mapped place at or
    /// before it.
    pub fn original_position(&self, line: u32, column: u32) -> Option<(u32, u32)> {
        let wanted = (line.checked_sub(1)?, column.saturating_sub(1));
        let after = self.positions.partition_point(|(js, _)| *js <= wanted);
        let (_, (ts_line, ts_column)) = self.positions[..after].last()?;
        Some((ts_line + 1, ts_column + 1))
    }
}

/// `text` (the module `name`) as JavaScript; `imports` maps each project import as
/// written to its bundle name. An error names what failed: the module was checked, so
/// this means a bug in svc or in oxc.
pub fn to_javascript(name: &str, text: &str, imports: &[(String, String)]) -> Result<Stripped, String> {
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
    let options = CodegenOptions {
        source_map_path: Some(name.into()),
        ..CodegenOptions::default()
    };
    let generated = Codegen::new().with_options(options).build(&program);
    let mut positions: Vec<_> = generated
        .map
        .iter()
        .flat_map(|map| map.get_tokens())
        .map(|t| ((t.get_dst_line(), t.get_dst_col()), (t.get_src_line(), t.get_src_col())))
        .collect();
    positions.sort();
    Ok(Stripped {
        javascript: generated.code,
        positions,
    })
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
        .unwrap()
        .javascript;
        assert!(js.contains("from \"src/nodes/money.ts\""), "{js}");
        assert!(js.contains("from \"src/more.ts\""), "{js}");
        assert!(js.contains("from \"@svc/sdk\""), "{js}");
        assert!(
            !js.contains("interface") && !js.contains(": number") && !js.contains("./types"),
            "{js}"
        );
    }

    #[test]
    fn positions_lead_back_to_the_typescript() {
        let ts = "interface A { x: number }\n\ntype B = string;\nexport function f(a: A): number {\n  return a.x;\n}\n";
        let stripped = to_javascript("src/nodes/f.ts", ts, &[]).unwrap();
        let line = stripped.javascript.lines().position(|l| l.contains("return")).unwrap() as u32 + 1;
        let column = stripped
            .javascript
            .lines()
            .nth(line as usize - 1)
            .unwrap()
            .find("return")
            .unwrap() as u32
            + 1;
        assert_eq!(
            stripped.original_position(line, column),
            Some((5, 3)),
            "{}",
            stripped.javascript
        );
    }
}
