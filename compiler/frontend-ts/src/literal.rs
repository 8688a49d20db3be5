//! Reading a TypeScript expression as data, without running it.
//!
//! What svc needs from `svc.config.ts` and from node definitions is plain data: strings,
//! numbers, booleans, arrays and objects, possibly named by a `const` of the same file or
//! spread from one. That subset is read here into the same located tree the YAML reader
//! produces ([`Node`]), so that one set of decoders (`svc_frontend::config::read_enum`
//! and friends) checks both formats with the same rules and messages. Anything else (a
//! call, an import from elsewhere, arithmetic, a template with `${…}`) is [`NotStatic`]:
//! a located error that says what to write instead.

use crate::module::Module;
use oxc_ast::ast::{
    ArrayExpressionElement, Expression, ObjectPropertyKind, PropertyKey, TemplateLiteral, UnaryOperator,
};
use svc_frontend::yaml::{Node, Value};
use svc_frontend::{Code, Diagnostic, Diagnostics, Span};

/// How deep `const` references may chain (`const a = b; const b = c; …`) before svc
/// stops following them: a cycle would otherwise never end.
const MAX_CONST_DEPTH: u32 = 32;

/// A value svc would have to run the code to know.
#[derive(Debug, Clone)]
pub struct NotStatic {
    pub span: Span,
    /// What was found: "a function call", "`rate` (imported from `./config`)".
    pub found: String,
    pub hint: String,
}

impl NotStatic {
    pub fn new(span: Span, found: impl Into<String>, hint: impl Into<String>) -> Self {
        NotStatic {
            span,
            found: found.into(),
            hint: hint.into(),
        }
    }

    pub fn report(self, what: &str, diags: &mut Diagnostics) {
        diags.push(
            Diagnostic::new(
                Code::NotStatic,
                self.span,
                format!(
                    "{what} must be written out: svc reads it without running the code, and found {}",
                    self.found
                ),
            )
            .label("not a literal")
            .help(self.hint),
        );
    }
}

const WRITE_IT_OUT: &str =
    "write the value literally here, or in a `const` of this file (strings, numbers, booleans, arrays and objects)";

/// Follows `const` names of this module to the expression they stand for.
pub fn resolve<'a>(module: &Module<'a>, mut expr: &'a Expression<'a>) -> Result<&'a Expression<'a>, NotStatic> {
    for _ in 0..MAX_CONST_DEPTH {
        // Parentheses, `as`, `satisfies`, `!` and `<T>x` do not change a value.
        expr = expr.get_inner_expression();
        let Expression::Identifier(id) = expr else {
            return Ok(expr);
        };
        match module.consts.get(id.name.as_str()) {
            Some(init) => expr = init,
            None => return Err(unknown_name(module, id.name.as_str(), module.span(&**id))),
        }
    }
    Err(NotStatic::new(
        module.span(expr),
        "`const`s that refer to each other in a cycle",
        WRITE_IT_OUT,
    ))
}

fn unknown_name(module: &Module, name: &str, span: Span) -> NotStatic {
    match module.imports.get(name) {
        Some(import) => NotStatic::new(
            span,
            format!("`{name}`, imported from `{}`", import.source),
            format!("svc cannot follow imports here; {WRITE_IT_OUT}"),
        ),
        None => NotStatic::new(
            span,
            format!("`{name}`, which is not a `const` of this file"),
            WRITE_IT_OUT,
        ),
    }
}

/// Reads `expr` as data.
pub fn read<'a>(module: &Module<'a>, expr: &'a Expression<'a>) -> Result<Node, NotStatic> {
    read_at(module, expr, 0)
}

fn read_at<'a>(module: &Module<'a>, expr: &'a Expression<'a>, depth: u32) -> Result<Node, NotStatic> {
    if depth > MAX_CONST_DEPTH {
        return Err(NotStatic::new(
            module.span(expr),
            "values nested too deeply",
            WRITE_IT_OUT,
        ));
    }
    let // Parentheses, `as`, `satisfies`, `!` and `<T>x` do not change a value.
        expr = expr.get_inner_expression();
    let span = module.span(expr);
    let value = match expr {
        Expression::StringLiteral(s) => Value::String(s.value.to_string()),
        Expression::BooleanLiteral(b) => Value::Bool(b.value),
        Expression::NullLiteral(_) => Value::Null,
        Expression::NumericLiteral(n) => number(n.value),
        Expression::TemplateLiteral(t) if t.expressions.is_empty() => match plain_template(t) {
            Some(text) => Value::String(text),
            None => return Err(NotStatic::new(span, "a template with an invalid escape", WRITE_IT_OUT)),
        },
        Expression::TemplateLiteral(_) => {
            return Err(NotStatic::new(
                span,
                "a template with `${…}`",
                "write the whole string out in quotes",
            ));
        }
        Expression::UnaryExpression(u)
            if matches!(u.operator, UnaryOperator::UnaryNegation | UnaryOperator::UnaryPlus) =>
        {
            let operand = read_at(module, &u.argument, depth + 1)?;
            let negate = u.operator == UnaryOperator::UnaryNegation;
            match operand.value {
                Value::Int(i) if negate => Value::Int(-i),
                Value::Float(f) if negate => number(-f),
                v @ (Value::Int(_) | Value::Float(_)) => v,
                _ => {
                    return Err(NotStatic::new(
                        span,
                        "a sign on something that is not a number",
                        WRITE_IT_OUT,
                    ));
                }
            }
        }
        Expression::Identifier(id) if id.name == "undefined" => Value::Null,
        Expression::Identifier(id) => match module.consts.get(id.name.as_str()) {
            Some(init) => return read_at(module, init, depth + 1),
            None => return Err(unknown_name(module, id.name.as_str(), span)),
        },
        Expression::ArrayExpression(array) => {
            let mut items = Vec::new();
            for element in &array.elements {
                match element {
                    ArrayExpressionElement::SpreadElement(spread) => {
                        match read_at(module, &spread.argument, depth + 1)? {
                            Node {
                                value: Value::Seq(more),
                                ..
                            } => items.extend(more),
                            other => {
                                return Err(NotStatic::new(
                                    other.span,
                                    "a spread of something that is not an array",
                                    WRITE_IT_OUT,
                                ));
                            }
                        }
                    }
                    ArrayExpressionElement::Elision(hole) => {
                        return Err(NotStatic::new(
                            module.span(&**hole),
                            "a hole in an array",
                            "remove the extra comma",
                        ));
                    }
                    element => items.push(read_at(module, element.to_expression(), depth + 1)?),
                }
            }
            Value::Seq(items)
        }
        Expression::ObjectExpression(object) => {
            let mut entries: Vec<(Node, Node)> = Vec::new();
            let mut put = |key: Node, value: Node| {
                // As in JavaScript, a later key wins over an earlier one (and a spread).
                entries.retain(|(k, _)| k.as_str() != key.as_str());
                entries.push((key, value));
            };
            for property in &object.properties {
                match property {
                    ObjectPropertyKind::ObjectProperty(p) => {
                        let key_span = module.span(&p.key);
                        let Some(name) = static_key(&p.key, p.computed) else {
                            return Err(NotStatic::new(
                                key_span,
                                "a computed key",
                                "write the key out: `name: …`",
                            ));
                        };
                        if p.method || p.kind != oxc_ast::ast::PropertyKind::Init {
                            return Err(NotStatic::new(module.span(&**p), "a method or accessor", WRITE_IT_OUT));
                        }
                        // `key: undefined` is an absent key, as `JSON.stringify` and the SDK see it.
                        if matches!(p.value.get_inner_expression(), Expression::Identifier(id) if id.name == "undefined")
                        {
                            continue;
                        }
                        let value = read_at(module, &p.value, depth + 1)?;
                        put(
                            Node {
                                value: Value::String(name),
                                span: key_span,
                            },
                            value,
                        );
                    }
                    ObjectPropertyKind::SpreadProperty(spread) => match read_at(module, &spread.argument, depth + 1)? {
                        Node {
                            value: Value::Map(more),
                            ..
                        } => {
                            for (k, v) in more {
                                put(k, v);
                            }
                        }
                        other => {
                            return Err(NotStatic::new(
                                other.span,
                                "a spread of something that is not an object",
                                WRITE_IT_OUT,
                            ));
                        }
                    },
                }
            }
            Value::Map(entries)
        }
        other => return Err(NotStatic::new(span, describe(other), WRITE_IT_OUT)),
    };
    Ok(Node { value, span })
}

/// Integral numbers that JavaScript holds exactly become integers (so `100` stays `100`
/// in manifests, as `JSON.stringify` writes it); the rest stay floats.
fn number(value: f64) -> Value {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE && !(value == 0.0 && value.is_sign_negative()) {
        Value::Int(value as i64)
    } else {
        Value::Float(value)
    }
}

/// The name of a property key written out: `name`, `"name"`, `["name"]`, `1`.
pub fn static_key(key: &PropertyKey, computed: bool) -> Option<String> {
    match key {
        PropertyKey::StaticIdentifier(id) if !computed => Some(id.name.to_string()),
        PropertyKey::PrivateIdentifier(_) => None,
        PropertyKey::StringLiteral(s) => Some(s.value.to_string()),
        PropertyKey::NumericLiteral(n) => Some(n.value.to_string()),
        PropertyKey::TemplateLiteral(t) => plain_template(t),
        _ => None,
    }
}

/// The text of a template written out: without `${…}`, and with valid escapes.
pub fn plain_template(template: &TemplateLiteral) -> Option<String> {
    if !template.expressions.is_empty() {
        return None;
    }
    let cooked = template.quasis.first()?.value.cooked.as_ref()?;
    Some(cooked.to_string())
}

/// A string written out: a string literal, or a template without `${…}`.
pub fn plain_string(expr: &Expression) -> Option<String> {
    match expr.get_inner_expression() {
        Expression::StringLiteral(s) => Some(s.value.to_string()),
        Expression::TemplateLiteral(t) => plain_template(t),
        _ => None,
    }
}

/// A few words for an expression that is not data, for "found …".
pub fn describe(expr: &Expression) -> String {
    match expr {
        Expression::CallExpression(c) => match c.callee.get_inner_expression() {
            Expression::Identifier(id) => format!("a call of `{}(…)`", id.name),
            _ => "a function call".to_string(),
        },
        Expression::NewExpression(_) => "a `new` expression".to_string(),
        Expression::ArrowFunctionExpression(_) | Expression::FunctionExpression(_) => "a function".to_string(),
        Expression::BinaryExpression(_) | Expression::LogicalExpression(_) => "an operation".to_string(),
        Expression::ConditionalExpression(_) => "a conditional (`? :`)".to_string(),
        Expression::AwaitExpression(_) => "an `await`".to_string(),
        Expression::ImportExpression(_) => "a dynamic `import()`".to_string(),
        e if e.is_member_expression() => "a property read".to_string(),
        _ => "a computed value".to_string(),
    }
}
