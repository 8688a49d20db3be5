//! A node module's definition, read without running it:
//!
//! ```ts
//! import { defineCodeFunctionNode, t } from "@svc/sdk";
//!
//! export default defineCodeFunctionNode({
//!   nodeKey: "shop.price-order",
//!   name: "Price order",
//!   inputs: { order: t.struct("Order"), coupon: t.string().optional() },
//!   outputs: { total: t.number() },
//!   run(ctx) { … },
//! });
//! ```
//!
//! The same manifest the Rust reader makes from `define_code_function_node!`, under the
//! same rules and codes; `run` is only required to be a function (its types are
//! TypeScript's to check, its results the runtime's).

use crate::literal::{self, static_key};
use crate::module::Module;
use crate::pin::{self, Direction};
use oxc_ast::ast::{Argument, Expression, ObjectExpression, ObjectProperty, ObjectPropertyKind};
use svc_frontend::node_crate::NodeSourceSpans;
use svc_frontend::{Code, Diagnostic, Diagnostics, Span};
use svc_types::manifest::DEFAULT_CATEGORY;
use svc_types::{NodeManifest, PinMap, names};

/// The SDK function a node module's default export calls.
pub const DEFINE: &str = "defineCodeFunctionNode";

const KEYS: &[&str] = &["nodeKey", "name", "description", "category", "inputs", "outputs", "run"];

const SHAPE_HINT: &str = "a node module ends with `export default defineCodeFunctionNode({ nodeKey: \"acme.price-order\", name: \"Price order\", inputs: { … }, outputs: { … }, run(ctx) { … } })`";

/// What the default export of a module is, for the node reader.
pub enum DefaultExport<'a> {
    /// `defineCodeFunctionNode(<this object>)`, possibly through `const`s, and where
    /// `defineCodeFunctionNode` is written (the place that names the node as a whole).
    Node(&'a Expression<'a>, Span),
    /// No default export: a helper module.
    None,
    /// Something else, at this place.
    Other(Span),
}

/// Classifies the default export of `module`.
pub fn default_export<'a>(module: &Module<'a>) -> DefaultExport<'a> {
    let expr = match module.default_export() {
        None => return DefaultExport::None,
        Some(Err(span)) => return DefaultExport::Other(span),
        Some(Ok(expr)) => expr,
    };
    let resolved = literal::resolve(module, expr).unwrap_or(expr);
    match resolved {
        Expression::CallExpression(call) if module.sdk_export(&call.callee) == Some(DEFINE) => {
            match call.arguments.as_slice() {
                [argument] if !matches!(argument, Argument::SpreadElement(_)) => {
                    DefaultExport::Node(argument.to_expression(), module.span(&call.callee))
                }
                _ => DefaultExport::Other(module.span(&**call)),
            }
        }
        _ => DefaultExport::Other(module.span(expr)),
    }
}

/// Reports a default export that is not a node definition.
pub fn report_not_a_node(span: Span, diags: &mut Diagnostics) {
    diags.push(
        Diagnostic::new(
            Code::InvalidNodeDefinition,
            span,
            format!("the default export of a node module must be `{DEFINE}({{ … }})`"),
        )
        .label("not a node definition")
        .help(format!(
            "{SHAPE_HINT}; helpers go in modules without a default export, or outside the nodes directory"
        )),
    );
}

/// Reads the definition object (the argument of `defineCodeFunctionNode`). Every problem
/// is reported; `None` when any was found.
pub fn read<'a>(
    module: &Module<'a>,
    argument: &'a Expression<'a>,
    definition_span: Span,
    diags: &mut Diagnostics,
) -> Option<(NodeManifest, NodeSourceSpans)> {
    let object = match literal::resolve(module, argument) {
        Ok(Expression::ObjectExpression(object)) => object,
        Ok(other) => {
            diags.push(
                Diagnostic::new(
                    Code::InvalidNodeDefinition,
                    module.span(other),
                    format!("the argument of `{DEFINE}` must be an object"),
                )
                .label("not an object")
                .help(SHAPE_HINT),
            );
            return None;
        }
        Err(e) => {
            e.report("a node definition", diags);
            return None;
        }
    };
    let errors_before = diags.error_count();
    let mut fields: Vec<(&str, Span, Option<&'a Expression<'a>>)> = Vec::new();
    let keys = WrittenOut {
        object: "a node definition",
        instead_of_spread: "write each key of the definition out",
        key: ("a computed key", "a node definition"),
        write_key: "write the key out: `nodeKey: …`",
    };
    for (key, key_span, p) in written_out(module, object, keys, diags) {
        let Some(known) = KEYS.iter().copied().find(|k| *k == key) else {
            let hint = match svc_types::assets::closest(&key, KEYS.iter().copied()) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!("a node definition accepts: {}", KEYS.join(", ")),
            };
            diags.push(
                Diagnostic::new(
                    Code::InvalidNodeDefinition,
                    key_span,
                    format!("unknown key `{key}` in a node definition"),
                )
                .label("unknown key")
                .help(hint),
            );
            continue;
        };
        if let Some((_, first, _)) = fields.iter().find(|(k, ..)| *k == known) {
            diags.push(
                Diagnostic::new(
                    Code::InvalidNodeDefinition,
                    key_span,
                    format!("`{known}` is given more than once"),
                )
                .label("given again")
                .with_secondary(*first, "first given here")
                .help("remove the repeated key"),
            );
            continue;
        }
        // `run(ctx) { … }` is a method: its value is a function all the same.
        let value = if p.method { None } else { Some(&p.value) };
        if known == "run"
            && let Some(value) = value
        {
            check_run(module, value, diags);
        }
        fields.push((known, key_span, value));
    }
    let field = |key: &str| {
        fields
            .iter()
            .find(|(k, ..)| *k == key)
            .map(|(_, span, value)| (*span, *value))
    };

    let node_key = required_string(
        module,
        field("nodeKey"),
        "nodeKey",
        definition_span,
        "add `nodeKey: \"<namespace>.<node-name>\"`, for example `nodeKey: \"acme.price-order\"`",
        diags,
    );
    let node_key_span = field("nodeKey")
        .and_then(|(_, v)| v.map(|v| module.span(v)))
        .unwrap_or(definition_span);
    if let Some(key) = &node_key
        && let Err(e) = names::check_node_key(key)
    {
        diags.push(
            Diagnostic::new(Code::InvalidNodeKey, node_key_span, e.message)
                .label("invalid node key")
                .help(e.hint),
        );
    }
    let name = required_string(
        module,
        field("name"),
        "name",
        definition_span,
        "add `name: \"…\"`: the label the Builder shows",
        diags,
    );
    if let Some(n) = &name
        && n.trim().is_empty()
    {
        let span = field("name")
            .and_then(|(_, v)| v.map(|v| module.span(v)))
            .unwrap_or(definition_span);
        diags.push(
            Diagnostic::new(Code::InvalidNodeDefinition, span, "the node name is empty")
                .label("empty")
                .help("give the node a label for the Builder"),
        );
    }
    let description = optional_string(module, field("description"), "description", diags);
    let category =
        optional_string(module, field("category"), "category", diags).unwrap_or_else(|| DEFAULT_CATEGORY.to_string());
    if field("run").is_none() {
        diags.push(
            Diagnostic::new(
                Code::InvalidNodeDefinition,
                definition_span,
                "the node definition has no `run`",
            )
            .label("no run function")
            .help("add `run(ctx) { return { … } }`: it returns exactly the declared outputs"),
        );
    }
    let (inputs, input_spans) = pins(module, field("inputs"), Direction::Input, diags);
    let (outputs, output_spans) = pins(module, field("outputs"), Direction::Output, diags);
    if diags.error_count() > errors_before {
        return None;
    }
    Some((
        NodeManifest {
            node_key: node_key?,
            name: name?,
            description,
            category,
            inputs,
            outputs,
        },
        NodeSourceSpans {
            definition: definition_span,
            node_key: node_key_span,
            inputs: input_spans,
            outputs: output_spans,
        },
    ))
}

/// `run` must be a function: written inline, or a name the module or an import gives
/// (TypeScript checks what it returns; svc checks the outputs when it runs).
fn check_run<'a>(module: &Module<'a>, value: &'a Expression<'a>, diags: &mut Diagnostics) {
    let value = value.get_inner_expression();
    let ok = matches!(
        value,
        Expression::ArrowFunctionExpression(_) | Expression::FunctionExpression(_) | Expression::Identifier(_)
    );
    if !ok {
        diags.push(
            Diagnostic::new(
                Code::InvalidNodeDefinition,
                module.span(value),
                "`run` must be a function",
            )
            .label("not a function")
            .help("write `run(ctx) { … }`, `run: async (ctx) => { … }`, or `run: priceOrder` naming a function"),
        );
    }
}

fn required_string<'a>(
    module: &Module<'a>,
    field: Option<(Span, Option<&'a Expression<'a>>)>,
    key: &str,
    definition: Span,
    help: &str,
    diags: &mut Diagnostics,
) -> Option<String> {
    match field {
        None => {
            diags.push(
                Diagnostic::new(
                    Code::InvalidNodeDefinition,
                    definition,
                    format!("the node definition has no `{key}`"),
                )
                .label(format!("no `{key}`"))
                .help(help),
            );
            None
        }
        field => optional_string(module, field, key, diags),
    }
}

fn optional_string<'a>(
    module: &Module<'a>,
    field: Option<(Span, Option<&'a Expression<'a>>)>,
    key: &str,
    diags: &mut Diagnostics,
) -> Option<String> {
    let (key_span, value) = field?;
    let Some(value) = value else {
        diags.push(not_a_string(key_span, key));
        return None;
    };
    match literal::read(module, value) {
        Ok(node) => match node.as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                diags.push(not_a_string(node.span, key));
                None
            }
        },
        Err(e) => {
            e.report(&format!("`{key}`"), diags);
            None
        }
    }
}

fn not_a_string(span: Span, key: &str) -> Diagnostic {
    Diagnostic::new(Code::InvalidNodeDefinition, span, format!("`{key}` must be a string"))
        .label("not a string")
        .help("write the text out in quotes")
}

/// `inputs: { id: <pin>, … }` (or `outputs`), in declaration order.
fn pins<'a>(
    module: &Module<'a>,
    field: Option<(Span, Option<&'a Expression<'a>>)>,
    direction: Direction,
    diags: &mut Diagnostics,
) -> (PinMap, Vec<(Span, Span)>) {
    let mut out = PinMap::default();
    let mut spans = Vec::new();
    let what = if direction == Direction::Input {
        "inputs"
    } else {
        "outputs"
    };
    let Some((key_span, value)) = field else {
        return (out, spans);
    };
    let object = match value.map(|v| literal::resolve(module, v)) {
        Some(Ok(Expression::ObjectExpression(object))) => object,
        Some(Err(e)) => {
            e.report(&format!("`{what}`"), diags);
            return (out, spans);
        }
        other => {
            let span = match other {
                Some(Ok(e)) => module.span(e),
                _ => key_span,
            };
            diags.push(
                Diagnostic::new(
                    Code::InvalidNodeDefinition,
                    span,
                    format!("`{what}` must be an object of pins"),
                )
                .label("not an object")
                .help(format!("write `{what}: {{ total: t.number(), … }}`")),
            );
            return (out, spans);
        }
    };
    let mut sequence_pin: Option<String> = None;
    let object_what = format!("`{what}`");
    let ids = WrittenOut {
        object: &object_what,
        instead_of_spread: "declare each pin here: `id: t.string()`",
        key: ("a computed pin id", "a pin id"),
        write_key: "write the id out: `total: t.number()`",
    };
    for (id, id_span, p) in written_out(module, object, ids, diags) {
        if let Err(e) = names::check_pin_id(&id) {
            diags.push(
                Diagnostic::new(Code::InvalidNodeDefinition, id_span, e.message)
                    .label("invalid pin id")
                    .help(format!(
                        "{}; flows wire pins by id, so one flow works with a node written in either language",
                        e.hint
                    )),
            );
            continue;
        }
        if out.get(&id).is_some() {
            diags.push(
                Diagnostic::new(
                    Code::InvalidNodeDefinition,
                    id_span,
                    format!("pin `{id}` is declared more than once"),
                )
                .label("declared again")
                .help("pin ids must be unique among the inputs, and among the outputs"),
            );
            continue;
        }
        if let Some((earlier, _)) =
            names::pin_fields_collide(out.0.iter().map(|(i, _)| i.as_str()).chain([id.as_str()]))
        {
            diags.push(
                Diagnostic::new(
                    Code::InvalidNodeDefinition,
                    id_span,
                    format!("pins `{earlier}` and `{id}` differ only in case, `_` or `$`"),
                )
                .label("too close to another pin")
                .help("rename one of them: svc names each pin's value in generated Rust by its snake_case form, so pin ids of one node must differ by more than that"),
            );
            continue;
        }
        let Some(def) = pin::read(module, &p.value, diags) else {
            continue;
        };
        if def.is_sequence() {
            let (builder, wrong) = match direction {
                Direction::Input => ("seq.in()", "out"),
                Direction::Output => ("seq.out()", "in"),
            };
            if pin::sequence_builder(module, &p.value) == Some(wrong) {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidNodeDefinition,
                        module.span(&p.value),
                        format!("a sequence pin in {what} must be `{builder}`"),
                    )
                    .label("wrong direction")
                    .help(format!("write `{builder}`")),
                );
                continue;
            }
            if let Some(first) = &sequence_pin {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidNodeDefinition,
                        id_span,
                        format!(
                            "a node has at most one sequence {} (`{first}` is already one)",
                            &what[..what.len() - 1]
                        ),
                    )
                    .label("a second sequence pin")
                    .help("a code node runs once and then continues at its single sequence output; route branches with check nodes"),
                );
                continue;
            }
            sequence_pin = Some(id.clone());
        }
        spans.push((id_span, module.span(&p.value)));
        out.0.push((id, def));
    }
    (out, spans)
}

/// How the keys of an object literal svc reads must be written, for the messages about a
/// spread or a computed key in it.
struct WrittenOut<'s> {
    /// What the object is: "a node definition".
    object: &'s str,
    /// What to write instead of a spread.
    instead_of_spread: &'s str,
    /// What a computed key is, and what must be written out: ("a computed pin id", "a pin id").
    key: (&'s str, &'s str),
    /// How to write a key out.
    write_key: &'s str,
}

/// The properties of `object` whose keys are written out, each with its key and the key's
/// span; a spread or a computed key is reported (as `how` says) and left out.
fn written_out<'a>(
    module: &Module<'a>,
    object: &'a ObjectExpression<'a>,
    how: WrittenOut,
    diags: &mut Diagnostics,
) -> Vec<(String, Span, &'a ObjectProperty<'a>)> {
    let mut out = Vec::new();
    for property in &object.properties {
        let ObjectPropertyKind::ObjectProperty(p) = property else {
            literal::NotStatic::new(module.span(property), "a spread", how.instead_of_spread).report(how.object, diags);
            continue;
        };
        let key_span = module.span(&p.key);
        match static_key(&p.key, p.computed) {
            Some(key) => out.push((key, key_span, &**p)),
            None => literal::NotStatic::new(key_span, how.key.0, how.write_key).report(how.key.1, diags),
        }
    }
    out
}
