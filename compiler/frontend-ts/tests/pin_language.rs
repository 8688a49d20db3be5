//! `@svc/sdk`'s pin builders are the pin language's TypeScript spelling, word for word
//! (`svc_syntax::pin_language::TYPESCRIPT`), in what it runs (`index.js`) and in what it
//! declares (`index.d.ts`): every builder and modifier a node author can call is a word
//! svc reads, taking the arguments svc reads, and every word svc reads exists. svc reads
//! node modules without running them, so a builder it did not know would type-check and
//! then be refused, and a word it knew without a builder would be refused by tsc.

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    BindingPattern, ClassElement, Declaration, Expression, FormalParameters, MethodDefinitionKind, ObjectPropertyKind,
    Statement, TSSignature, TSType,
};
use oxc_parser::Parser;
use oxc_span::SourceType;
use std::collections::{BTreeMap, BTreeSet};
use svc_frontend::pin_language::{BuilderArgument, ModifierArgument, TYPESCRIPT};

/// A function's shape: for each overload, whether each parameter may be left out.
type Shapes = BTreeSet<Vec<bool>>;

/// The functions of `PinBuilder`, `t` and `seq` in one file of sdk-ts, by place and name.
fn sdk_functions(file: &str) -> BTreeMap<&'static str, BTreeMap<String, Shapes>> {
    let path = format!("{}/../../sdk-ts/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let allocator = Allocator::default();
    let source_type = if file.ends_with(".d.ts") {
        SourceType::d_ts()
    } else {
        SourceType::mjs()
    };
    let parsed = Parser::new(&allocator, &text, source_type).parse();
    assert!(parsed.diagnostics.is_empty(), "{path} does not parse");
    let shape = |params: &FormalParameters| -> Vec<bool> {
        params
            .items
            .iter()
            .map(|p| p.optional || p.initializer.is_some())
            .collect()
    };
    let mut found: BTreeMap<&'static str, BTreeMap<String, Shapes>> = BTreeMap::new();
    let mut add = |place: &'static str, name: String, params: Vec<bool>| {
        found.entry(place).or_default().entry(name).or_default().insert(params);
    };
    for statement in &parsed.program.body {
        let Statement::ExportDeclaration(export) = statement else {
            continue;
        };
        match &export.declaration {
            // index.js: `export class PinBuilder { optional() {…} … }`
            Declaration::ClassDeclaration(class) if class.id.as_ref().is_some_and(|id| id.name == "PinBuilder") => {
                for element in &class.body.body {
                    if let ClassElement::MethodDefinition(m) = element
                        && m.kind == MethodDefinitionKind::Method
                        && let Some(name) = m.key.static_name()
                    {
                        add("PinBuilder", name.to_string(), shape(&m.value.params));
                    }
                }
            }
            // index.d.ts: `export interface PinBuilder<…> { optional(): …; … }`
            Declaration::TSInterfaceDeclaration(interface) if interface.id.name == "PinBuilder" => {
                for signature in &interface.body.body {
                    if let TSSignature::TSMethodSignature(m) = signature
                        && let Some(name) = m.key.static_name()
                    {
                        add("PinBuilder", name.to_string(), shape(&m.params));
                    }
                }
            }
            Declaration::VariableDeclaration(declaration) => {
                for declarator in &declaration.declarations {
                    let BindingPattern::BindingIdentifier(id) = &declarator.id else {
                        continue;
                    };
                    let place = match id.name.as_str() {
                        "t" => "t",
                        "seq" => "seq",
                        _ => continue,
                    };
                    // index.d.ts: `export declare const t: { string(): …; … }`
                    if let Some(annotation) = &declarator.type_annotation
                        && let TSType::TSTypeLiteral(literal) = &annotation.type_annotation
                    {
                        for member in &literal.members {
                            if let TSSignature::TSMethodSignature(m) = member
                                && let Some(name) = m.key.static_name()
                            {
                                add(place, name.to_string(), shape(&m.params));
                            }
                        }
                    }
                    // index.js: `export const t = Object.freeze({ string: () => …, … })`
                    if let Some(Expression::CallExpression(freeze)) = &declarator.init
                        && let Some(Expression::ObjectExpression(object)) =
                            freeze.arguments.first().and_then(|a| a.as_expression())
                    {
                        for property in &object.properties {
                            if let ObjectPropertyKind::ObjectProperty(p) = property
                                && let Expression::ArrowFunctionExpression(f) = &p.value
                                && let Some(name) = p.key.static_name()
                            {
                                add(place, name.to_string(), shape(&f.params));
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// What the pin language says each function of `file` looks like.
fn expected(file: &str) -> BTreeMap<&'static str, BTreeMap<String, Shapes>> {
    let declared = file.ends_with(".d.ts");
    let shapes = |list: &[&[bool]]| -> Shapes { list.iter().map(|s| s.to_vec()).collect() };
    let mut t = BTreeMap::new();
    for b in TYPESCRIPT.type_builders {
        let shape = match b.takes {
            BuilderArgument::None => shapes(&[&[]]),
            BuilderArgument::Name | BuilderArgument::Pin => shapes(&[&[false]]),
            // Declared as two overloads; implemented as one function that checks for
            // `undefined`.
            BuilderArgument::OptionalName if declared => shapes(&[&[], &[false]]),
            BuilderArgument::OptionalName => shapes(&[&[false]]),
        };
        t.insert(b.word.to_string(), shape);
    }
    let seq = TYPESCRIPT
        .sequence_builders
        .iter()
        .map(|w| (w.to_string(), shapes(&[&[]])))
        .collect();
    let mut modifiers = BTreeMap::new();
    for m in TYPESCRIPT.modifiers {
        let shape = match m.takes {
            ModifierArgument::None => shapes(&[&[]]),
            ModifierArgument::Text
            | ModifierArgument::Literal
            | ModifierArgument::Flag
            | ModifierArgument::Number
            | ModifierArgument::Count => shapes(&[&[false]]),
            ModifierArgument::OptionalFlag => shapes(&[&[true]]),
        };
        modifiers.insert(m.word.to_string(), shape);
    }
    BTreeMap::from([("t", t), ("seq", seq), ("PinBuilder", modifiers)])
}

#[test]
fn the_typescript_sdk_spells_the_pin_language() {
    for file in ["index.js", "index.d.ts"] {
        let mut sdk = sdk_functions(file);
        // Not modifiers: the pin as a manifest (both files), and the constructor the
        // builders call (index.js).
        let methods = sdk.get_mut("PinBuilder").unwrap();
        assert!(methods.remove("toJSON").is_some(), "{file}: PinBuilder.toJSON moved");
        methods.remove("constructor");
        let expected = expected(file);
        for place in ["t", "seq", "PinBuilder"] {
            assert_eq!(
                sdk.get(place),
                expected.get(place),
                "sdk-ts/{file}: `{place}` against pin_language::TYPESCRIPT"
            );
        }
    }
}
