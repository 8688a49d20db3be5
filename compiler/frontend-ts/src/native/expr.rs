//! Expressions: each into a [`Val`] (its type and its Rust), or [`NotNative`].

use super::program::{Global, Translator};
use super::scope::{FunctionKind, Holds};
use super::types::{Absent, Kind, Ty, Val};
use super::{NotNative, Result};
use oxc_ast::ast::{
    Argument, ArrowFunctionExpression, BinaryOperator, CallExpression, Expression, LogicalOperator, ObjectPropertyKind,
    PropertyKey, UnaryOperator,
};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

impl<'a> Translator<'a> {
    pub fn expr(&mut self, e: &'a Expression<'a>) -> Result<Val> {
        let e = e.get_inner_expression();
        match e {
            Expression::NumericLiteral(n) => Ok(num_literal(n.value)),
            Expression::StringLiteral(s) => Ok(str_literal(s.value.as_str())),
            Expression::BooleanLiteral(b) => {
                let v = b.value;
                Ok(Val::owned(Ty::Bool, quote!(#v)))
            }
            Expression::NullLiteral(_) => Ok(Val::owned(Ty::Null, quote!(()))),
            Expression::Identifier(id) => self.identifier(id.name.as_str(), e),
            Expression::TemplateLiteral(t) => {
                let mut parts = Vec::new();
                for (i, quasi) in t.quasis.iter().enumerate() {
                    let Some(cooked) = &quasi.value.cooked else {
                        return Err(self.not(e, "a template with an invalid escape"));
                    };
                    if !cooked.is_empty() {
                        let text = cooked.as_str();
                        parts.push(quote!(s.push_str(#text);));
                    }
                    if let Some(part) = t.expressions.get(i) {
                        let v = self.expr(part)?;
                        parts.push(self.push_string(&v, part)?);
                    }
                }
                Ok(Val::owned(Ty::Str, build_string(&parts)))
            }
            Expression::StaticMemberExpression(m) => {
                if m.optional {
                    return Err(self.not(e, "optional chaining (`?.`)"));
                }
                self.static_member(&m.object, m.property.name.as_str(), e)
            }
            Expression::ComputedMemberExpression(m) => {
                if m.optional {
                    return Err(self.not(e, "optional chaining (`?.`)"));
                }
                let Some(table) = self.table(&m.object) else {
                    return Err(self.not(e, "indexing anything but a constant object of this module"));
                };
                let key = self.expr(&m.expression)?;
                if !key.ty.is_text() {
                    return Err(self.not(&m.expression, "a key that is not a string"));
                }
                let key = key.as_str();
                let arms = table.entries.iter().map(|(k, v)| {
                    let code = &v.code;
                    quote!(#k => #code,)
                });
                // A key the table lacks is `undefined`, or one of `Object.prototype`'s
                // members: the engine decides what comes of it.
                Ok(Val {
                    ty: table.ty.clone(),
                    code: quote!(match #key { #(#arms)* _ => return js::deopt() }),
                    kind: table.kind,
                    path: None,
                    root: None,
                })
            }
            Expression::BinaryExpression(b) => self.binary(b.operator, &b.left, &b.right, e),
            Expression::LogicalExpression(l) => self.logical(l.operator, &l.left, &l.right, e),
            Expression::UnaryExpression(u) => {
                let v = self.expr(&u.argument)?;
                match u.operator {
                    UnaryOperator::LogicalNot => {
                        let c = self.truthy(&v, &u.argument)?;
                        Ok(Val::owned(Ty::Bool, quote!((!#c))))
                    }
                    UnaryOperator::UnaryNegation if v.ty == Ty::Num => {
                        let c = &v.code;
                        Ok(Val::owned(Ty::Num, quote!((-#c))))
                    }
                    UnaryOperator::UnaryPlus if v.ty == Ty::Num => Ok(Val::owned(Ty::Num, v.code)),
                    _ => Err(self.not(e, format!("`{}` of {}", u.operator.as_str(), v.ty.describe()))),
                }
            }
            Expression::ConditionalExpression(c) => {
                let test = self.expr(&c.test)?;
                let test = self.truthy(&test, &c.test)?;
                let (yes, no) = (self.expr(&c.consequent)?, self.expr(&c.alternate)?);
                if yes.ty != no.ty {
                    return Err(self.not(
                        e,
                        format!("a conditional of {} and {}", yes.ty.describe(), no.ty.describe()),
                    ));
                }
                if yes.kind == Kind::Static && no.kind == Kind::Static {
                    let (a, b) = (&yes.code, &no.code);
                    return Ok(Val {
                        kind: Kind::Static,
                        ..Val::owned(Ty::Str, quote!((if #test { #a } else { #b })))
                    });
                }
                let (a, b) = (self.owned(&yes, &c.consequent)?, self.owned(&no, &c.alternate)?);
                Ok(Val::owned(yes.ty, quote!((if #test { #a } else { #b }))))
            }
            Expression::CallExpression(call) => self.call(call, e),
            Expression::ObjectExpression(_) => self.record(e),
            other => Err(self.not(e, expression_kind(other))),
        }
    }

    /// The lookup table `e` names: a module `const` object of literals, not shadowed.
    fn table(&self, e: &'a Expression<'a>) -> Option<super::program::Table> {
        match e.get_inner_expression() {
            Expression::Identifier(id) if self.scope.lookup(id.name.as_str()).is_none() => {
                match self.global(id.name.as_str()) {
                    Some(Global::Table(table)) => Some(table),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn identifier(&mut self, name: &str, e: &'a Expression<'a>) -> Result<Val> {
        if let Some(local) = self.scope.lookup(name) {
            let value = local.read();
            return Ok(self.narrowed(value));
        }
        match self.global(name) {
            Some(Global::Value(v)) => Ok(v),
            Some(Global::Table(_)) => Err(self.not(e, format!("the object `{name}` as a value (index it)"))),
            Some(Global::Function(_)) => Err(self.not(e, format!("the function `{name}` as a value (call it)"))),
            Some(Global::Context) => Err(self.not(e, format!("`{name}` as a value (use `{name}.inputs.…`)"))),
            Some(Global::Inputs) => Ok(self.inputs_value()),
            None if name == "undefined" => Ok(Val::owned(Ty::Undefined, quote!(()))),
            None => Err(self.not(e, format!("`{name}`"))),
        }
    }

    /// `object.name`: `ctx.inputs`, a pin, a field, a constant of a table, a length.
    fn static_member(&mut self, object: &'a Expression<'a>, name: &str, e: &'a Expression<'a>) -> Result<Val> {
        if let Expression::Identifier(id) = object.get_inner_expression()
            && self.scope.lookup(id.name.as_str()).is_none()
        {
            match self.global(id.name.as_str()) {
                Some(Global::Context) if name == "inputs" => return Ok(self.inputs_value()),
                Some(Global::Context) => return Err(self.not(e, format!("`ctx.{name}`"))),
                Some(Global::Table(table)) => {
                    return match table.entries.iter().find(|(k, _)| k == name) {
                        Some((_, v)) => Ok(v.clone()),
                        None => Err(self.not(e, format!("`{name}`, which the object does not have"))),
                    };
                }
                _ => {}
            }
        }
        let object = self.expr(object)?;
        self.member_of(object, name, e)
    }

    /// `object.name` of a translated `object`.
    pub fn member_of(&mut self, object: Val, name: &str, e: &impl oxc_span::GetSpan) -> Result<Val> {
        let path = object.path.as_ref().map(|p| format!("{p}.{name}"));
        let code = &object.code;
        let (ty, field) = match &object.ty {
            Ty::Inputs => {
                let Some(pin) = self.manifest.inputs.get(name) else {
                    return Err(self.not(e, format!("`ctx.inputs.{name}`, which is not an input pin")));
                };
                let Some(t) = pin.type_ref().and_then(Ty::from_type_ref) else {
                    return Err(self.not(e, format!("the input `{name}` of type `any` or `object`")));
                };
                let t = match pin.optional && pin.default.is_none() {
                    true => Ty::Opt(Box::new(t), Absent::Null),
                    false => t,
                };
                (t, svc_frontend::rust_types::ident(&svc_types::names::pin_field(name)))
            }
            Ty::Struct(s) => {
                let Some(f) = self.assets.structure_named(s).and_then(|d| d.find_field(name)) else {
                    return Err(self.not(e, format!("`{name}`, which is not a field of `{s}`")));
                };
                let Some(t) = f.type_ref().as_ref().and_then(Ty::from_type_ref) else {
                    return Err(self.not(e, format!("the field `{name}` of type `any` or `object`")));
                };
                let t = match f.required {
                    true => t,
                    false => Ty::Opt(Box::new(t), Absent::Undefined),
                };
                (t, svc_frontend::rust_types::ident(&f.rust_name()))
            }
            Ty::Record(id) => {
                let Some((_, t)) = self.records[*id].iter().find(|(n, _)| n == name) else {
                    return Err(self.not(e, format!("`{name}`, which the object does not have")));
                };
                (t.clone(), format_ident!("f_{}", name))
            }
            Ty::Array(_) if name == "length" => {
                return Ok(Val::owned(Ty::Num, quote!(((#code).len() as f64))));
            }
            t if t.is_text() && name == "length" => {
                let s = object.as_str();
                return Ok(Val::owned(Ty::Num, quote!(js::length(#s))));
            }
            t => return Err(self.not(e, format!("`.{name}` of {}", t.describe()))),
        };
        let kind = match object.kind {
            Kind::Owned => Kind::Owned,
            _ => Kind::Place,
        };
        let code = match is_chain(code) {
            true => quote!(#code.#field),
            false => quote!((#code).#field),
        };
        let root = object.root.clone();
        let val = Val {
            ty,
            code,
            kind,
            path,
            root,
        };
        Ok(self.narrowed(val))
    }

    /// An optional that a check proved present, read as what it holds.
    fn narrowed(&self, mut val: Val) -> Val {
        if let (Ty::Opt(inner, _), Some(p)) = (&val.ty, &val.path)
            && self.scope.is_narrowed(p)
            && val.kind == Kind::Place
        {
            let code = &val.code;
            val.ty = (**inner).clone();
            val.code = quote!((*match &#code { ::core::option::Option::Some(v) => v, ::core::option::Option::None => return js::deopt() }));
        }
        val
    }

    fn binary(
        &mut self,
        op: BinaryOperator,
        left: &'a Expression<'a>,
        right: &'a Expression<'a>,
        e: &'a Expression<'a>,
    ) -> Result<Val> {
        if op == BinaryOperator::In {
            let key = self.expr(left)?;
            let Some(table) = self.table(right) else {
                return Err(self.not(e, "`in` of anything but a constant object of this module"));
            };
            if !key.ty.is_text() {
                return Err(self.not(left, "a key that is not a string"));
            }
            let keys = table.entries.iter().map(|(k, _)| k);
            let key = key.as_str();
            return Ok(Val::owned(Ty::Bool, quote!(js::has_key(&[#(#keys),*], #key))));
        }
        let (l, r) = (self.expr(left)?, self.expr(right)?);
        let (a, b) = (&l.code, &r.code);
        use BinaryOperator as B;
        let num = |code: TokenStream| Ok(Val::owned(Ty::Num, code));
        let boolean = |code: TokenStream| Ok(Val::owned(Ty::Bool, code));
        if let (Some(o), Ty::Num, Ty::Num) = (arithmetic(op), &l.ty, &r.ty) {
            return num(quote!((#a #o #b)));
        }
        match (op, &l.ty, &r.ty) {
            (B::Addition, x, y) if x.is_text() || y.is_text() => {
                let parts = [self.push_string(&l, left)?, self.push_string(&r, right)?];
                Ok(Val::owned(Ty::Str, build_string(&parts)))
            }
            (B::LessThan | B::LessEqualThan | B::GreaterThan | B::GreaterEqualThan, Ty::Num, Ty::Num) => {
                let o = compare_op(op);
                boolean(quote!((#a #o #b)))
            }
            (B::LessThan | B::LessEqualThan | B::GreaterThan | B::GreaterEqualThan, x, y)
                if x.is_text() && y.is_text() =>
            {
                let o = compare_op(op);
                let (sa, sb) = (l.as_str(), r.as_str());
                boolean(quote!((js::compare(#sa, #sb) #o ::core::cmp::Ordering::Equal)))
            }
            (B::StrictEquality | B::StrictInequality | B::Equality | B::Inequality, _, _) => {
                let negate = matches!(op, B::StrictInequality | B::Inequality);
                let loose = matches!(op, B::Equality | B::Inequality);
                let eq = self.equality(&l, &r, loose, e)?;
                boolean(if negate { quote!((!#eq)) } else { eq })
            }
            (op, x, y) => Err(self.not(e, format!("`{}` of {} and {}", op.as_str(), x.describe(), y.describe()))),
        }
    }

    /// `l === r` (or `==` when `loose`, only against `null`/`undefined`), as a `bool`.
    fn equality(&mut self, l: &Val, r: &Val, loose: bool, e: &'a Expression<'a>) -> Result<TokenStream> {
        let (a, b) = (&l.code, &r.code);
        let nothing = |t: &Ty| matches!(t, Ty::Undefined | Ty::Null);
        Ok(match (&l.ty, &r.ty) {
            (Ty::Opt(_, absent), n) | (n, Ty::Opt(_, absent)) if nothing(n) => {
                let opt = if nothing(&l.ty) { b } else { a };
                let is_none = quote!((#opt).is_none());
                match (loose, absent, n) {
                    (true, _, _) => is_none,
                    (false, Absent::Undefined, Ty::Undefined) | (false, Absent::Null, Ty::Null) => is_none,
                    // `undefined === null` is false: an absent field is never `null`.
                    (false, _, _) => quote!(false),
                }
            }
            (x, y) if nothing(x) && nothing(y) => {
                let same = loose || x == y;
                quote!(#same)
            }
            _ if loose => return Err(self.not(e, "`==` or `!=` but against `null` or `undefined` (use `===`)")),
            (Ty::Num, Ty::Num) | (Ty::Bool, Ty::Bool) => quote!((#a == #b)),
            (Ty::Enum(x), Ty::Enum(y)) if x == y => quote!((#a == #b)),
            (x, y) if x.is_text() && y.is_text() => {
                let (sa, sb) = (l.as_str(), r.as_str());
                quote!((#sa == #sb))
            }
            // Values of different types are never strictly equal.
            (x, y) if is_primitive(x) && is_primitive(y) => quote!(false),
            (x, y) => {
                return Err(self.not(e, format!("comparing {} with {}", x.describe(), y.describe())));
            }
        })
    }

    fn logical(
        &mut self,
        op: LogicalOperator,
        left: &'a Expression<'a>,
        right: &'a Expression<'a>,
        e: &'a Expression<'a>,
    ) -> Result<Val> {
        let l = self.expr(left)?;
        if op == LogicalOperator::Coalesce {
            let Ty::Opt(inner, _) = &l.ty else {
                return Err(self.not(e, format!("`??` of {}", l.ty.describe())));
            };
            let inner = (**inner).clone();
            let r = self.expr(right)?;
            let code = &l.code;
            // An enum value or a string: a string.
            if inner != r.ty && inner.is_text() && r.ty.is_text() {
                let value = Val::place(inner, quote!((*v)), l.root.clone());
                let (some, fallback) = (self.string_of(&value, e)?, self.string_of(&r, right)?);
                return Ok(Val::owned(
                    Ty::Str,
                    quote!((match &#code { ::core::option::Option::Some(v) => #some, ::core::option::Option::None => #fallback })),
                ));
            }
            if r.ty != inner {
                return Err(self.not(e, format!("`??` of {} and {}", l.ty.describe(), r.ty.describe())));
            }
            let fallback = self.owned(&r, right)?;
            self.check_copy(&l, left)?;
            let some = match inner.is_copy() {
                true => quote!(*v),
                false => quote!(v.clone()),
            };
            return Ok(Val::owned(
                inner,
                quote!((match &#code { ::core::option::Option::Some(v) => #some, ::core::option::Option::None => #fallback })),
            ));
        }
        if l.ty != Ty::Bool {
            return Err(self.not(
                e,
                format!("`{}` of {} (write a comparison)", op.as_str(), l.ty.describe()),
            ));
        }
        // The right side runs only when the left did not decide: with `&&`, what the left
        // proved present stays present there.
        self.scope.enter();
        if op == LogicalOperator::And {
            for path in self.facts(left, true) {
                self.scope.narrow(path);
            }
        } else {
            for path in self.facts(left, false) {
                self.scope.narrow(path);
            }
        }
        let r = self.expr(right);
        self.scope.leave();
        let r = r?;
        if r.ty != Ty::Bool {
            return Err(self.not(
                e,
                format!("`{}` of {} (write a comparison)", op.as_str(), r.ty.describe()),
            ));
        }
        let (a, b) = (&l.code, &r.code);
        Ok(Val::owned(
            Ty::Bool,
            match op {
                LogicalOperator::And => quote!((#a && #b)),
                _ => quote!((#a || #b)),
            },
        ))
    }

    /// The optional paths that are present when `e` is truthy (`when` true) or falsy.
    pub fn facts(&mut self, e: &'a Expression<'a>, when: bool) -> Vec<String> {
        let e = e.get_inner_expression();
        match e {
            Expression::LogicalExpression(l) if l.operator == LogicalOperator::And && when => {
                let mut out = self.facts(&l.left, true);
                out.extend(self.facts(&l.right, true));
                out
            }
            Expression::LogicalExpression(l) if l.operator == LogicalOperator::Or && !when => {
                let mut out = self.facts(&l.left, false);
                out.extend(self.facts(&l.right, false));
                out
            }
            Expression::UnaryExpression(u) if u.operator == UnaryOperator::LogicalNot => self.facts(&u.argument, !when),
            Expression::BinaryExpression(b) => {
                use BinaryOperator as B;
                let present_when = match b.operator {
                    B::StrictInequality | B::Inequality => true,
                    B::StrictEquality | B::Equality => false,
                    _ => return Vec::new(),
                };
                if present_when != when {
                    return Vec::new();
                }
                let loose = matches!(b.operator, B::Equality | B::Inequality);
                // Translated only for their types and paths: the Rust is dropped.
                let (Ok(l), Ok(r)) = (self.expr(&b.left), self.expr(&b.right)) else {
                    return Vec::new();
                };
                let (opt, other) = match (&l.ty, &r.ty) {
                    (Ty::Opt(_, absent), n) => ((l.path.clone(), *absent), n.clone()),
                    (n, Ty::Opt(_, absent)) => ((r.path.clone(), *absent), n.clone()),
                    _ => return Vec::new(),
                };
                let proves = loose
                    || matches!(
                        (opt.1, &other),
                        (Absent::Undefined, Ty::Undefined) | (Absent::Null, Ty::Null)
                    );
                match (proves, opt.0) {
                    (true, Some(path)) => vec![path],
                    _ => Vec::new(),
                }
            }
            _ if when => match self.expr(e) {
                Ok(Val {
                    ty: Ty::Opt(..),
                    path: Some(path),
                    ..
                }) => vec![path],
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// JavaScript's truthiness of `v`, as a `bool`.
    pub fn truthy(&mut self, v: &Val, e: &'a Expression<'a>) -> Result<TokenStream> {
        let code = &v.code;
        Ok(match &v.ty {
            Ty::Bool => code.clone(),
            Ty::Num => quote!(js::truthy(#code)),
            t if t.is_text() => {
                let s = v.as_str();
                quote!((!#s.is_empty()))
            }
            Ty::Opt(inner, _) if matches!(**inner, Ty::Struct(_) | Ty::Array(_) | Ty::Record(_)) => {
                quote!((#code).is_some())
            }
            // `if (order.couponCode)`: present, and not the empty string (or 0, NaN, false).
            Ty::Opt(inner, _) => {
                let value = Val::place((**inner).clone(), quote!((*v)), v.root.clone());
                let present = self.truthy(&value, e)?;
                quote!((match &#code { ::core::option::Option::Some(v) => #present, ::core::option::Option::None => false }))
            }
            Ty::Undefined | Ty::Null => quote!(false),
            t => return Err(self.not(e, format!("the truthiness of {} (write a comparison)", t.describe()))),
        })
    }

    /// `String(v)`, as an owned `String`.
    pub fn string_of(&mut self, v: &Val, e: &'a Expression<'a>) -> Result<TokenStream> {
        if v.ty == Ty::Str {
            return self.owned(v, e);
        }
        let push = self.push_string(v, e)?;
        Ok(build_string(&[push]))
    }

    /// A statement pushing `String(v)` onto `s`.
    pub fn push_string(&mut self, v: &Val, e: &'a Expression<'a>) -> Result<TokenStream> {
        let code = &v.code;
        Ok(match &v.ty {
            Ty::Num => quote!(js::push_number(&mut s, #code);),
            Ty::Bool => quote!(s.push_str(if #code { "true" } else { "false" });),
            t if t.is_text() => {
                self.check_copy(v, e)?;
                let text = v.as_str();
                quote!(s.push_str(#text);)
            }
            Ty::Undefined => quote!(s.push_str("undefined");),
            Ty::Null => quote!(s.push_str("null");),
            Ty::Opt(inner, absent) if inner.is_text() || **inner == Ty::Num || **inner == Ty::Bool => {
                let inner_val = Val::place((**inner).clone(), quote!((*v)), v.root.clone());
                let some = self.push_string(&inner_val, e)?;
                let none = match absent {
                    Absent::Undefined => "undefined",
                    Absent::Null => "null",
                };
                quote!(match &#code { ::core::option::Option::Some(v) => { #some } ::core::option::Option::None => s.push_str(#none), })
            }
            t => return Err(self.not(e, format!("{} in a string", t.describe()))),
        })
    }

    fn call(&mut self, call: &'a CallExpression<'a>, e: &'a Expression<'a>) -> Result<Val> {
        if call.optional {
            return Err(self.not(e, "optional chaining (`?.`)"));
        }
        let args = self.arguments(call, e)?;
        match call.callee.get_inner_expression() {
            Expression::Identifier(id) if self.scope.lookup(id.name.as_str()).is_none() => {
                let name = id.name.as_str();
                match self.global(name) {
                    Some(Global::Function(f)) => self.call_helper(f, &args, e),
                    None if name == "String" && args.len() == 1 => {
                        let v = self.expr(args[0])?;
                        let code = self.string_of(&v, args[0])?;
                        Ok(Val::owned(Ty::Str, code))
                    }
                    _ => Err(self.not(e, format!("a call of `{name}`"))),
                }
            }
            Expression::StaticMemberExpression(m) => {
                let method = m.property.name.as_str();
                if let Expression::Identifier(id) = m.object.get_inner_expression()
                    && self.scope.lookup(id.name.as_str()).is_none()
                {
                    match self.global(id.name.as_str()) {
                        None => return self.builtin(id.name.as_str(), method, &args, e),
                        Some(Global::Context) => {
                            return Err(self.not(e, format!("`ctx.{method}(…)` in an expression")));
                        }
                        _ => {}
                    }
                }
                let object = self.expr(&m.object)?;
                self.method(object, method, &args, e)
            }
            _ => Err(self.not(e, "this kind of call")),
        }
    }

    /// A call's arguments, none of them spread.
    pub fn arguments(&self, call: &'a CallExpression<'a>, e: &'a Expression<'a>) -> Result<Vec<&'a Expression<'a>>> {
        call.arguments
            .iter()
            .map(|a| match a {
                Argument::SpreadElement(_) => Err(self.not(e, "a spread argument")),
                a => Ok(a.to_expression()),
            })
            .collect()
    }

    /// `Math.round(x)` and the other functions of JavaScript's globals the subset knows.
    fn builtin(&mut self, object: &str, name: &str, args: &[&'a Expression<'a>], e: &'a Expression<'a>) -> Result<Val> {
        let mut nums = Vec::new();
        for a in args {
            let v = self.expr(a)?;
            if v.ty != Ty::Num {
                return Err(self.not(*a, format!("`{object}.{name}` of {}", v.ty.describe())));
            }
            nums.push(v.code);
        }
        let one = |f: TokenStream| -> Option<TokenStream> {
            match nums.as_slice() {
                [x] => Some(quote!(#f(#x))),
                _ => None,
            }
        };
        let (ty, code) = match (object, name) {
            ("Math", "round") => (Ty::Num, one(quote!(js::round))),
            ("Math", "floor") => (Ty::Num, one(quote!(f64::floor))),
            ("Math", "ceil") => (Ty::Num, one(quote!(f64::ceil))),
            ("Math", "trunc") => (Ty::Num, one(quote!(f64::trunc))),
            ("Math", "abs") => (Ty::Num, one(quote!(f64::abs))),
            ("Math", "sqrt") => (Ty::Num, one(quote!(f64::sqrt))),
            ("Math", "sign") => (Ty::Num, one(quote!(js::sign))),
            ("Math", "min" | "max") if !nums.is_empty() => {
                let f = format_ident!("{}", name);
                let first = &nums[0];
                let rest = &nums[1..];
                (
                    Ty::Num,
                    Some(quote!({ let m = #first; #( let m = js::#f(m, #rest); )* m })),
                )
            }
            ("Number", "isInteger") => (Ty::Bool, one(quote!(js::is_integer))),
            ("Number", "isFinite") => (Ty::Bool, one(quote!(f64::is_finite))),
            ("Number", "isNaN") => (Ty::Bool, one(quote!(f64::is_nan))),
            _ => (Ty::Num, None),
        };
        match code {
            Some(code) => Ok(Val::owned(ty, code)),
            None => Err(self.not(e, format!("`{object}.{name}` with {}", count_arguments(args.len())))),
        }
    }

    /// `value.method(args)`: strings' case and trimming, arrays' iteration.
    fn method(&mut self, object: Val, method: &str, args: &[&'a Expression<'a>], e: &'a Expression<'a>) -> Result<Val> {
        if object.ty.is_text() {
            return self.string_method(object, method, args, e);
        }
        if object.ty == Ty::Num {
            return match (method, args) {
                ("toFixed", [] | [_]) => {
                    let digits = match args.first() {
                        Some(a) => self.num_arg(a, method)?,
                        None => quote!(0.0),
                    };
                    let x = &object.code;
                    Ok(Val::owned(Ty::Str, quote!(js::to_fixed(#x, #digits)?)))
                }
                _ => Err(self.not(e, format!("`.{method}(…)` of a number"))),
            };
        }
        let Ty::Array(element) = &object.ty else {
            return Err(self.not(e, format!("`.{method}(…)` of {}", object.ty.describe())));
        };
        let element = (**element).clone();
        match (method, args) {
            ("join", [] | [_]) => {
                let separator = match args.first() {
                    Some(a) => self.str_arg(a, method)?,
                    None => quote!(","),
                };
                let array = &object.code;
                let code = match element {
                    Ty::Str => quote!(js::join(&#array, #separator)),
                    Ty::Num => quote!(js::join_numbers(&#array, #separator)),
                    _ => return Err(self.not(e, format!("`join` of {}", object.ty.describe()))),
                };
                return Ok(Val::owned(Ty::Str, code));
            }
            ("includes", [a]) => {
                let array = &object.code;
                let code = match element {
                    Ty::Str => {
                        let wanted = self.str_arg(a, method)?;
                        quote!((#array).iter().any(|x| x.as_str() == #wanted))
                    }
                    Ty::Num => {
                        let wanted = self.num_arg(a, method)?;
                        quote!(js::includes_number(&#array, #wanted))
                    }
                    _ => return Err(self.not(e, format!("`includes` of {}", object.ty.describe()))),
                };
                return Ok(Val::owned(Ty::Bool, code));
            }
            _ => {}
        }
        self.check_linear(&object, e)?;
        let array = &object.code;
        let callback = |this: &Self| -> Result<&'a ArrowFunctionExpression<'a>> {
            match args.first().map(|a| a.get_inner_expression()) {
                Some(Expression::ArrowFunctionExpression(f)) if !f.r#async => Ok(f),
                _ => Err(this.not(e, format!("`.{method}` with anything but an arrow function"))),
            }
        };
        match (method, args.len()) {
            ("map", 1) => {
                // `map((x) => …)`, or `map((x, i) => …)` with the index.
                let arrow = callback(self)?;
                let indexed = super::program::plain_params(&arrow.params).is_some_and(|p| p.len() == 2);
                let params = match indexed {
                    true => vec![element.clone(), Ty::Num],
                    false => vec![element.clone()],
                };
                let (f, returns) = self.callback(arrow, &params, None, e)?;
                let t = returns.rust();
                let each = match indexed {
                    true => quote!((#array).iter().enumerate().map(|(i, x)| f(x, &(i as f64)))),
                    false => quote!((#array).iter().map(|x| f(x))),
                };
                Ok(Val::owned(
                    Ty::Array(Box::new(returns)),
                    quote!({ let mut f = #f; #each.collect::<js::Flow<::std::vec::Vec<#t>>>()? }),
                ))
            }
            ("filter" | "some" | "every", 1) => {
                let (f, returns) = self.callback(callback(self)?, std::slice::from_ref(&element), None, e)?;
                if returns != Ty::Bool {
                    return Err(self.not(e, format!("a `{method}` callback that returns {}", returns.describe())));
                }
                let code = match method {
                    "filter" => quote!({
                        let mut f = #f;
                        let mut out = ::std::vec::Vec::new();
                        for x in (#array).iter() { if f(x)? { out.push(x.clone()); } }
                        out
                    }),
                    "some" => quote!({
                        let mut f = #f;
                        let mut found = false;
                        for x in (#array).iter() { if f(x)? { found = true; break; } }
                        found
                    }),
                    _ => quote!({
                        let mut f = #f;
                        let mut all = true;
                        for x in (#array).iter() { if !f(x)? { all = false; break; } }
                        all
                    }),
                };
                let ty = match method {
                    "filter" => object.ty.clone(),
                    _ => Ty::Bool,
                };
                Ok(Val::owned(ty, code))
            }
            ("reduce", 2) => {
                let init = self.expr(args[1])?;
                if !matches!(init.ty, Ty::Num | Ty::Bool) {
                    return Err(self.not(args[1], "a `reduce` over anything but a number or a boolean"));
                }
                let (f, returns) = self.callback(callback(self)?, &[init.ty.clone(), element.clone()], Some(0), e)?;
                if returns != init.ty {
                    return Err(self.not(e, "a `reduce` callback that returns another type than its start"));
                }
                let start = &init.code;
                Ok(Val::owned(
                    returns,
                    quote!({ let mut f = #f; (#array).iter().try_fold(#start, |acc, x| f(acc, x))? }),
                ))
            }
            _ => Err(self.not(
                e,
                format!("the array method `{method}` with {}", count_arguments(args.len())),
            )),
        }
    }

    /// A string's methods: case, trimming, searching, cutting, padding.
    fn string_method(
        &mut self,
        object: Val,
        method: &str,
        args: &[&'a Expression<'a>],
        e: &'a Expression<'a>,
    ) -> Result<Val> {
        // What copies or multiplies the string counts as a copy of it (see `check_copy`).
        if matches!(method, "split" | "slice" | "padStart" | "padEnd" | "repeat") {
            self.check_copy(&object, e)?;
        }
        let s = object.as_str();
        let (ty, code) = match (method, args) {
            ("toUpperCase", []) => (Ty::Str, quote!(js::to_upper_case(#s)?)),
            ("toLowerCase", []) => (Ty::Str, quote!(js::to_lower_case(#s)?)),
            ("trim", []) => (Ty::Str, quote!(js::trim(#s, true, true)?)),
            ("trimStart", []) => (Ty::Str, quote!(js::trim(#s, true, false)?)),
            ("trimEnd", []) => (Ty::Str, quote!(js::trim(#s, false, true)?)),
            // Whole characters on both sides, so UTF-8 answers as UTF-16 does.
            ("startsWith", [a]) => {
                let p = self.str_arg(a, method)?;
                (Ty::Bool, quote!(#s.starts_with(#p)))
            }
            ("endsWith", [a]) => {
                let p = self.str_arg(a, method)?;
                (Ty::Bool, quote!(#s.ends_with(#p)))
            }
            ("includes", [a]) => {
                let p = self.str_arg(a, method)?;
                (Ty::Bool, quote!(#s.contains(#p)))
            }
            ("split", [a]) => {
                let p = self.str_arg(a, method)?;
                (Ty::Array(Box::new(Ty::Str)), quote!(js::split(#s, #p)?))
            }
            ("charAt", [] | [_]) => {
                let i = match args.first() {
                    Some(a) => self.num_arg(a, method)?,
                    None => quote!(0.0),
                };
                (Ty::Str, quote!(js::char_at(#s, #i)?))
            }
            ("slice", [start] | [start, _]) => {
                let start = self.num_arg(start, method)?;
                let end = match args.get(1) {
                    Some(a) => {
                        let end = self.num_arg(a, method)?;
                        quote!(::core::option::Option::Some(#end))
                    }
                    None => quote!(::core::option::Option::None),
                };
                (Ty::Str, quote!(js::slice(#s, #start, #end)?))
            }
            ("padStart" | "padEnd", [_] | [_, _]) => {
                let target = self.num_arg(args[0], method)?;
                let fill = match args.get(1) {
                    Some(a) => self.str_arg(a, method)?,
                    None => quote!(" "),
                };
                let start = method == "padStart";
                (Ty::Str, quote!(js::pad(#s, #target, #fill, #start)?))
            }
            ("repeat", [a]) => {
                let n = self.num_arg(a, method)?;
                (Ty::Str, quote!(js::repeat(#s, #n)?))
            }
            _ => {
                return Err(self.not(
                    e,
                    format!("the string method `{method}` with {}", count_arguments(args.len())),
                ));
            }
        };
        Ok(Val::owned(ty, code))
    }

    /// An argument that must be text, as a `&str`.
    fn str_arg(&mut self, a: &'a Expression<'a>, method: &str) -> Result<TokenStream> {
        let v = self.expr(a)?;
        if !v.ty.is_text() {
            return Err(self.not(a, format!("`{method}` of {}", v.ty.describe())));
        }
        Ok(v.as_str())
    }

    /// An argument that must be a number.
    fn num_arg(&mut self, a: &'a Expression<'a>, method: &str) -> Result<TokenStream> {
        let v = self.expr(a)?;
        if v.ty != Ty::Num {
            return Err(self.not(a, format!("`{method}` of {}", v.ty.describe())));
        }
        Ok(v.code)
    }

    /// `v`, owned (see [`Self::check_copy`]).
    pub fn owned(&self, v: &Val, e: &impl oxc_span::GetSpan) -> Result<TokenStream> {
        self.check_copy(v, e)?;
        Ok(v.own())
    }

    /// Inside a callback or a loop, a string, array or object read from outside it is
    /// not copied (or appended to a string): a copy at each turn of something the client
    /// sent grows with the square of the input, which the engine would stop at its
    /// memory limit and Rust would not.
    pub fn check_copy(&self, v: &Val, e: &impl oxc_span::GetSpan) -> Result<()> {
        if v.ty.is_copy() || v.kind != Kind::Place || self.scope.elements.is_empty() {
            return Ok(());
        }
        if self.origin(v) == self.scope.elements.len() {
            return Ok(());
        }
        Err(self.not(
            e,
            "copying a string, array or object from outside a callback or loop, inside it,",
        ))
    }

    /// How many callbacks and loops were open where the data `v` reads was made:
    /// `ctx.inputs` and unknown roots, none.
    pub fn origin(&self, v: &Val) -> usize {
        v.root
            .as_deref()
            .and_then(|r| self.scope.lookup(r))
            .map_or(0, |l| l.iteration)
    }

    /// Inside a callback or a loop, iterating `array` must stay within its element:
    /// iterating the whole of something again makes the work grow faster than the input.
    pub fn check_linear(&self, array: &Val, e: &impl oxc_span::GetSpan) -> Result<()> {
        if let Some(root) = self.scope.iteration_element() {
            let rooted = array
                .path
                .as_ref()
                .is_some_and(|p| p == root || p.starts_with(&format!("{root}.")));
            if !rooted {
                return Err(self.not(
                    e,
                    "iterating, inside a callback or a loop, an array that is not part of its element",
                ));
            }
        }
        Ok(())
    }

    /// An arrow function as a Rust closure returning `js::Flow<T>`, and `T`. Its
    /// parameters have types `params`; the one at `by_value` (a `reduce` accumulator) is
    /// taken by value, the others by reference (the array's elements).
    fn callback(
        &mut self,
        f: &'a ArrowFunctionExpression<'a>,
        params: &[Ty],
        by_value: Option<usize>,
        e: &'a Expression<'a>,
    ) -> Result<(TokenStream, Ty)> {
        let Some(names) = super::program::plain_params(&f.params) else {
            return Err(self.not(e, "a callback parameter that is not a plain name"));
        };
        if names.len() != params.len() {
            return Err(self.not(e, format!("a callback without exactly {} parameters", params.len())));
        }
        let element = names[by_value.map_or(0, |_| 1)].to_string();
        self.scope.functions.push(super::scope::Function {
            kind: FunctionKind::Callback,
            returns: None,
        });
        self.scope.elements.push(element);
        let loops = std::mem::take(&mut self.scope.loops);
        self.scope.enter();
        let mut header = Vec::new();
        for (i, (name, ty)) in names.iter().zip(params).enumerate() {
            let copy = ty.is_copy();
            let by_ref = Some(i) != by_value && !copy;
            let holds = if by_ref { Holds::Ref } else { Holds::Value };
            let rust = self.scope.declare(name, ty.clone(), holds, false, None);
            let t = ty.rust();
            header.push(match (Some(i) == by_value, copy) {
                (true, _) => quote!(#rust: #t),
                (false, true) => quote!(&#rust: &#t),
                (false, false) => quote!(#rust: &#t),
            });
        }
        let body = match (f.get_function_body(), f.get_expression()) {
            (Some(body), _) => self.statements(&body.statements),
            (None, Some(expression)) => self.expr(expression).and_then(|v| {
                self.scope.function_mut().returns = Some(v.ty.clone());
                let own = self.owned(&v, expression)?;
                Ok(vec![quote!(return ::core::result::Result::Ok(#own);)])
            }),
            (None, None) => Err(self.not(e, "this callback")),
        };
        self.scope.leave();
        self.scope.elements.pop();
        self.scope.loops = loops;
        let function = self.scope.functions.pop().expect("pushed above");
        let body = body?;
        let Some(returns) = function.returns else {
            return Err(self.not(e, "a callback that returns nothing"));
        };
        let t = returns.rust();
        Ok((
            quote!(|#(#header),*| -> js::Flow<#t> { #(#body)* js::deopt() }),
            returns,
        ))
    }

    /// An object literal built without a structure it must be: a record of the
    /// translation.
    fn record(&mut self, e: &'a Expression<'a>) -> Result<Val> {
        let Expression::ObjectExpression(object) = e else {
            unreachable!("called on object literals")
        };
        let mut fields: Vec<(String, Ty)> = Vec::new();
        let mut values = Vec::new();
        for p in &object.properties {
            let ObjectPropertyKind::ObjectProperty(p) = p else {
                return Err(self.not(e, "a spread in an object"));
            };
            let Some(name) = static_name(&p.key) else {
                return Err(self.not(e, "a computed key"));
            };
            if p.method || p.kind != oxc_ast::ast::PropertyKind::Init || !super::scope::Scope::valid_name(&name) {
                return Err(self.not(e, format!("the property `{name}`")));
            }
            if fields.iter().any(|(n, _)| *n == name) {
                return Err(self.not(e, format!("the property `{name}` twice")));
            }
            let v = self.expr(&p.value)?;
            if matches!(v.ty, Ty::Undefined | Ty::Null | Ty::Inputs) {
                return Err(self.not(&p.value, format!("{} as a property", v.ty.describe())));
            }
            let field = format_ident!("f_{}", name);
            let own = self.owned(&v, &p.value)?;
            values.push(quote!(#field: #own));
            fields.push((name, v.ty));
        }
        let id = self.record_type(fields);
        let name = super::types::record_ident(id);
        Ok(Val::owned(Ty::Record(id), quote!(#name { #(#values),* })))
    }

    fn call_helper(
        &mut self,
        f: super::program::HelperRef<'a>,
        args: &[&'a Expression<'a>],
        e: &'a Expression<'a>,
    ) -> Result<Val> {
        let mut values = Vec::new();
        let mut types = Vec::new();
        for a in args {
            let v = self.expr(a)?;
            types.push(v.ty.clone());
            values.push(v);
        }
        let (rust, returns) = self.helper(f, &types, e)?;
        let args = values
            .iter()
            .zip(args)
            .map(|(v, a)| self.owned(v, *a))
            .collect::<Result<Vec<_>>>()?;
        Ok(Val::owned(returns, quote!(#rust(#(#args),*)?)))
    }

    pub fn not(&self, node: &impl oxc_span::GetSpan, reason: impl Into<String>) -> NotNative {
        NotNative::new(self.span(node), format!("{} is not compiled to Rust", reason.into()))
    }
}

/// What an expression outside the subset is, for the reason it is not compiled.
fn expression_kind(e: &Expression) -> &'static str {
    match e {
        Expression::AwaitExpression(_) => "`await`",
        Expression::NewExpression(_) => "`new`",
        Expression::ArrayExpression(_) => "an array literal",
        Expression::FunctionExpression(_) | Expression::ArrowFunctionExpression(_) => {
            "a function as a value (only as the callback of an array method)"
        }
        Expression::UpdateExpression(_) => "`++` or `--` (write `x += 1`)",
        Expression::ChainExpression(_) => "optional chaining (`?.`)",
        Expression::TaggedTemplateExpression(_) => "a tagged template",
        Expression::RegExpLiteral(_) => "a regular expression",
        Expression::BigIntLiteral(_) => "a BigInt",
        Expression::ThisExpression(_) => "`this`",
        Expression::SequenceExpression(_) => "the comma operator",
        Expression::AssignmentExpression(_) => "an assignment inside an expression",
        Expression::ClassExpression(_) => "a class",
        Expression::YieldExpression(_) => "`yield`",
        Expression::ImportExpression(_) => "`import()`",
        _ => "this kind of expression",
    }
}

/// Whether `code` is a place written as names, `.` and parenthesized groups
/// (`(*l_order).lines`), which a field access needs no parentheses around.
fn is_chain(code: &TokenStream) -> bool {
    code.clone().into_iter().all(|t| match t {
        proc_macro2::TokenTree::Ident(_) => true,
        proc_macro2::TokenTree::Punct(p) => p.as_char() == '.',
        proc_macro2::TokenTree::Group(g) => g.delimiter() == proc_macro2::Delimiter::Parenthesis,
        proc_macro2::TokenTree::Literal(_) => false,
    })
}

/// A `String` made by `parts`, statements that push onto `s` (see `push_string`).
pub fn build_string(parts: &[TokenStream]) -> TokenStream {
    quote!({ let mut s = ::std::string::String::new(); #(#parts)* s })
}

fn is_primitive(t: &Ty) -> bool {
    matches!(t, Ty::Num | Ty::Bool | Ty::Str | Ty::Enum(_) | Ty::Undefined | Ty::Null)
}

/// The Rust operator of a JavaScript arithmetic one on numbers (both are IEEE 754's,
/// `%` included).
pub fn arithmetic(op: BinaryOperator) -> Option<TokenStream> {
    Some(match op {
        BinaryOperator::Addition => quote!(+),
        BinaryOperator::Subtraction => quote!(-),
        BinaryOperator::Multiplication => quote!(*),
        BinaryOperator::Division => quote!(/),
        BinaryOperator::Remainder => quote!(%),
        _ => return None,
    })
}

fn compare_op(op: BinaryOperator) -> TokenStream {
    match op {
        BinaryOperator::LessThan => quote!(<),
        BinaryOperator::LessEqualThan => quote!(<=),
        BinaryOperator::GreaterThan => quote!(>),
        _ => quote!(>=),
    }
}

pub fn num_literal(value: f64) -> Val {
    // `1e999` is a literal of JavaScript too: Infinity, which Rust has no literal for.
    let code = match value {
        f64::INFINITY => quote!(f64::INFINITY),
        f64::NEG_INFINITY => quote!(f64::NEG_INFINITY),
        v if v.is_nan() => quote!(f64::NAN),
        v => {
            let lit = Literal::f64_suffixed(v);
            quote!(#lit)
        }
    };
    Val::owned(Ty::Num, code)
}

pub fn str_literal(value: &str) -> Val {
    Val {
        ty: Ty::Str,
        code: quote!(#value),
        kind: Kind::Static,
        path: None,
        root: None,
    }
}

/// A property key written as a name or a string.
pub fn static_name(key: &PropertyKey) -> Option<String> {
    match key {
        PropertyKey::StaticIdentifier(id) => Some(id.name.to_string()),
        PropertyKey::StringLiteral(s) => Some(s.value.to_string()),
        _ => None,
    }
}

/// "no arguments", "one argument", "3 arguments".
fn count_arguments(n: usize) -> String {
    match n {
        0 => "no arguments".into(),
        1 => "one argument".into(),
        n => format!("{n} arguments"),
    }
}
