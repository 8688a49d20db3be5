//! `@svc/sdk` spells the field constraints as svc reads them (`svc_types::constraints::KEYS`):
//! what `defineStructure` copies (`CONSTRAINT_KEYS` in `index.js`) and what it declares
//! (`FieldConstraints` in `index.d.ts`) are the same keys, in the same order, so a
//! constraint TypeScript accepts is one svc checks, and none is dropped on the way.

use oxc_allocator::Allocator;
use oxc_ast::ast::{Declaration, Expression, Statement, TSSignature};
use oxc_parser::Parser;
use oxc_span::SourceType;
use svc_types::constraints::{ARRAY_KEYS, KEYS, NUMBER_KEYS, STRING_KEYS};

/// Parses one of the SDK's files and hands each `export`ed declaration to `visit`.
fn for_each_export(file: &str, source_type: SourceType, mut visit: impl FnMut(&Declaration)) {
    let text = std::fs::read_to_string(format!("{}/../../sdk-ts/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, &text, source_type).parse();
    assert!(parsed.diagnostics.is_empty(), "{file}: {:?}", parsed.diagnostics);
    for statement in &parsed.program.body {
        if let Statement::ExportDeclaration(export) = statement {
            visit(&export.declaration);
        }
    }
}

#[test]
fn index_js_copies_every_constraint_key_with_its_kind() {
    let mut found = Vec::new();
    for_each_export("index.js", SourceType::mjs(), |declaration| {
        let Declaration::VariableDeclaration(var) = declaration else {
            return;
        };
        for d in &var.declarations {
            if d.id.get_identifier_name().is_none_or(|n| n != "CONSTRAINT_KEYS") {
                continue;
            }
            // Object.freeze([["minimum", "number"], …])
            let Some(Expression::CallExpression(call)) = &d.init else {
                panic!("CONSTRAINT_KEYS is Object.freeze([…])")
            };
            let Some(Expression::ArrayExpression(list)) = call.arguments[0].as_expression() else {
                panic!()
            };
            for pair in &list.elements {
                let Some(Expression::ArrayExpression(pair)) = pair.as_expression() else {
                    panic!()
                };
                let text = |i: usize| match pair.elements[i].as_expression() {
                    Some(Expression::StringLiteral(s)) => s.value.to_string(),
                    _ => panic!("a [key, kind] pair of strings"),
                };
                found.push((text(0), text(1)));
            }
        }
    });
    let keys: Vec<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys, KEYS,
        "sdk-ts/index.js CONSTRAINT_KEYS against svc_types::constraints::KEYS"
    );
    for (key, kind) in &found {
        let expected = match key.as_str() {
            "integer" | "uniqueItems" => "boolean",
            "pattern" | "format" => "string",
            k if NUMBER_KEYS.contains(&k) || STRING_KEYS.contains(&k) || ARRAY_KEYS.contains(&k) => "number",
            k => panic!("unknown key {k}"),
        };
        assert_eq!(kind, expected, "the kind of `{key}`");
    }
}

#[test]
fn index_d_ts_declares_every_constraint_key() {
    let mut keys = Vec::new();
    for_each_export("index.d.ts", SourceType::d_ts(), |declaration| match declaration {
        Declaration::TSInterfaceDeclaration(i) if i.id.name == "FieldConstraints" => {
            for member in &i.body.body {
                if let TSSignature::TSPropertySignature(p) = member {
                    assert!(p.optional, "every constraint is optional");
                    keys.push(p.key.static_name().unwrap().to_string());
                }
            }
        }
        _ => {}
    });
    assert_eq!(
        keys, KEYS,
        "sdk-ts/index.d.ts FieldConstraints against svc_types::constraints::KEYS"
    );
}
