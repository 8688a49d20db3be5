//! A pin declaration read without running it: `t.array(t.struct("Line")).optional()`,
//! `seq.out()`, or a `const` of the module holding such a chain (a shared builder).
//!
//! The words, what they mean and the rules they can break are the pin language's
//! (`svc_syntax::pin_language`, spec §2.3–2.5), shared with the Rust reader; this module
//! reads their arguments in TypeScript.

use crate::literal::{self, NotStatic};
use crate::module::Module;
use oxc_ast::ast::{Argument, CallExpression, Expression};
use svc_frontend::pin_language::{
    self, BuilderArgument, BuilderValue, ModifierArgument, ModifierValue, PinRule, TYPESCRIPT,
};
use svc_frontend::{Code, Diagnostic, Diagnostics, Span};
use svc_types::{PinDefinition, names};

/// How deep a pin may nest (`t.array(t.array(…))`, `const`s naming `const`s) before svc
/// stops reading it.
const MAX_DEPTH: u32 = 32;

/// Whether a pin is declared among the inputs or the outputs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Input,
    Output,
}

/// Reads one pin declaration; every problem is reported, and gives `None`.
pub fn read<'a>(module: &Module<'a>, expr: &'a Expression<'a>, diags: &mut Diagnostics) -> Option<PinDefinition> {
    read_at(module, expr, 0, diags)
}

/// The builder a chain starts from (`in` for `seq.in().description(…)`), if it is a
/// sequence builder.
pub fn sequence_builder<'a>(module: &Module<'a>, mut expr: &'a Expression<'a>) -> Option<&'static str> {
    for _ in 0..MAX_DEPTH {
        expr = literal::resolve(module, expr).ok()?;
        let Expression::CallExpression(call) = expr else {
            return None;
        };
        let Expression::StaticMemberExpression(member) = call.callee.get_inner_expression() else {
            return None;
        };
        if module.sdk_export(&member.object) == Some("seq") {
            return match member.property.name.as_str() {
                "in" => Some("in"),
                "out" => Some("out"),
                _ => None,
            };
        }
        expr = &member.object;
    }
    None
}

fn read_at<'a>(
    module: &Module<'a>,
    expr: &'a Expression<'a>,
    depth: u32,
    diags: &mut Diagnostics,
) -> Option<PinDefinition> {
    let span = module.span(expr);
    if depth > MAX_DEPTH {
        diags.push(invalid(span, "this pin nests too deeply", "write the pin out directly"));
        return None;
    }
    let expr = match literal::resolve(module, expr) {
        Ok(e) => e,
        Err(e) => {
            e.report("a pin", diags);
            return None;
        }
    };
    let Expression::CallExpression(call) = expr else {
        diags.push(not_a_builder(module.span(expr)));
        return None;
    };
    let Expression::StaticMemberExpression(member) = call.callee.get_inner_expression() else {
        diags.push(not_a_builder(module.span(expr)));
        return None;
    };
    let name = member.property.name.as_str();
    let name_span = module.span(&member.property);
    match module.sdk_export(&member.object) {
        Some("t") => t_builder(module, name, call, name_span, depth, diags),
        Some("seq") => {
            if !TYPESCRIPT.is_sequence_builder(name) {
                let (message, hint) = TYPESCRIPT.unknown_sequence_builder(name);
                diags.push(invalid(name_span, message, hint));
                return None;
            }
            expect_args::<0>(module, call, name_span, &format!("seq.{name}"), diags)?;
            Some(PinDefinition::sequence())
        }
        Some(other) => {
            diags.push(invalid(
                module.span(&member.object),
                format!("`{other}` of @svc/sdk does not build pins"),
                "pins are declared with `t` (`t.string()`, `t.struct(\"Order\")`, …) and `seq` (`seq.in()`, `seq.out()`)",
            ));
            None
        }
        None => {
            let mut pin = read_at(module, &member.object, depth + 1, diags)?;
            modifier(module, &mut pin, name, call, name_span, diags).then_some(pin)
        }
    }
}

fn t_builder<'a>(
    module: &Module<'a>,
    builder: &str,
    call: &'a CallExpression<'a>,
    span: Span,
    depth: u32,
    diags: &mut Diagnostics,
) -> Option<PinDefinition> {
    let what = format!("t.{builder}");
    let Some(word) = TYPESCRIPT.type_builder(builder) else {
        let (message, hint) = TYPESCRIPT.unknown_type_builder(builder);
        diags.push(invalid(span, message, hint));
        return None;
    };
    let inner;
    let mut at = span;
    let value = match word.takes {
        BuilderArgument::None => expect_args::<0>(module, call, span, &what, diags).map(|_| BuilderValue::None)?,
        // `t.object()` is a generic object, `t.object("Order")` a named one (spec §2.3).
        BuilderArgument::OptionalName if call.arguments.is_empty() => BuilderValue::None,
        BuilderArgument::Name | BuilderArgument::OptionalName => {
            BuilderValue::Name(asset_name(module, call, span, &what, diags)?)
        }
        BuilderArgument::Pin => {
            let [arg] = expect_args::<1>(module, call, span, &what, diags)?;
            at = module.span(arg);
            inner = read_at(module, arg, depth + 1, diags)?;
            BuilderValue::Pin(&inner)
        }
    };
    match pin_language::type_of(word.means, value) {
        Ok(type_ref) => Some(PinDefinition::data(type_ref)),
        Err(rule) => {
            diags.push(broken(at, &rule));
            None
        }
    }
}

fn modifier<'a>(
    module: &Module<'a>,
    pin: &mut PinDefinition,
    method: &str,
    call: &'a CallExpression<'a>,
    span: Span,
    diags: &mut Diagnostics,
) -> bool {
    let Some(word) = TYPESCRIPT.modifier(method) else {
        let (message, hint) = TYPESCRIPT.unknown_modifier(method);
        diags.push(invalid(span, message, hint));
        return false;
    };
    // Where a rule the argument breaks is shown: the literal, once read.
    let mut at = span;
    let value = match word.takes {
        ModifierArgument::None => {
            expect_args::<0>(module, call, span, method, diags).map(|_| ModifierValue::Flag(true))
        }
        ModifierArgument::Flag | ModifierArgument::OptionalFlag => optional_bool(
            module,
            call,
            span,
            method,
            word.takes == ModifierArgument::OptionalFlag,
            diags,
        )
        .map(ModifierValue::Flag),
        ModifierArgument::Text => {
            expect_args::<1>(module, call, span, method, diags).and_then(|[text]| match literal::read(module, text) {
                Ok(node) => match node.as_str() {
                    Some(s) => Some(ModifierValue::Text(s.to_string())),
                    None => {
                        diags.push(invalid(
                            node.span,
                            format!("the argument of `{method}` must be a string"),
                            "write the text out in quotes",
                        ));
                        None
                    }
                },
                Err(e) => {
                    e.report(&format!("the argument of `.{method}()`"), diags);
                    None
                }
            })
        }
        ModifierArgument::Number | ModifierArgument::Count => expect_args::<1>(module, call, span, method, diags)
            .and_then(|[value]| match literal::read(module, value) {
                Ok(node) => {
                    at = node.span;
                    match node.to_json() {
                        number @ serde_json::Value::Number(_) => Some(ModifierValue::Literal(number)),
                        _ => {
                            diags.push(invalid(
                                node.span,
                                format!("the argument of `{method}` must be a number"),
                                format!("write the number out, for example `.{method}(1)`"),
                            ));
                            None
                        }
                    }
                }
                Err(e) => {
                    e.report(&format!("the argument of `.{method}()`"), diags);
                    None
                }
            }),
        ModifierArgument::Literal => {
            expect_args::<1>(module, call, span, method, diags).and_then(|[value]| match literal::read(module, value) {
                Ok(node) => {
                    at = node.span;
                    Some(ModifierValue::Literal(node.to_json()))
                }
                Err(e) => {
                    e.report("a pin's default", diags);
                    None
                }
            })
        }
    };
    let Some(value) = value else {
        return false;
    };
    let Err(rule) = pin_language::apply(pin, word.means, value) else {
        return true;
    };
    diags.push(broken(if rule.is_the_arguments() { at } else { span }, &rule));
    false
}

/// The argument of `.portOnly(enabled?)` and friends: `true` when not given (if it may
/// be left out).
fn optional_bool<'a>(
    module: &Module<'a>,
    call: &'a CallExpression<'a>,
    span: Span,
    method: &str,
    may_be_left_out: bool,
    diags: &mut Diagnostics,
) -> Option<bool> {
    if may_be_left_out && call.arguments.is_empty() {
        return Some(true);
    }
    let [arg] = expect_args::<1>(module, call, span, method, diags)?;
    match literal::read(module, arg) {
        Ok(node) => match node.value {
            svc_frontend::yaml::Value::Bool(b) => Some(b),
            _ => {
                diags.push(invalid(
                    node.span,
                    format!("the argument of `.{method}()` must be `true` or `false`"),
                    format!("write `.{method}()` or `.{method}(false)`"),
                ));
                None
            }
        },
        Err(e) => {
            e.report(&format!("the argument of `.{method}()`"), diags);
            None
        }
    }
}

/// The name argument of `t.struct("Order")` and `t.enumValue("Currency")`.
fn asset_name<'a>(
    module: &Module<'a>,
    call: &'a CallExpression<'a>,
    span: Span,
    what: &str,
    diags: &mut Diagnostics,
) -> Option<String> {
    let [arg] = expect_args::<1>(module, call, span, what, diags)?;
    let node = match literal::read(module, arg) {
        Ok(node) => node,
        Err(e) => {
            e.report(&format!("the name in `{what}(…)`"), diags);
            return None;
        }
    };
    let Some(name) = node.as_str() else {
        diags.push(invalid(
            node.span,
            format!("the argument of `{what}` must be a string"),
            format!("write the name out, for example `{what}(\"Order\")`"),
        ));
        return None;
    };
    if let Err(e) = names::check_asset_name(name) {
        diags.push(invalid(node.span, e.message, e.hint));
        return None;
    }
    Some(name.to_string())
}

/// The call's arguments when there are exactly `N` of them, none spread.
fn expect_args<'a, const N: usize>(
    module: &Module<'a>,
    call: &'a CallExpression<'a>,
    span: Span,
    what: &str,
    diags: &mut Diagnostics,
) -> Option<[&'a Expression<'a>; N]> {
    let args: Vec<&'a Expression<'a>> = call
        .arguments
        .iter()
        .filter_map(|a| match a {
            Argument::SpreadElement(_) => None,
            a => Some(a.to_expression()),
        })
        .collect();
    if let Some(spread) = call.arguments.iter().find(|a| matches!(a, Argument::SpreadElement(_))) {
        NotStatic::new(module.span(spread), "a spread argument", "write the arguments out")
            .report(&format!("the arguments of `{what}`"), diags);
        return None;
    }
    match <[&'a Expression<'a>; N]>::try_from(args) {
        Ok(args) => Some(args),
        Err(_) => {
            let takes = match N {
                0 => "no arguments".to_string(),
                1 => "one argument".to_string(),
                n => format!("{n} arguments"),
            };
            diags.push(invalid(
                span,
                format!("`{what}` takes {takes}"),
                format!("write `{what}({})`", if N == 0 { "" } else { "…" }),
            ));
            None
        }
    }
}

fn not_a_builder(span: Span) -> Diagnostic {
    invalid(
        span,
        "expected a pin builder",
        "pins are declared with the SDK's builders, for example `t.string()`, `t.struct(\"Order\")`, `t.array(t.number()).optional()` or `seq.out()`; svc reads them without running code, so write the chain out here or in a `const` of this file",
    )
}

/// A pin rule shared with the Rust reader, spelled in TypeScript.
fn broken(span: Span, rule: &PinRule) -> Diagnostic {
    let (message, hint) = rule.describe(&TYPESCRIPT);
    invalid(span, message, hint)
}

fn invalid(span: Span, message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::InvalidNodeDefinition, span, message)
        .label("invalid pin")
        .help(hint)
}
