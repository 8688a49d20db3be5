//! The node as a whole: its modules (held to a top level without side effects), the
//! names they define (constants, lookup tables, functions), the helpers `run` calls, the
//! outputs it returns, and the Rust module all of that becomes.

use super::scope::{Function as Frame, FunctionKind, Holds, Scope};
use super::types::{Kind, Ty, Val, record_ident};
use super::{NotNative, Result};
use crate::module::Module;
use crate::node::{self, DefaultExport};
use oxc_allocator::Allocator;
use oxc_ast::ast::{BindingPattern, Declaration, Expression, Function, ObjectPropertyKind, Statement, UnaryOperator};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashMap;
use svc_frontend::{Diagnostics, FileId, Span};
use svc_types::{Assets, NodeManifest, TypeRef};

/// One module of the project, as the bundle has it.
pub struct Source<'s> {
    /// Its bundle name: `src/nodes/price-order.ts`.
    pub name: &'s str,
    pub file: FileId,
    pub text: &'s str,
    /// Each project import, as written, and the module it resolved to.
    pub imports: &'s [(String, String)],
}

/// A module-level `const` object of literal values, used as a lookup table.
#[derive(Debug, Clone)]
pub struct Table {
    pub entries: Vec<(String, Val)>,
    pub ty: Ty,
    pub kind: Kind,
}

/// A module function the node calls.
#[derive(Clone, Copy)]
pub struct HelperRef<'a> {
    module: &'a str,
    name: &'a str,
    function: Callable<'a>,
}

/// A function: a module's (`function f(…) { … }`, `const f = (…) => …`) or a node's `run`.
#[derive(Clone, Copy)]
enum Callable<'a> {
    Function(&'a Function<'a>),
    Arrow(&'a oxc_ast::ast::ArrowFunctionExpression<'a>),
}

impl<'a> Callable<'a> {
    /// What a module-level `const` holds, when it is a function.
    fn of(init: &'a Expression<'a>) -> Option<Self> {
        match init.get_inner_expression() {
            Expression::ArrowFunctionExpression(f) => Some(Callable::Arrow(f)),
            Expression::FunctionExpression(f) => Some(Callable::Function(f)),
            _ => None,
        }
    }

    fn params(self) -> &'a oxc_ast::ast::FormalParameters<'a> {
        match self {
            Callable::Function(f) => &f.params,
            Callable::Arrow(f) => &f.params,
        }
    }

    fn is_plain(self) -> bool {
        match self {
            Callable::Function(f) => !f.r#async && !f.generator,
            Callable::Arrow(f) => !f.r#async,
        }
    }

    /// Its statements, or the expression an arrow function returns.
    fn body(self) -> Option<std::result::Result<&'a [Statement<'a>], &'a Expression<'a>>> {
        match self {
            Callable::Function(f) => f.body.as_ref().map(|b| Ok(&b.statements[..])),
            Callable::Arrow(f) => match (f.get_function_body(), f.get_expression()) {
                (_, Some(e)) => Some(Err(e)),
                (Some(body), None) => Some(Ok(&body.statements[..])),
                (None, None) => None,
            },
        }
    }
}

/// What a name that is not a local stands for.
pub enum Global<'a> {
    /// A `const` of a literal number, string or boolean.
    Value(Val),
    Table(Table),
    Function(HelperRef<'a>),
    /// `run`'s parameter.
    Context,
    /// `ctx.inputs` by the name `run`'s destructured parameter gives it (`run({ inputs })`).
    Inputs,
}

struct Parsed<'a> {
    module: Module<'a>,
    imports: &'a [(String, String)],
}

/// A field of a Rust struct the translation builds.
struct Field {
    wire: String,
    ty: TypeRef,
    optional: bool,
    rust: Ident,
}

struct Helper {
    key: (String, String),
    rust: Ident,
    params: Vec<Ty>,
    returns: Ty,
}

pub struct Translator<'a> {
    /// The project's modules, parsed once for all its nodes.
    modules: &'a HashMap<&'a str, Parsed<'a>>,
    /// The module whose code is being translated (names resolve in it).
    current: &'a str,
    node_module: &'a str,
    /// The name of `run`'s parameter.
    context: Option<&'a str>,
    /// The name `run({ inputs })` gives `ctx.inputs`.
    inputs: Option<&'a str>,
    pub assets: &'a Assets,
    pub manifest: &'a NodeManifest,
    pub scope: Scope,
    /// The fields of each record type, by id.
    pub records: Vec<Vec<(String, Ty)>>,
    helpers: Vec<Helper>,
    helper_items: Vec<TokenStream>,
    in_progress: Vec<(String, String)>,
}

/// Translates each of `nodes` (the module that default-exports it, and its manifest) into
/// a Rust module `native` with `run(ctx, logs) -> js::Flow<Outputs>`, or says why it is
/// not translated. The modules are parsed once for all of them.
pub fn translate(sources: &[Source], assets: &Assets, nodes: &[(&str, &NodeManifest)]) -> Vec<Result<TokenStream>> {
    let allocator = Allocator::default();
    let mut modules = HashMap::new();
    for source in sources {
        let mut diags = Diagnostics::default();
        let Some(module) = Module::parse(&allocator, source.file, source.text, &mut diags) else {
            let not = NotNative::new(
                Span::file_start(source.file),
                "a module that does not parse is not compiled to Rust",
            );
            return nodes.iter().map(|_| Err(not.clone())).collect();
        };
        let parsed = Parsed {
            module,
            imports: source.imports,
        };
        modules.insert(source.name, parsed);
    }
    nodes
        .iter()
        .map(|(module, manifest)| translate_node(&modules, module, assets, manifest))
        .collect()
}

fn translate_node<'a>(
    modules: &'a HashMap<&'a str, Parsed<'a>>,
    node_module: &str,
    assets: &'a Assets,
    manifest: &'a NodeManifest,
) -> Result<TokenStream> {
    let Some((&node_module, _)) = modules.get_key_value(node_module) else {
        return Err(NotNative::new(
            Span::file_start(FileId(0)),
            "a node without its module is not compiled to Rust",
        ));
    };
    let mut translator = Translator {
        modules,
        current: node_module,
        node_module,
        context: None,
        inputs: None,
        assets,
        manifest,
        scope: Scope::default(),
        records: Vec::new(),
        helpers: Vec::new(),
        helper_items: Vec::new(),
        in_progress: Vec::new(),
    };
    translator.check_top_levels(node_module, &mut Vec::new())?;
    let run = translator.run_function()?;
    let body = translator.run_body(run)?;
    let records = translator.records.iter().enumerate().map(|(id, fields)| {
        let name = record_ident(id);
        let fields = fields.iter().map(|(n, t)| {
            let f = format_ident!("f_{}", n);
            let t = t.rust();
            quote!(#f: #t)
        });
        quote! {
            #[derive(::core::clone::Clone)]
            struct #name { #(#fields),* }
        }
    });
    let helpers = &translator.helper_items;
    Ok(quote! {
        /// `run`, compiled from TypeScript to Rust. It answers as the engine would, or
        /// stops with `Exit::Deopt` where only the engine decides, before any effect.
        pub(super) mod native {
            #![allow(unused_mut, unused_variables, unused_parens, unreachable_code, dead_code, non_snake_case, clippy::all)]
            use ::svc_sdk::__private::js;

            #(#records)*

            #(#helpers)*

            pub(super) fn run(
                ctx: &::svc_sdk::RunContext<super::Inputs>,
                logs: &mut ::std::vec::Vec<::std::string::String>,
            ) -> js::Flow<super::Outputs> {
                #(#body)*
                js::deopt()
            }
        }
    })
}

/// Parameters as plain names: `(a, b)`.
pub(super) fn plain_params<'a>(params: &'a oxc_ast::ast::FormalParameters<'a>) -> Option<Vec<&'a str>> {
    if params.rest.is_some() {
        return None;
    }
    params
        .items
        .iter()
        .map(|p| match &p.pattern {
            BindingPattern::BindingIdentifier(id) if p.initializer.is_none() && Scope::valid_name(id.name.as_str()) => {
                Some(id.name.as_str())
            }
            _ => None,
        })
        .collect()
}

impl<'a> Translator<'a> {
    pub fn span(&self, node: &impl oxc_span::GetSpan) -> Span {
        self.modules[self.current].module.span(node)
    }

    /// Every module the node's module reaches must do nothing when it loads: imports,
    /// functions, types, and `const`s of literal data. Then nothing outlives a call in the
    /// engine that the translation would not have (a counter, a cache), and a module
    /// function is what its text says.
    fn check_top_levels(&self, name: &'a str, seen: &mut Vec<&'a str>) -> Result<()> {
        if seen.contains(&name) {
            return Ok(());
        }
        seen.push(name);
        let parsed = &self.modules[name];
        let module = &parsed.module;
        for s in &module.program.body {
            let pure = match s {
                Statement::ImportDeclaration(_)
                | Statement::FunctionDeclaration(_)
                | Statement::TSTypeAliasDeclaration(_)
                | Statement::TSInterfaceDeclaration(_)
                | Statement::EmptyStatement(_) => true,
                Statement::VariableDeclaration(d) => literal_consts(d),
                Statement::ExportNamedDeclaration(_) => true,
                Statement::ExportDeclaration(export) => match &export.declaration {
                    Declaration::FunctionDeclaration(_)
                    | Declaration::TSTypeAliasDeclaration(_)
                    | Declaration::TSInterfaceDeclaration(_) => true,
                    Declaration::VariableDeclaration(d) => literal_consts(d),
                    _ => false,
                },
                // The node's own definition (the SDK's builders have no effects).
                Statement::ExportDefaultDeclaration(_) => name == self.node_module,
                _ => false,
            };
            if !pure {
                return Err(NotNative::new(
                    module.span(s),
                    "a module that does more when it loads than define functions, types and constants \
                     of literal data is not compiled to Rust",
                ));
            }
        }
        for (_, target) in parsed.imports {
            if let Some((key, _)) = self.modules.get_key_value(target.as_str()) {
                self.check_top_levels(key, seen)?;
            }
        }
        Ok(())
    }

    /// The `run` of the node's definition.
    fn run_function(&mut self) -> Result<Callable<'a>> {
        let module = &self.modules[self.node_module].module;
        let DefaultExport::Node(argument, span) = node::default_export(module) else {
            return Err(NotNative::new(
                Span::file_start(module.lines.file()),
                "a module without a node definition is not compiled to Rust",
            ));
        };
        let Ok(Expression::ObjectExpression(object)) = crate::literal::resolve(module, argument) else {
            return Err(NotNative::new(span, "this node definition is not compiled to Rust"));
        };
        for p in &object.properties {
            let ObjectPropertyKind::ObjectProperty(p) = p else {
                continue;
            };
            if super::expr::static_name(&p.key).as_deref() != Some("run") {
                continue;
            }
            return match p.value.get_inner_expression() {
                Expression::FunctionExpression(f) if !f.generator => Ok(Callable::Function(f)),
                Expression::ArrowFunctionExpression(f) => Ok(Callable::Arrow(f)),
                other => Err(NotNative::new(
                    module.span(other),
                    "a `run` that is not a function is not compiled to Rust",
                )),
            };
        }
        Err(NotNative::new(span, "a node without `run` is not compiled to Rust"))
    }

    fn run_body(&mut self, run: Callable<'a>) -> Result<Vec<TokenStream>> {
        let params = run.params();
        let Some(body) = run.body() else {
            return Err(self.not(params, "a `run` without a body"));
        };
        if params.rest.is_some() || params.items.len() > 1 {
            return Err(self.not(params, "`run` with more than one parameter"));
        }
        // `run({ inputs })` and `run({ inputs: { a, b } })`: names for `ctx.inputs` or for
        // its pins, declared before the body.
        let mut pins = None;
        match params.items.first().map(|p| (&p.pattern, &p.initializer)) {
            None => {}
            Some((BindingPattern::BindingIdentifier(id), None)) if Scope::valid_name(id.name.as_str()) => {
                self.context = Some(id.name.as_str());
            }
            Some((BindingPattern::ObjectPattern(pattern), None)) if pattern.rest.is_none() => {
                for p in &pattern.properties {
                    let key = super::expr::static_name(&p.key);
                    match (key.as_deref(), &p.value) {
                        (Some("inputs"), BindingPattern::BindingIdentifier(id)) if !p.computed => {
                            self.inputs = Some(id.name.as_str());
                        }
                        (Some("inputs"), BindingPattern::ObjectPattern(inner)) if !p.computed => pins = Some(&**inner),
                        _ => return Err(self.not(p, "taking anything but `inputs` from `run`'s parameter")),
                    }
                }
            }
            Some(_) => return Err(self.not(params, "this `run` parameter")),
        }
        self.scope.functions.push(Frame {
            kind: FunctionKind::Run,
            returns: None,
        });
        self.scope.enter();
        let out = (|| {
            let mut out = match pins {
                Some(pattern) => self.destructure_inputs(pattern)?,
                None => Vec::new(),
            };
            match body {
                Ok(statements) => out.extend(self.statements(statements)?),
                // `run: (ctx) => ({ … })`
                Err(e) => {
                    let outputs = self.outputs(e)?;
                    out.push(quote!(return ::core::result::Result::Ok(#outputs);));
                }
            }
            Ok(out)
        })();
        self.scope.leave();
        self.scope.functions.pop();
        out
    }

    /// `ctx.inputs` as a value, as `ctx.inputs` or a name `run`'s parameter gave it.
    pub fn inputs_value(&self) -> Val {
        Val {
            ty: Ty::Inputs,
            code: quote!(ctx.inputs),
            kind: Kind::Place,
            path: Some("ctx.inputs".into()),
            root: Some("ctx.inputs".into()),
        }
    }

    /// `run({ inputs: { a, b } })`: a constant per pin, as `const { a, b } = ctx.inputs`.
    fn destructure_inputs(&mut self, pattern: &'a oxc_ast::ast::ObjectPattern<'a>) -> Result<Vec<TokenStream>> {
        if pattern.rest.is_some() {
            return Err(self.not(pattern, "a rest pattern in `run`'s parameter"));
        }
        let mut out = Vec::new();
        for p in &pattern.properties {
            let (Some(key), BindingPattern::BindingIdentifier(id), false) =
                (super::expr::static_name(&p.key), &p.value, p.computed)
            else {
                return Err(self.not(p, "this destructuring of `inputs`"));
            };
            let pin = self.member_of(self.inputs_value(), &key, p)?;
            out.push(self.declare(id.name.as_str(), pin, false, p)?);
        }
        Ok(out)
    }

    /// What `name` stands for in the current module, when it is not a local.
    pub fn global(&self, name: &str) -> Option<Global<'a>> {
        if self.current == self.node_module && self.scope.in_run() {
            if self.context == Some(name) {
                return Some(Global::Context);
            }
            if self.inputs == Some(name) {
                return Some(Global::Inputs);
            }
        }
        self.global_in(self.current, name, 0)
    }

    fn global_in(&self, module_name: &'a str, name: &str, depth: usize) -> Option<Global<'a>> {
        let parsed = self.modules.get(module_name)?;
        let module = &parsed.module;
        if let Some(&init) = module.consts.get(name) {
            if let Some(function) = Callable::of(init) {
                let name = module.consts.get_key_value(name)?.0.as_str();
                return Some(Global::Function(HelperRef {
                    module: module_name,
                    name,
                    function,
                }));
            }
            return constant(init);
        }
        for s in &module.program.body {
            let function = match s {
                Statement::FunctionDeclaration(f) => f,
                Statement::ExportDeclaration(export) => match &export.declaration {
                    Declaration::FunctionDeclaration(f) => f,
                    _ => continue,
                },
                _ => continue,
            };
            if let Some(id) = &function.id
                && id.name.as_str() == name
            {
                return Some(Global::Function(HelperRef {
                    module: module_name,
                    name: id.name.as_str(),
                    function: Callable::Function(function),
                }));
            }
        }
        let import = module.imports.get(name)?;
        let (_, target) = parsed.imports.iter().find(|(spec, _)| *spec == import.source)?;
        let (target, _) = self.modules.get_key_value(target.as_str())?;
        if depth > 8 || import.imported == "default" || import.imported == "*" {
            return None;
        }
        let imported = import.imported.clone();
        self.global_in(target, &imported, depth + 1)
    }

    /// The record type with these fields, made once per shape.
    pub fn record_type(&mut self, fields: Vec<(String, Ty)>) -> usize {
        match self.records.iter().position(|r| *r == fields) {
            Some(id) => id,
            None => {
                self.records.push(fields);
                self.records.len() - 1
            }
        }
    }

    /// The Rust function of a module function called with arguments of `args`' types:
    /// its name and return type. Translated once, on its first call.
    pub fn helper(&mut self, f: HelperRef<'a>, args: &[Ty], e: &'a Expression<'a>) -> Result<(Ident, Ty)> {
        let key = (f.module.to_string(), f.name.to_string());
        if let Some(h) = self.helpers.iter().find(|h| h.key == key) {
            if h.params != args {
                return Err(self.not(e, format!("calling `{}` with other argument types than before", f.name)));
            }
            return Ok((h.rust.clone(), h.returns.clone()));
        }
        if self.in_progress.contains(&key) {
            return Err(self.not(e, format!("the recursive function `{}`", f.name)));
        }
        let function = f.function;
        let Some(params) = plain_params(function.params()) else {
            return Err(self.not(e, format!("`{}`, whose parameters are not plain names", f.name)));
        };
        if !Scope::valid_name(f.name) {
            return Err(self.not(e, format!("a call of the function `{}`", f.name)));
        }
        if !function.is_plain() || params.len() != args.len() {
            return Err(self.not(e, format!("this call of `{}`", f.name)));
        }
        if let Some(t) = args.iter().find(|t| !matches!(t, Ty::Num | Ty::Bool | Ty::Str)) {
            return Err(self.not(e, format!("passing {} to `{}`", t.describe(), f.name)));
        }
        let Some(body) = function.body() else {
            return Err(self.not(e, format!("`{}` without a body", f.name)));
        };
        // A function sees its own module's names and its parameters, not the caller's locals.
        self.in_progress.push(key.clone());
        let saved_scope = std::mem::take(&mut self.scope);
        let saved_module = std::mem::replace(&mut self.current, f.module);
        self.scope.functions.push(Frame {
            kind: FunctionKind::Helper,
            returns: None,
        });
        self.scope.enter();
        let mut header = Vec::new();
        for (name, t) in params.iter().zip(args) {
            let rust = self.scope.declare(name, t.clone(), Holds::Value, false, None);
            let rt = t.rust();
            header.push(quote!(#rust: #rt));
        }
        let statements = match body {
            Ok(statements) => self.statements(statements),
            // `const f = (x) => expression`: what `return expression;` would be.
            Err(returned) => self.expr(returned).and_then(|value| {
                self.scope.function_mut().returns = Some(value.ty.clone());
                let own = self.owned(&value, returned)?;
                Ok(vec![quote!(return ::core::result::Result::Ok(#own);)])
            }),
        };
        let returns = self.scope.functions.last().and_then(|fr| fr.returns.clone());
        self.current = saved_module;
        self.scope = saved_scope;
        self.in_progress.pop();
        let statements = statements?;
        let returns = match returns {
            Some(t @ (Ty::Num | Ty::Bool | Ty::Str)) => t,
            Some(t) => return Err(self.not(e, format!("`{}`, which returns {}", f.name, t.describe()))),
            None => return Err(self.not(e, format!("`{}`, which returns nothing", f.name))),
        };
        let rust = format_ident!("h{}_{}", self.helpers.len(), f.name);
        let rt = returns.rust();
        self.helper_items.push(quote! {
            fn #rust(#(#header),*) -> js::Flow<#rt> {
                #(#statements)*
                js::deopt()
            }
        });
        self.helpers.push(Helper {
            key,
            rust: rust.clone(),
            params: args.to_vec(),
            returns: returns.clone(),
        });
        Ok((rust, returns))
    }

    /// `return …` of `run`: the node's `Outputs`, each data output converted to its pin.
    pub fn outputs(&mut self, e: &'a Expression<'a>) -> Result<TokenStream> {
        let fields: Vec<Field> = self
            .manifest
            .outputs
            .iter()
            .filter_map(|(id, pin)| {
                Some(Field {
                    wire: id.to_string(),
                    ty: pin.type_ref()?.clone(),
                    optional: pin.optional && pin.default.is_none(),
                    rust: svc_frontend::rust_types::ident(&svc_types::names::pin_field(id)),
                })
            })
            .collect();
        self.build(e, &fields, quote!(super::Outputs), "the outputs")
    }

    /// A Rust struct (`Outputs`, a structure: `ctor`) with `fields`, from `e`: an object
    /// literal, or an expression that makes a record.
    fn build(&mut self, e: &'a Expression<'a>, fields: &[Field], ctor: TokenStream, what: &str) -> Result<TokenStream> {
        let Expression::ObjectExpression(object) = e.get_inner_expression() else {
            let v = self.expr(e)?;
            return self.build_from_record(v, fields, ctor, what, e);
        };
        let mut given: Vec<(String, &'a Expression<'a>)> = Vec::new();
        for p in &object.properties {
            let ObjectPropertyKind::ObjectProperty(p) = p else {
                return Err(self.not(e, "a spread in an object"));
            };
            match super::expr::static_name(&p.key) {
                Some(name) if !p.method && !p.computed && !given.iter().any(|(n, _)| *n == name) => {
                    given.push((name, &p.value))
                }
                _ => return Err(self.not(&**p, "this property")),
            }
        }
        let names: Vec<&str> = given.iter().map(|(n, _)| n.as_str()).collect();
        let out = self.struct_fields(fields, &names, what, e, |this, field| {
            match given.iter().find(|(n, _)| *n == field.wire) {
                Some((_, value)) => this.convert_expr(value, &field.ty, field.optional).map(Some),
                None => Ok(None),
            }
        })?;
        Ok(quote!(#ctor { #(#out),* }))
    }

    /// A Rust struct from a record value, field by field.
    fn build_from_record(
        &mut self,
        v: Val,
        fields: &[Field],
        ctor: TokenStream,
        what: &str,
        e: &'a Expression<'a>,
    ) -> Result<TokenStream> {
        let Ty::Record(id) = v.ty else {
            return Err(self.not(e, format!("{} as {what}", v.ty.describe())));
        };
        let record = self.records[id].clone();
        let names: Vec<&str> = record.iter().map(|(n, _)| n.as_str()).collect();
        let root = v.root.clone();
        let inner = self.struct_fields(fields, &names, what, e, |this, field| {
            let Some((name, ty)) = record.iter().find(|(n, _)| *n == field.wire) else {
                return Ok(None);
            };
            let rf = format_ident!("f_{}", name);
            let val = Val::place(ty.clone(), quote!(r.#rf), root.clone());
            this.convert_val(val, &field.ty, field.optional, e).map(Some)
        })?;
        let code = &v.code;
        Ok(quote!({ let r = &#code; #ctor { #(#inner),* } }))
    }

    /// `field: value` for each of `fields`, from what `given` names: `value_of` gives a
    /// field's value, `None` when it is not given. A name that is not a field, or a
    /// required field not given, is not compiled (the engine answers both with its
    /// `node_output_invalid`).
    fn struct_fields(
        &mut self,
        fields: &[Field],
        given: &[&str],
        what: &str,
        e: &'a Expression<'a>,
        mut value_of: impl FnMut(&mut Self, &Field) -> Result<Option<TokenStream>>,
    ) -> Result<Vec<TokenStream>> {
        if let Some(name) = given.iter().find(|n| !fields.iter().any(|f| f.wire == **n)) {
            return Err(self.not(e, format!("`{name}`, which {what} do not have")));
        }
        let mut out = Vec::new();
        for field in fields {
            let f = &field.rust;
            match value_of(self, field)? {
                Some(v) => out.push(quote!(#f: #v)),
                None if field.optional => out.push(quote!(#f: ::core::option::Option::None)),
                None => return Err(self.not(e, format!("{what} without `{}`", field.wire))),
            }
        }
        Ok(out)
    }

    /// `e` as a value of the pin or field type `t`.
    fn convert_expr(&mut self, e: &'a Expression<'a>, t: &TypeRef, optional: bool) -> Result<TokenStream> {
        if let (Expression::ObjectExpression(_), TypeRef::Structure(name)) = (e.get_inner_expression(), t) {
            let fields = self.structure_fields(name, e)?;
            let ident = format_ident!("{}", name);
            let value = self.build(e, &fields, quote!(crate::assets::#ident), &format!("`{name}`"))?;
            return Ok(match optional {
                true => quote!(::core::option::Option::Some(#value)),
                false => value,
            });
        }
        let v = self.expr(e)?;
        self.convert_val(v, t, optional, e)
    }

    fn structure_fields(&self, name: &str, e: &'a Expression<'a>) -> Result<Vec<Field>> {
        let Some(s) = self.assets.structure_named(name) else {
            return Err(self.not(e, format!("the structure `{name}`")));
        };
        if self.recursive(name, name, &mut Vec::new()) {
            return Err(self.not(e, format!("the recursive structure `{name}`")));
        }
        s.fields
            .iter()
            .map(|f| match f.type_ref() {
                Some(t) if Ty::from_type_ref(&t).is_some() => Ok(Field {
                    wire: f.name.clone(),
                    ty: t,
                    optional: !f.required,
                    rust: svc_frontend::rust_types::ident(&f.rust_name()),
                }),
                _ => Err(self.not(
                    e,
                    format!("`{name}`, whose field `{}` is of type `any` or `object`", f.name),
                )),
            })
            .collect()
    }

    /// Whether `name` reaches `target` through its fields (the Rust struct boxes them).
    fn recursive(&self, name: &str, target: &str, seen: &mut Vec<String>) -> bool {
        let Some(s) = self.assets.structure_named(name) else {
            return false;
        };
        s.fields.iter().filter_map(|f| f.type_ref()).any(|t| {
            let mut t = &t;
            while let TypeRef::Array(inner) = t {
                t = inner;
            }
            match t {
                TypeRef::Structure(n) if n == target => true,
                TypeRef::Structure(n) if !seen.contains(n) => {
                    seen.push(n.clone());
                    self.recursive(n, target, seen)
                }
                _ => false,
            }
        })
    }

    /// A translated value as a value of the pin or field type `t` (`Option<t>` when
    /// `optional`). Numbers are checked finite and strings made enum values on the way:
    /// when they are not, the engine answers.
    pub fn convert_val(&mut self, v: Val, t: &TypeRef, optional: bool, e: &'a Expression<'a>) -> Result<TokenStream> {
        let code = v.code.clone();
        if optional {
            return Ok(match &v.ty {
                Ty::Undefined | Ty::Null => quote!(::core::option::Option::None),
                Ty::Opt(inner, _) => {
                    let x = Val::place((**inner).clone(), quote!((*x)), v.root.clone());
                    let c = self.convert_val(x, t, false, e)?;
                    quote!(match &#code { ::core::option::Option::Some(x) => ::core::option::Option::Some(#c), ::core::option::Option::None => ::core::option::Option::None })
                }
                _ => {
                    let c = self.convert_val(v, t, false, e)?;
                    quote!(::core::option::Option::Some(#c))
                }
            });
        }
        if let Ty::Opt(inner, _) = &v.ty {
            let x = Val::place((**inner).clone(), quote!((*x)), v.root.clone());
            let c = self.convert_val(x, t, false, e)?;
            return Ok(
                quote!(match &#code { ::core::option::Option::Some(x) => #c, ::core::option::Option::None => return js::deopt() }),
            );
        }
        Ok(match (t, &v.ty) {
            (TypeRef::Number, Ty::Num) => quote!(js::finite(#code)?),
            (TypeRef::Boolean, Ty::Bool) => code,
            (TypeRef::String, Ty::Str) => self.owned(&v, e)?,
            (TypeRef::String, Ty::Enum(_)) => quote!(::std::string::String::from((#code).value())),
            (TypeRef::Enum(a), Ty::Enum(b)) if a == b => code,
            (TypeRef::Enum(a), x) if x.is_text() => {
                let s = v.as_str();
                let ident = format_ident!("{}", a);
                quote!(js::enum_value(#s, crate::assets::#ident::from_value)?)
            }
            (TypeRef::Structure(a), Ty::Struct(b)) if a == b => self.owned(&v, e)?,
            (TypeRef::Structure(name), Ty::Record(_)) => {
                let fields = self.structure_fields(name, e)?;
                let ident = format_ident!("{}", name);
                self.build_from_record(v, &fields, quote!(crate::assets::#ident), &format!("`{name}`"), e)?
            }
            (TypeRef::Array(t_inner), Ty::Array(v_inner)) => {
                let x = Val::place((**v_inner).clone(), quote!((*x)), v.root.clone());
                let c = self.convert_val(x, t_inner, false, e)?;
                let rt = Ty::from_type_ref(t_inner)
                    .ok_or_else(|| self.not(e, "an array of `any` or `object`"))?
                    .rust();
                quote!((#code).iter().map(|x| -> js::Flow<#rt> { ::core::result::Result::Ok(#c) }).collect::<js::Flow<::std::vec::Vec<#rt>>>()?)
            }
            (t, ty) => return Err(self.not(e, format!("{} where `{}` is expected", ty.describe(), t))),
        })
    }
}

/// What a module-level `const` stands for, when the translation can use it.
fn constant<'a>(init: &'a Expression<'a>) -> Option<Global<'a>> {
    if let Some(v) = literal(init) {
        return Some(Global::Value(v));
    }
    let Expression::ObjectExpression(object) = init.get_inner_expression() else {
        return None;
    };
    let mut entries = Vec::new();
    for p in &object.properties {
        let ObjectPropertyKind::ObjectProperty(p) = p else {
            return None;
        };
        if p.computed || p.method {
            return None;
        }
        let key = super::expr::static_name(&p.key)?;
        entries.push((key, literal(&p.value)?));
    }
    let first = entries.first()?.1.clone();
    if entries.iter().any(|(_, v)| v.ty != first.ty)
        || entries
            .iter()
            .enumerate()
            .any(|(i, (k, _))| entries[..i].iter().any(|(k2, _)| k2 == k))
    {
        return None;
    }
    Some(Global::Table(Table {
        entries,
        ty: first.ty,
        kind: first.kind,
    }))
}

/// A literal number (possibly negated), string or boolean.
fn literal(e: &Expression) -> Option<Val> {
    match e.get_inner_expression() {
        Expression::NumericLiteral(n) => Some(super::expr::num_literal(n.value)),
        Expression::UnaryExpression(u) if u.operator == UnaryOperator::UnaryNegation => {
            match u.argument.get_inner_expression() {
                Expression::NumericLiteral(n) => Some(super::expr::num_literal(-n.value)),
                _ => None,
            }
        }
        Expression::StringLiteral(s) => Some(super::expr::str_literal(s.value.as_str())),
        Expression::BooleanLiteral(b) => {
            let v = b.value;
            Some(Val::owned(Ty::Bool, quote!(#v)))
        }
        _ => None,
    }
}

/// Whether a declaration is `const`s of literal data (what `literal` and `constant`
/// read, or arrays and objects of them).
fn literal_consts(d: &oxc_ast::ast::VariableDeclaration) -> bool {
    fn data(e: &Expression) -> bool {
        match e.get_inner_expression() {
            Expression::ObjectExpression(o) => o.properties.iter().all(|p| match p {
                ObjectPropertyKind::ObjectProperty(p) => !p.computed && !p.method && data(&p.value),
                _ => false,
            }),
            Expression::ArrayExpression(a) => a.elements.iter().all(|el| match el.as_expression() {
                Some(e) => data(e),
                None => false,
            }),
            Expression::NullLiteral(_) => true,
            Expression::Identifier(id) => id.name == "undefined",
            e => literal(e).is_some(),
        }
    }
    // Functions too (`const round2 = (n) => …`): defining one does nothing else.
    d.kind == oxc_ast::ast::VariableDeclarationKind::Const
        && d.declarations
            .iter()
            .all(|decl| decl.init.as_ref().is_some_and(|e| data(e) || Callable::of(e).is_some()))
}
