//! The node definition language: what goes inside `define_code_function_node! { … }`.
//!
//! ```ignore
//! define_code_function_node! {
//!     node_key: "acme.price-order",
//!     name: "Price order",
//!     description: "Totals an order",          // optional
//!     category: "pricing",                      // optional, default `code-function`
//!     inputs: {
//!         order: t::structure("Order"),
//!         discount: t::number().optional().description("0..1"),
//!         exec: seq::input(),
//!     },
//!     outputs: {
//!         total: t::number(),
//!         next: seq::output(),
//!     },
//!     run: |ctx| async move { Ok(Outputs { total: 1.0 }) },
//! }
//! ```
//!
//! This module is the single interpretation of that syntax. The procedural macro uses
//! it to generate typed `Inputs` / `Outputs` structs, and the compiler uses it to read
//! node manifests from source without compiling or running user code. Pin builder
//! chains are evaluated statically here; the SDK's builder functions compute the same
//! result at run time (a test in the SDK holds the two together).

use crate::pin_language::{
    self, BuilderArgument, BuilderValue, Builds, ModifierArgument, ModifierValue, PinRule, RUST,
};
use proc_macro2::Span;
use svc_types::manifest::{DEFAULT_CATEGORY, NodeManifest, PinDefinition, PinMap};
use svc_types::names;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, Token, braced};

/// The name of the macro, as it appears in source.
pub const MACRO_NAME: &str = "define_code_function_node";

/// The keys a node definition accepts.
pub const KEYS: &[&str] = &[
    "node_key",
    "name",
    "description",
    "category",
    "inputs",
    "outputs",
    "run",
];

/// A problem in a node definition.
#[derive(Debug, Clone)]
pub struct DefError {
    pub kind: DefErrorKind,
    pub span: Span,
    pub message: String,
    pub hint: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefErrorKind {
    /// The node key is missing its namespace, or not kebab case.
    InvalidNodeKey,
    /// Anything else about the definition.
    Invalid,
}

impl DefError {
    fn new(span: Span, message: impl Into<String>, hint: impl Into<String>) -> Self {
        DefError {
            kind: DefErrorKind::Invalid,
            span,
            message: message.into(),
            hint: hint.into(),
        }
    }

    /// As a `syn::Error` (for the procedural macro): the hint is appended.
    pub fn to_syn(&self) -> syn::Error {
        if self.hint.is_empty() {
            syn::Error::new(self.span, &self.message)
        } else {
            syn::Error::new(self.span, format!("{}\n\nhelp: {}", self.message, self.hint))
        }
    }
}

/// One `id: <pin builder>` entry.
#[derive(Clone)]
pub struct PinSyntax {
    pub id: PinId,
    pub expr: Expr,
}

/// A pin id as written: an identifier (`maxTags`, `r#type`), or a string for an id that is
/// not a Rust identifier (`"$ref"`).
#[derive(Clone)]
pub struct PinId {
    pub text: String,
    pub span: Span,
}

impl PinId {
    pub fn span(&self) -> Span {
        self.span
    }
}

/// The `run:` value: a closure (`|ctx| …`, `async |ctx| …`, `|ctx| async move { … }`)
/// or the path of an `async fn(&RunContext<Inputs>) -> NodeResult<Outputs>`.
#[derive(Clone)]
pub enum RunSyntax {
    Closure(syn::ExprClosure),
    Path(syn::ExprPath),
}

/// The definition as written, before evaluation.
#[derive(Clone)]
pub struct NodeDefSyntax {
    /// The span of the whole definition (for "missing key" errors).
    pub span: Span,
    pub node_key: Option<Expr>,
    pub name: Option<Expr>,
    pub description: Option<Expr>,
    pub category: Option<Expr>,
    pub inputs: Vec<PinSyntax>,
    pub outputs: Vec<PinSyntax>,
    pub run: Option<Expr>,
    /// Problems found while reading the syntax (unknown or repeated keys).
    pub errors: Vec<DefError>,
}

impl Parse for NodeDefSyntax {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let span = input.span();
        let mut def = NodeDefSyntax {
            span,
            node_key: None,
            name: None,
            description: None,
            category: None,
            inputs: Vec::new(),
            outputs: Vec::new(),
            run: None,
            errors: Vec::new(),
        };
        let mut seen: Vec<String> = Vec::new();
        while !input.is_empty() {
            let key: Ident = input.call(syn::ext::IdentExt::parse_any)?;
            input.parse::<Token![:]>()?;
            let key_name = key.to_string();
            if seen.contains(&key_name) {
                def.errors.push(DefError::new(
                    key.span(),
                    format!("`{key_name}` is given more than once"),
                    "remove the repeated key",
                ));
            }
            seen.push(key_name.clone());
            match key_name.as_str() {
                "inputs" | "outputs" => {
                    let content;
                    braced!(content in input);
                    let pins = Punctuated::<PinEntry, Token![,]>::parse_terminated(&content)?;
                    let pins = pins.into_iter().map(|p| PinSyntax { id: p.id, expr: p.expr }).collect();
                    if key_name == "inputs" {
                        def.inputs = pins;
                    } else {
                        def.outputs = pins;
                    }
                }
                other => {
                    let value: Expr = input.parse()?;
                    match other {
                        "node_key" => def.node_key = Some(value),
                        "name" => def.name = Some(value),
                        "description" => def.description = Some(value),
                        "category" => def.category = Some(value),
                        "run" => def.run = Some(value),
                        _ => {
                            let hint = match svc_types::assets::closest(other, KEYS.iter().copied()) {
                                Some(best) => format!("did you mean `{best}`?"),
                                None => format!("a node definition accepts: {}", KEYS.join(", ")),
                            };
                            def.errors.push(DefError::new(
                                key.span(),
                                format!("unknown key `{other}` in a node definition"),
                                hint,
                            ));
                        }
                    }
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(def)
    }
}

struct PinEntry {
    id: PinId,
    expr: Expr,
}

impl Parse for PinEntry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let id = if input.peek(syn::LitStr) {
            let lit: syn::LitStr = input.parse()?;
            PinId {
                text: lit.value(),
                span: lit.span(),
            }
        } else {
            let ident: Ident = input.call(syn::ext::IdentExt::parse_any)?;
            let text = ident.to_string();
            PinId {
                text: text.strip_prefix("r#").unwrap_or(&text).to_string(),
                span: ident.span(),
            }
        };
        input.parse::<Token![:]>()?;
        let expr: Expr = input.parse()?;
        Ok(PinEntry { id, expr })
    }
}

/// Where each part of an evaluated definition was written.
#[derive(Debug, Clone)]
pub struct NodeSpans {
    pub definition: Span,
    pub node_key: Span,
    /// Per input pin, in order: the span of the id and of the builder expression.
    pub inputs: Vec<(Span, Span)>,
    pub outputs: Vec<(Span, Span)>,
}

/// An evaluated node definition.
#[derive(Debug, Clone)]
pub struct NodeDef {
    pub manifest: NodeManifest,
    pub spans: NodeSpans,
}

impl NodeDefSyntax {
    /// Evaluates the definition: literal strings, pin builder chains, and every rule of
    /// the node definition (spec §2.2–2.5). Returns the manifest, or every problem found.
    pub fn evaluate(&self) -> Result<NodeDef, Vec<DefError>> {
        let mut errors = self.errors.clone();
        let node_key_span = self.node_key.as_ref().map(|e| e.span()).unwrap_or(self.span);
        let node_key = required_str(
            &self.node_key,
            "node_key",
            self.span,
            "add `node_key: \"<namespace>.<node-name>\"`, for example `node_key: \"acme.price-order\"`",
            &mut errors,
        );
        if let Some(key) = &node_key
            && let Err(e) = names::check_node_key(key)
        {
            errors.push(DefError {
                kind: DefErrorKind::InvalidNodeKey,
                span: node_key_span,
                message: e.message,
                hint: e.hint,
            });
        }
        let name = required_str(
            &self.name,
            "name",
            self.span,
            "add `name: \"…\"`: the label the Builder shows",
            &mut errors,
        );
        if let Some(n) = &name
            && n.trim().is_empty()
        {
            errors.push(DefError::new(
                self.name.as_ref().map(|e| e.span()).unwrap_or(self.span),
                "the node name is empty",
                "give the node a label for the Builder",
            ));
        }
        let description = optional_str(&self.description, &mut errors);
        let category = optional_str(&self.category, &mut errors).unwrap_or_else(|| DEFAULT_CATEGORY.to_string());
        if self.run.is_none() {
            errors.push(DefError::new(
                self.span,
                "the node definition has no `run`",
                "add `run: |ctx| async move { Ok(Outputs { … }) }`",
            ));
        } else if let Some(run) = &self.run
            && let Err(e) = run_syntax(run)
        {
            errors.push(e);
        }
        let (inputs, input_spans) = evaluate_pins(&self.inputs, Direction::Input, &mut errors);
        let (outputs, output_spans) = evaluate_pins(&self.outputs, Direction::Output, &mut errors);

        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(NodeDef {
            manifest: NodeManifest {
                node_key: node_key.unwrap_or_default(),
                name: name.unwrap_or_default(),
                description,
                category,
                inputs,
                outputs,
            },
            spans: NodeSpans {
                definition: self.span,
                node_key: node_key_span,
                inputs: input_spans,
                outputs: output_spans,
            },
        })
    }
}

/// Classifies the `run:` expression.
pub fn run_syntax(run: &Expr) -> Result<RunSyntax, DefError> {
    match run {
        Expr::Closure(c) => {
            if c.inputs.len() != 1 {
                return Err(DefError::new(
                    c.span(),
                    "`run` takes exactly one argument, the run context",
                    "write `run: |ctx| async move { … }`",
                ));
            }
            Ok(RunSyntax::Closure(c.clone()))
        }
        Expr::Path(p) => Ok(RunSyntax::Path(p.clone())),
        Expr::Paren(p) => run_syntax(&p.expr),
        other => Err(DefError::new(
            other.span(),
            "`run` must be a closure or the name of an async function",
            "write `run: |ctx| async move { … }`, or `run: my_run` with `async fn my_run(ctx: &RunContext<Inputs>) -> NodeResult<Outputs>`",
        )),
    }
}

fn lit_str(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(s) => Some(s.value()),
            _ => None,
        },
        Expr::Group(g) => lit_str(&g.expr),
        Expr::Paren(p) => lit_str(&p.expr),
        _ => None,
    }
}

fn required_str(
    expr: &Option<Expr>,
    key: &str,
    def_span: Span,
    help: &str,
    errors: &mut Vec<DefError>,
) -> Option<String> {
    match expr {
        None => {
            errors.push(DefError::new(
                def_span,
                format!("the node definition has no `{key}`"),
                help,
            ));
            None
        }
        Some(e) => match lit_str(e) {
            Some(s) => Some(s),
            None => {
                errors.push(DefError::new(e.span(), format!("`{key}` must be a string literal"), "tools read node definitions without running them, so the value must be written out, for example `\"acme.price-order\"`"));
                None
            }
        },
    }
}

fn optional_str(expr: &Option<Expr>, errors: &mut Vec<DefError>) -> Option<String> {
    let e = expr.as_ref()?;
    match lit_str(e) {
        Some(s) => Some(s),
        None => {
            errors.push(DefError::new(
                e.span(),
                "this must be a string literal",
                "tools read node definitions without running them, so the value must be written out",
            ));
            None
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Input,
    Output,
}

fn evaluate_pins(pins: &[PinSyntax], direction: Direction, errors: &mut Vec<DefError>) -> (PinMap, Vec<(Span, Span)>) {
    let mut out = PinMap::default();
    let mut spans = Vec::new();
    let mut sequence_pin: Option<String> = None;
    for pin in pins {
        let id = pin.id.text.clone();
        if let Err(e) = names::check_pin_id(&id) {
            errors.push(DefError::new(pin.id.span(), e.message, e.hint));
            continue;
        }
        if out.get(&id).is_some() {
            errors.push(DefError::new(
                pin.id.span(),
                format!("pin `{id}` is declared more than once"),
                "pin ids must be unique among the inputs, and among the outputs",
            ));
            continue;
        }
        if let Some((earlier, _)) =
            names::pin_fields_collide(out.0.iter().map(|(i, _)| i.as_str()).chain([id.as_str()]))
        {
            errors.push(DefError::new(
                pin.id.span(),
                format!(
                    "pins `{earlier}` and `{id}` would be one field, `{}`, of the node's Rust struct",
                    names::pin_field(&id)
                ),
                "rename one of them: pin ids of one node must differ by more than case, `_` and `$`",
            ));
            continue;
        }
        let Some(def) = eval_pin(&pin.expr, errors) else {
            continue;
        };
        if def.is_sequence() {
            let builder = match direction {
                Direction::Input => "seq::input()",
                Direction::Output => "seq::output()",
            };
            let declared_as = pin_root_name(&pin.expr);
            let wrong_direction = match direction {
                Direction::Input => matches!(declared_as.as_deref(), Some("output" | "out")),
                Direction::Output => matches!(declared_as.as_deref(), Some("input" | "in")),
            };
            if wrong_direction {
                errors.push(DefError::new(
                    pin.expr.span(),
                    format!(
                        "a sequence pin in {} must be `{builder}`",
                        if direction == Direction::Input {
                            "inputs"
                        } else {
                            "outputs"
                        }
                    ),
                    format!("write `{builder}`"),
                ));
                continue;
            }
            if let Some(first) = &sequence_pin {
                errors.push(DefError::new(
                    pin.id.span(),
                    format!("a node has at most one sequence {} (`{first}` is already one)", if direction == Direction::Input { "input" } else { "output" }),
                    "a code node runs once and then continues at its single sequence output; route branches with check nodes",
                ));
                continue;
            }
            sequence_pin = Some(id.clone());
        }
        spans.push((pin.id.span(), pin.expr.span()));
        out.0.push((id, def));
    }
    (out, spans)
}

/// The builder a chain starts from (`string`, `input`, …).
fn pin_root_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::MethodCall(m) => pin_root_name(&m.receiver),
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => p
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string().trim_start_matches("r#").to_string()),
            _ => None,
        },
        Expr::Paren(p) => pin_root_name(&p.expr),
        Expr::Group(g) => pin_root_name(&g.expr),
        _ => None,
    }
}

/// Evaluates a pin builder chain such as `t::array(t::structure("Line")).optional()`.
pub fn eval_pin(expr: &Expr, errors: &mut Vec<DefError>) -> Option<PinDefinition> {
    match expr {
        Expr::Paren(p) => eval_pin(&p.expr, errors),
        Expr::Group(g) => eval_pin(&g.expr, errors),
        Expr::MethodCall(m) => {
            let mut pin = eval_pin(&m.receiver, errors)?;
            let method = m.method.to_string();
            let args: Vec<&Expr> = m.args.iter().collect();
            apply_modifier(&mut pin, &method, &args, m.method.span(), m.span(), errors).then_some(pin)
        }
        Expr::Call(c) => {
            let Expr::Path(path) = &*c.func else {
                errors.push(not_a_builder(expr));
                return None;
            };
            let segments: Vec<String> = path
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string().trim_start_matches("r#").to_string())
                .collect();
            let (module, builder) = match segments.as_slice() {
                [.., module, builder] => (module.as_str(), builder.as_str()),
                _ => {
                    errors.push(not_a_builder(expr));
                    return None;
                }
            };
            let args: Vec<&Expr> = c.args.iter().collect();
            // On stable, a span over several tokens collapses to the first one: point at
            // the builder's own name instead of `t`.
            let builder_span = path
                .path
                .segments
                .last()
                .map(|s| s.ident.span())
                .unwrap_or_else(|| c.span());
            match module {
                "t" => eval_t_builder(builder, &args, builder_span, errors),
                "seq" => {
                    if !RUST.is_sequence_builder(builder) {
                        let (message, hint) = RUST.unknown_sequence_builder(builder);
                        errors.push(DefError::new(builder_span, message, hint));
                        return None;
                    }
                    expect_args(&args, 0, builder_span, &format!("seq::{builder}"), errors)?;
                    Some(PinDefinition::sequence())
                }
                _ => {
                    errors.push(not_a_builder(expr));
                    None
                }
            }
        }
        _ => {
            errors.push(not_a_builder(expr));
            None
        }
    }
}

fn not_a_builder(expr: &Expr) -> DefError {
    DefError::new(
        expr.span(),
        "expected a pin builder",
        "pins are declared with the SDK's builders, for example `t::string()`, `t::structure(\"Order\")`, `t::array(t::number()).optional()` or `seq::output()`; tools read them without running code, so write the chain out directly",
    )
}

fn expect_args(args: &[&Expr], n: usize, span: Span, what: &str, errors: &mut Vec<DefError>) -> Option<()> {
    if args.len() == n {
        return Some(());
    }
    let takes = match n {
        0 => "no arguments".to_string(),
        1 => "one argument".to_string(),
        n => format!("{n} arguments"),
    };
    errors.push(DefError::new(
        span,
        format!("`{what}` takes {takes}"),
        format!("write `{what}({})`", if n == 0 { "" } else { "…" }),
    ));
    None
}

fn expect_name(args: &[&Expr], span: Span, what: &str, errors: &mut Vec<DefError>) -> Option<String> {
    expect_args(args, 1, span, what, errors)?;
    let Some(name) = lit_str(args[0]) else {
        errors.push(DefError::new(
            args[0].span(),
            format!("the argument of `{what}` must be a string literal"),
            format!("write the name out, for example `{what}(\"Order\")`"),
        ));
        return None;
    };
    if let Err(e) = names::check_asset_name(&name) {
        errors.push(DefError::new(args[0].span(), e.message, e.hint));
        return None;
    }
    Some(name)
}

fn eval_t_builder(builder: &str, args: &[&Expr], span: Span, errors: &mut Vec<DefError>) -> Option<PinDefinition> {
    let what = format!("t::{builder}");
    let Some(word) = RUST.type_builder(builder) else {
        let (message, hint) = RUST.unknown_type_builder(builder);
        errors.push(DefError::new(span, message, hint));
        return None;
    };
    let inner;
    let value = match word.takes {
        BuilderArgument::None => {
            if word.means == Builds::Object && args.len() == 1 {
                errors.push(DefError::new(
                    span,
                    "`t::object` takes no arguments",
                    "a named object is `t::object_named(\"Order\")` (or its alias `t::structure(\"Order\")`)",
                ));
                return None;
            }
            expect_args(args, 0, span, &what, errors)?;
            BuilderValue::None
        }
        BuilderArgument::Name | BuilderArgument::OptionalName => {
            BuilderValue::Name(expect_name(args, span, &what, errors)?)
        }
        BuilderArgument::Pin => {
            expect_args(args, 1, span, &what, errors)?;
            inner = eval_pin(args[0], errors)?;
            BuilderValue::Pin(&inner)
        }
    };
    match pin_language::type_of(word.means, value) {
        Ok(type_ref) => Some(PinDefinition::data(type_ref)),
        Err(rule) => {
            errors.push(rule_error(&rule, args.first().map_or(span, |a| a.span())));
            None
        }
    }
}

fn apply_modifier(
    pin: &mut PinDefinition,
    method: &str,
    args: &[&Expr],
    method_span: Span,
    span: Span,
    errors: &mut Vec<DefError>,
) -> bool {
    let Some(word) = RUST.modifier(method) else {
        let (message, hint) = RUST.unknown_modifier(method);
        errors.push(DefError::new(method_span, message, hint));
        return false;
    };
    let value = match word.takes {
        ModifierArgument::None => expect_args(args, 0, span, method, errors).map(|_| ModifierValue::Flag(true)),
        takes => expect_args(args, 1, span, method, errors).and_then(|_| {
            let value = read_argument(takes, args[0]);
            if value.is_none() {
                let (message, hint) = unreadable_argument(takes, method);
                errors.push(DefError::new(args[0].span(), message, hint));
            }
            value
        }),
    };
    let Some(value) = value else {
        return false;
    };
    let Err(rule) = pin_language::apply(pin, word.means, value) else {
        return true;
    };
    errors.push(rule_error(
        &rule,
        if rule.is_the_arguments() {
            args[0].span()
        } else {
            method_span
        },
    ));
    false
}

/// A modifier's one argument, when it is a literal of the kind the modifier `takes`.
fn read_argument(takes: ModifierArgument, arg: &Expr) -> Option<ModifierValue> {
    match takes {
        ModifierArgument::None => None,
        ModifierArgument::Flag | ModifierArgument::OptionalFlag => match arg {
            Expr::Lit(syn::ExprLit { lit: Lit::Bool(b), .. }) => Some(ModifierValue::Flag(b.value)),
            _ => None,
        },
        ModifierArgument::Text => lit_str(arg).map(ModifierValue::Text),
        ModifierArgument::Number | ModifierArgument::Count => literal_json(arg)
            .filter(serde_json::Value::is_number)
            .map(ModifierValue::Literal),
        ModifierArgument::Literal => literal_json(arg).map(ModifierValue::Literal),
    }
}

/// The message and hint for an argument [`read_argument`] could not read.
fn unreadable_argument(takes: ModifierArgument, method: &str) -> (String, &'static str) {
    let must_be = |what: &str| format!("the argument of `{method}` must be {what}");
    match takes {
        ModifierArgument::Flag | ModifierArgument::OptionalFlag | ModifierArgument::None => (
            must_be("`true` or `false`"),
            "tools read node definitions without running them, so write the value out",
        ),
        ModifierArgument::Text => (
            must_be("a string literal"),
            "tools read node definitions without running them, so write the text out",
        ),
        ModifierArgument::Number | ModifierArgument::Count => (
            must_be("a number literal"),
            "tools read node definitions without running them, so write the number out, for example `.minimum(1)`",
        ),
        ModifierArgument::Literal => (
            "a default must be a literal".to_string(),
            "write a string, number, boolean or list literal, for example `.default(\"EUR\")` or `.default(10)`",
        ),
    }
}

fn rule_error(rule: &PinRule, span: Span) -> DefError {
    let (message, hint) = rule.describe(&RUST);
    DefError::new(span, message, hint)
}

/// A literal expression as JSON: strings, numbers (with sign), booleans, and lists of
/// those (`[…]` or `vec![…]`).
pub fn literal_json(expr: &Expr) -> Option<serde_json::Value> {
    match expr {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(s) => Some(s.value().into()),
            Lit::Bool(b) => Some(b.value.into()),
            Lit::Int(i) => i.base10_parse::<i64>().ok().map(Into::into),
            Lit::Float(f) => f
                .base10_parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(serde_json::Value::Number),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match literal_json(&u.expr)? {
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some((-i).into())
                } else {
                    serde_json::Number::from_f64(-n.as_f64()?).map(serde_json::Value::Number)
                }
            }
            _ => None,
        },
        Expr::Array(a) => a
            .elems
            .iter()
            .map(literal_json)
            .collect::<Option<Vec<_>>>()
            .map(Into::into),
        Expr::Macro(m) if m.mac.path.is_ident("vec") => {
            let elems = m
                .mac
                .parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)
                .ok()?;
            elems
                .iter()
                .map(literal_json)
                .collect::<Option<Vec<_>>>()
                .map(Into::into)
        }
        Expr::Paren(p) => literal_json(&p.expr),
        Expr::Group(g) => literal_json(&g.expr),
        _ => None,
    }
}

/// Finds `define_code_function_node!` invocations among the items of a file.
pub fn find_definitions(file: &syn::File) -> Vec<&syn::ItemMacro> {
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Macro(m) if m.mac.path.segments.last().is_some_and(|s| s.ident == MACRO_NAME) => Some(m),
            _ => None,
        })
        .collect()
}

/// Parses and evaluates the body of one invocation.
pub fn parse_definition(mac: &syn::Macro) -> Result<NodeDef, Vec<DefError>> {
    let syntax: NodeDefSyntax = mac.parse_body().map_err(|e| vec![syn_error(e)])?;
    let mut def = syntax.evaluate()?;
    def.spans.definition = mac.path.span();
    Ok(def)
}

fn syn_error(e: syn::Error) -> DefError {
    DefError::new(
        e.span(),
        e.to_string(),
        "check the syntax of the node definition: `key: value` pairs separated by commas",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(src: &str) -> Result<NodeDef, Vec<String>> {
        let syntax: NodeDefSyntax = syn::parse_str(src).map_err(|e| vec![e.to_string()])?;
        syntax.evaluate().map_err(|errs| {
            errs.into_iter()
                .map(|e| format!("{} | {}", e.message, e.hint))
                .collect()
        })
    }

    fn pin(src: &str) -> Result<PinDefinition, String> {
        let expr: Expr = syn::parse_str(src).unwrap();
        let mut errors = Vec::new();
        eval_pin(&expr, &mut errors)
            .ok_or_else(|| errors.iter().map(|e| e.message.clone()).collect::<Vec<_>>().join("; "))
    }

    fn type_of(src: &str) -> String {
        pin(src).unwrap().type_ref().unwrap().to_string()
    }

    #[test]
    fn every_builder_produces_the_spec_type_string() {
        for (builder, type_string) in [
            ("t::string()", "string"),
            ("t::number()", "number"),
            ("t::boolean()", "boolean"),
            ("t::any()", "any"),
            ("t::object()", "object"),
            ("t::object_named(\"Order\")", "object:Order"),
            ("t::structure(\"Order\")", "object:Order"),
            ("t::r#struct(\"Order\")", "object:Order"),
            ("t::enum_value(\"Color\")", "enum-value:Color"),
            ("t::array(t::structure(\"Line\"))", "object:Line:array"),
        ] {
            assert_eq!(type_of(builder), type_string, "{builder}");
        }
        assert_eq!(
            pin("t::array(t::string())")
                .unwrap()
                .type_ref()
                .unwrap()
                .pin_type_string(),
            "type:array"
        );
        assert_eq!(type_of("svc_sdk::t::string()"), "string");
        assert!(pin("seq::input()").unwrap().is_sequence());
        assert!(pin("seq::output()").unwrap().port_only);
    }

    #[test]
    fn every_modifier_chains() {
        let p = pin("t::string().optional().description(\"help\").default(\"x\").port_only().allow_inline_value()")
            .unwrap();
        assert!(p.optional);
        assert_eq!(p.description.as_deref(), Some("help"));
        assert_eq!(p.default, Some(serde_json::json!("x")));
        assert!(p.port_only && p.allow_inline_value);
        assert!(pin("t::number().pin_only()").unwrap().port_only);
        assert!(!pin("t::number().pin_only_if(false)").unwrap().port_only);
        assert!(!pin("seq::input().port_only_if(false)").unwrap().port_only);
        assert_eq!(
            pin("t::number().default(-2.5)").unwrap().default,
            Some(serde_json::json!(-2.5))
        );
        assert_eq!(
            pin("t::array(t::number()).default(vec![1, 2])").unwrap().default,
            Some(serde_json::json!([1, 2]))
        );
    }

    #[test]
    fn rejects_what_tools_cannot_read() {
        assert!(pin("t::strin()").unwrap_err().contains("not a pin type builder"));
        assert!(pin("t::string().optinal()").unwrap_err().contains("not a pin modifier"));
        assert!(pin("t::object(\"Order\")").unwrap_err().contains("takes no arguments"));
        assert!(pin("t::structure(NAME)").unwrap_err().contains("string literal"));
        assert!(pin("t::structure(\"order\")").unwrap_err().contains("UpperCamelCase"));
        assert!(
            pin("t::number().default(\"ten\")")
                .unwrap_err()
                .contains("does not fit")
        );
        assert!(
            pin("t::array(t::string().optional())")
                .unwrap_err()
                .contains("no effect")
        );
        assert!(pin("seq::input().optional()").unwrap_err().contains("sequence pins"));
        assert!(pin("my_pin()").unwrap_err().contains("expected a pin builder"));
        assert!(pin("t::number().default(x)").unwrap_err().contains("literal"));
    }

    #[test]
    fn evaluates_a_whole_definition() {
        let def = eval(
            r#"
            node_key: "acme.price-order",
            name: "Price order",
            description: "Totals an order",
            inputs: { order: t::structure("Order"), exec: seq::input() },
            outputs: { total: t::number(), next: seq::output() },
            run: |ctx| async move { todo() },
        "#,
        )
        .unwrap();
        let m = def.manifest;
        assert_eq!(m.node_key, "acme.price-order");
        assert_eq!(m.category, "code-function");
        assert_eq!(m.inputs.ids().collect::<Vec<_>>(), ["order", "exec"]);
        assert_eq!(m.outputs.ids().collect::<Vec<_>>(), ["total", "next"]);
    }

    #[test]
    fn reports_every_problem_at_once() {
        let errs = eval(
            r#"
            node_key: "price-order",
            nmae: "x",
            inputs: { a: t::string(), a: t::number(), "bad-id": t::string(), aB: t::string(), a_b: t::number(), s: seq::output() },
            outputs: { o: seq::output(), p: seq::output() },
        "#,
        )
        .unwrap_err();
        let all = errs.join("\n");
        for needle in [
            "no namespace",
            "unknown key `nmae`",
            "did you mean `name`",
            "has no `name`",
            "has no `run`",
            "more than once",
            "not a valid pin id",
            "would be one field, `a_b`",
            "must be `seq::input()`",
            "at most one sequence output",
        ] {
            assert!(all.contains(needle), "missing {needle:?} in:\n{all}");
        }
    }

    #[test]
    fn finds_definitions_in_a_file() {
        let file: syn::File = syn::parse_str(
            r#"
            use svc_sdk::prelude::*;
            svc_sdk::define_code_function_node! {
                node_key: "a.b", name: "B", run: |ctx| async move { Ok(Outputs {}) },
            }
        "#,
        )
        .unwrap();
        let defs = find_definitions(&file);
        assert_eq!(defs.len(), 1);
        assert_eq!(parse_definition(&defs[0].mac).unwrap().manifest.node_key, "a.b");
    }
}
