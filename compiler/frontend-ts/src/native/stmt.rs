//! Statements: declarations, `if`, blocks, `return`, assignments to locals, and the
//! context's `ctx.fail(…)` and `ctx.log(…)` (and `console`).

use super::Result;
use super::program::{Global, Translator};
use super::scope::{FunctionKind, Holds};
use super::types::{Kind, Ty, Val};
use oxc_ast::ast::{
    AssignmentOperator, AssignmentTarget, BindingPattern, CallExpression, Expression, Statement,
    VariableDeclarationKind,
};
use proc_macro2::TokenStream;
use quote::quote;

impl<'a> Translator<'a> {
    pub fn statements(&mut self, statements: &'a [Statement<'a>]) -> Result<Vec<TokenStream>> {
        let mut out = Vec::new();
        for s in statements {
            self.statement(s, &mut out)?;
        }
        Ok(out)
    }

    fn statement(&mut self, s: &'a Statement<'a>, out: &mut Vec<TokenStream>) -> Result<()> {
        match s {
            Statement::EmptyStatement(_) => Ok(()),
            Statement::VariableDeclaration(d) => {
                let mutable = match d.kind {
                    VariableDeclarationKind::Const => false,
                    VariableDeclarationKind::Let => true,
                    _ => return Err(self.not(&**d, "`var` (write `const` or `let`)")),
                };
                for declarator in &d.declarations {
                    let Some(init) = &declarator.init else {
                        return Err(self.not(declarator, "a declaration without a value"));
                    };
                    let value = self.expr(init)?;
                    match &declarator.id {
                        BindingPattern::BindingIdentifier(id) => {
                            out.push(self.declare(id.name.as_str(), value, mutable, declarator)?);
                        }
                        BindingPattern::ObjectPattern(pattern) if pattern.rest.is_none() => {
                            // `const { order, max_lines } = ctx.inputs;`: a name per field.
                            for p in &pattern.properties {
                                let (Some(key), BindingPattern::BindingIdentifier(id)) =
                                    (super::expr::static_name(&p.key), &p.value)
                                else {
                                    return Err(self.not(p, "this destructuring"));
                                };
                                let field = self.member_of(value.clone(), &key, init)?;
                                out.push(self.declare(id.name.as_str(), field, mutable, p)?);
                            }
                        }
                        _ => return Err(self.not(declarator, "this destructuring")),
                    }
                }
                Ok(())
            }
            Statement::BlockStatement(b) => {
                self.scope.enter();
                let body = self.statements(&b.body);
                self.scope.leave();
                let body = body?;
                out.push(quote!({ #(#body)* }));
                Ok(())
            }
            Statement::IfStatement(i) => {
                let test = self.expr(&i.test)?;
                let test = self.truthy(&test, &i.test)?;
                let present = self.facts(&i.test, true);
                let absent = self.facts(&i.test, false);
                let yes = self.branch(&i.consequent, present)?;
                let no = match &i.alternate {
                    Some(alternate) => Some(self.branch(alternate, absent.clone())?),
                    None => None,
                };
                out.push(match no {
                    Some(no) => quote!(if #test { #(#yes)* } else { #(#no)* }),
                    None => quote!(if #test { #(#yes)* }),
                });
                // `if (x === undefined) ctx.fail(…);` (or `return`, `continue`, `break`):
                // past it, `x` is present.
                if i.alternate.is_none() && self.exits(&i.consequent) {
                    for path in absent {
                        self.scope.narrow(path);
                    }
                }
                Ok(())
            }
            Statement::ReturnStatement(r) => {
                let Some(argument) = &r.argument else {
                    return Err(self.not(&**r, "`return` without a value"));
                };
                if self.scope.function().kind == FunctionKind::Run {
                    let outputs = self.outputs(argument)?;
                    out.push(quote!(return ::core::result::Result::Ok(#outputs);));
                    return Ok(());
                }
                let value = self.expr(argument)?;
                match &self.scope.function().returns {
                    Some(t) if *t != value.ty => {
                        return Err(self.not(
                            argument,
                            format!(
                                "returning {} and {} from one function",
                                t.describe(),
                                value.ty.describe()
                            ),
                        ));
                    }
                    _ => self.scope.function_mut().returns = Some(value.ty.clone()),
                }
                let own = self.owned(&value, argument)?;
                out.push(quote!(return ::core::result::Result::Ok(#own);));
                Ok(())
            }
            Statement::ExpressionStatement(s) => match s.expression.get_inner_expression() {
                Expression::CallExpression(call) => {
                    let code = self.context_call(call, &s.expression)?;
                    out.push(code);
                    Ok(())
                }
                Expression::AssignmentExpression(a) => {
                    let AssignmentTarget::AssignmentTargetIdentifier(target) = &a.left else {
                        return Err(self.not(&**a, "assigning anything but a local variable"));
                    };
                    let name = target.name.as_str();
                    let current = self.scope.current_function();
                    let Some(local) = self.scope.lookup(name).cloned() else {
                        return Err(self.not(&**a, format!("assigning `{name}`, which is not a local variable")));
                    };
                    if !local.mutable || local.function != current {
                        return Err(self.not(
                            &**a,
                            format!("assigning `{name}` here (only a `let` of the same function)"),
                        ));
                    }
                    // A string, array or object assigned in a loop from itself could
                    // double at each turn (`s = s + s`): only numbers and the like are.
                    if self.scope.loops > local.loop_depth && !local.ty.is_copy() {
                        return Err(self.not(
                            &**a,
                            format!(
                                "assigning `{name}` ({}) in a loop it was declared outside of",
                                local.ty.describe()
                            ),
                        ));
                    }
                    let value = self.expr(&a.right)?;
                    let rust = &local.rust;
                    let v = &value.code;
                    let arithmetic = a.operator.to_binary_operator().and_then(super::expr::arithmetic);
                    let code = match (a.operator, &local.ty, &value.ty) {
                        (AssignmentOperator::Assign, t, u) if t == u => {
                            let own = self.owned(&value, &a.right)?;
                            quote!(#rust = #own;)
                        }
                        (_, Ty::Num, Ty::Num) if arithmetic.is_some() => quote!(#rust = #rust #arithmetic #v;),
                        (op, t, u) => {
                            return Err(self.not(
                                &**a,
                                format!("`{}` of {} and {}", op.as_str(), t.describe(), u.describe()),
                            ));
                        }
                    };
                    out.push(code);
                    Ok(())
                }
                _ => Err(self.not(&**s, "an expression statement that is not a call of `ctx`")),
            },
            Statement::ForOfStatement(f) if !f.r#await => {
                out.push(self.for_of(f)?);
                Ok(())
            }
            Statement::BreakStatement(b) if b.label.is_none() && self.scope.loops > 0 => {
                out.push(quote!(break;));
                Ok(())
            }
            Statement::ContinueStatement(c) if c.label.is_none() && self.scope.loops > 0 => {
                out.push(quote!(continue;));
                Ok(())
            }
            Statement::ForStatement(_) | Statement::ForOfStatement(_) | Statement::ForInStatement(_) => {
                Err(self.not(s, "a `for` loop other than `for (const x of array)`"))
            }
            Statement::WhileStatement(_) | Statement::DoWhileStatement(_) => Err(self.not(s, "a `while` loop")),
            Statement::TryStatement(_) => Err(self.not(s, "`try`")),
            Statement::ThrowStatement(_) => Err(self.not(s, "`throw` (use `ctx.fail`)")),
            Statement::SwitchStatement(_) => Err(self.not(s, "`switch`")),
            Statement::FunctionDeclaration(_) => Err(self.not(s, "a function declared inside a function")),
            Statement::ClassDeclaration(_) => Err(self.not(s, "a class")),
            _ => Err(self.not(s, "this kind of statement")),
        }
    }

    /// `for (const x of array) { … }`: a Rust `for` over the array's elements, `x`
    /// borrowed (or copied). The array is one the loop may iterate (see
    /// `check_linear`), read through a place no assignment in the body can touch.
    fn for_of(&mut self, f: &'a oxc_ast::ast::ForOfStatement<'a>) -> Result<TokenStream> {
        let name = match &f.left {
            oxc_ast::ast::ForStatementLeft::VariableDeclaration(d)
                if d.declarations.len() == 1 && d.kind != VariableDeclarationKind::Var =>
            {
                match &d.declarations[0].id {
                    BindingPattern::BindingIdentifier(id) => id.name.as_str(),
                    _ => return Err(self.not(&**d, "this destructuring")),
                }
            }
            _ => return Err(self.not(f, "a `for` loop other than `for (const x of array)`")),
        };
        if !super::scope::Scope::valid_name(name) {
            return Err(self.not(f, format!("the name `{name}`")));
        }
        let array = self.expr(&f.right)?;
        let Ty::Array(element) = &array.ty else {
            return Err(self.not(&f.right, format!("`for … of` over {}", array.ty.describe())));
        };
        let element = (**element).clone();
        self.check_linear(&array, &f.right)?;
        // A place whose root a `let` holds could be assigned in the body: iterate a copy.
        let iterated = match (array.kind, &array.path) {
            (Kind::Place, Some(_)) => array.code.clone(),
            _ => self.owned(&array, &f.right)?,
        };
        self.scope.enter();
        self.scope.elements.push(name.to_string());
        self.scope.loops += 1;
        let copy = element.is_copy();
        let holds = if copy { Holds::Value } else { Holds::Ref };
        let rust = self.scope.declare(name, element, holds, false, None);
        let body = self.body(&f.body);
        self.scope.loops -= 1;
        self.scope.elements.pop();
        self.scope.leave();
        let body = body?;
        let pattern = if copy { quote!(&#rust) } else { quote!(#rust) };
        Ok(quote!(for #pattern in (#iterated).iter() { #(#body)* }))
    }

    /// A branch of an `if`, with `present` narrowed in it.
    fn branch(&mut self, s: &'a Statement<'a>, present: Vec<String>) -> Result<Vec<TokenStream>> {
        self.scope.enter();
        for path in present {
            self.scope.narrow(path);
        }
        let body = self.body(s);
        self.scope.leave();
        body
    }

    /// The statements of a block, or the one statement (`if (x) return y;`), in the
    /// block the caller opened.
    fn body(&mut self, s: &'a Statement<'a>) -> Result<Vec<TokenStream>> {
        match s {
            Statement::BlockStatement(b) => self.statements(&b.body),
            s => {
                let mut out = Vec::new();
                self.statement(s, &mut out).map(|_| out)
            }
        }
    }

    /// `let`/`const name = value;`.
    pub(super) fn declare(
        &mut self,
        name: &str,
        value: Val,
        mutable: bool,
        at: &impl oxc_span::GetSpan,
    ) -> Result<TokenStream> {
        if !super::scope::Scope::valid_name(name) {
            return Err(self.not(at, format!("the name `{name}`")));
        }
        if matches!(value.ty, Ty::Undefined | Ty::Null) {
            return Err(self.not(at, format!("a variable holding {}", value.ty.describe())));
        }
        let ty = value.ty.clone();
        let t = ty.rust();
        let code = &value.code;
        let (holds, init) = match (mutable, ty.is_copy(), value.kind, &value.path) {
            (false, true, _, _) => (Holds::Value, quote!(#code)),
            (false, false, Kind::Static, _) => (Holds::Static, quote!(#code)),
            // A place whose root is never assigned again: borrowed, not copied.
            (false, false, Kind::Place, Some(_)) => (Holds::Ref, quote!(&#code)),
            _ => (Holds::Value, self.owned(&value, at)?),
        };
        // A reference reads data made where its source was: it counts from there.
        let origin = match holds {
            Holds::Ref => Some(self.origin(&value)),
            _ => None,
        };
        let rust = self.scope.declare(name, ty, holds.clone(), mutable, origin);
        Ok(match (holds, mutable) {
            (Holds::Ref, _) => quote!(let #rust = #init;),
            (Holds::Static, _) => quote!(let #rust: &'static str = #init;),
            (_, true) => quote!(let mut #rust: #t = #init;),
            (_, false) => quote!(let #rust: #t = #init;),
        })
    }

    /// Whether a statement never lets the code after it in its block run (`return`,
    /// `ctx.fail`, `break`, `continue`).
    fn exits(&self, s: &'a Statement<'a>) -> bool {
        match s {
            Statement::ReturnStatement(_) | Statement::BreakStatement(_) | Statement::ContinueStatement(_) => true,
            Statement::BlockStatement(b) => b.body.last().is_some_and(|s| self.exits(s)),
            Statement::IfStatement(i) => i
                .alternate
                .as_ref()
                .is_some_and(|a| self.exits(&i.consequent) && self.exits(a)),
            Statement::ExpressionStatement(s) => match s.expression.get_inner_expression() {
                Expression::CallExpression(call) => self.context_method(call).is_some_and(|m| m == "fail"),
                _ => false,
            },
            _ => false,
        }
    }

    /// `fail` for `ctx.fail(…)`, `log` for `ctx.log(…)` and `console.log(…)` and its kin.
    fn context_method(&self, call: &'a CallExpression<'a>) -> Option<&'a str> {
        let Expression::StaticMemberExpression(m) = call.callee.get_inner_expression() else {
            return None;
        };
        let Expression::Identifier(object) = m.object.get_inner_expression() else {
            return None;
        };
        let object = object.name.as_str();
        let method = m.property.name.as_str();
        if self.scope.lookup(object).is_some() {
            return None;
        }
        match self.global(object) {
            Some(Global::Context) if matches!(method, "fail" | "log") => Some(method),
            None if object == "console" && matches!(method, "log" | "info" | "warn" | "error" | "debug") => Some("log"),
            _ => None,
        }
    }

    /// `ctx.fail(message, code?)` and `ctx.log(…)` as statements.
    fn context_call(&mut self, call: &'a CallExpression<'a>, e: &'a Expression<'a>) -> Result<TokenStream> {
        let Some(method) = self.context_method(call) else {
            return Err(self.not(e, "a call whose value is not used, other than `ctx.fail` and `ctx.log`"));
        };
        if !self.scope.in_run() {
            return Err(self.not(e, format!("`{method}` outside the node's `run`")));
        }
        let args = self.arguments(call, e)?;
        if method == "fail" {
            let (message, code) = match args.as_slice() {
                [m] => (*m, None),
                [m, c] => (*m, Some(*c)),
                _ => return Err(self.not(e, "`ctx.fail` without one or two arguments")),
            };
            let m = self.expr(message)?;
            let message = self.string_of(&m, message)?;
            let code = match code {
                None => quote!(::core::option::Option::None),
                Some(c) => {
                    let v = self.expr(c)?;
                    match v.ty {
                        Ty::Undefined | Ty::Null => quote!(::core::option::Option::None),
                        _ => {
                            let code = self.string_of(&v, c)?;
                            quote!(::core::option::Option::Some(#code))
                        }
                    }
                }
            };
            return Ok(quote!(return js::fail(#message, #code);));
        }
        // `ctx.log(a, b)` writes each argument as text (a string as it is, anything else
        // as JSON), joined by spaces; unread lines are not even formatted.
        let values = args.iter().map(|a| self.expr(a)).collect::<Result<Vec<_>>>()?;
        if let ([v], [a]) = (values.as_slice(), args.as_slice())
            && v.ty.is_text()
        {
            let line = self.string_of(v, a)?;
            return Ok(quote!(if ctx.keeps_logs() { logs.push(#line); }));
        }
        let mut parts = Vec::new();
        for (i, (v, a)) in values.iter().zip(&args).enumerate() {
            if i > 0 {
                parts.push(quote!(s.push(' ');));
            }
            let code = &v.code;
            parts.push(match &v.ty {
                t if t.is_text() => self.push_string(v, a)?,
                Ty::Num => {
                    quote!(if (#code).is_finite() { js::push_number(&mut s, #code) } else { s.push_str("null") })
                }
                Ty::Bool => self.push_string(v, a)?,
                t => return Err(self.not(*a, format!("logging {}", t.describe()))),
            });
        }
        let line = super::expr::build_string(&parts);
        Ok(quote!(if ctx.keeps_logs() { logs.push(#line); }))
    }
}
