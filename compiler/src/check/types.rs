//! Type rules: what a reference's type is, which types fit which pins, and whether an
//! inline literal fits its pin. `docs/type-rules.md` states the same rules for users.
//!
//! Compatibility (a value of type S wired into a pin of type T):
//!
//! | S                   | T                  | fits?                                  |
//! |---------------------|--------------------|----------------------------------------|
//! | any type            | `any`              | yes                                    |
//! | T                   | T                  | yes                                    |
//! | `object:<Name>`     | `object`           | yes (a structure is an object)         |
//! | `enum-value:<Name>` | `string`           | yes (enum values are strings)          |
//! | `S:array`           | `T:array`          | if S fits T, element by element        |
//! | `any`               | anything but `any` | no: give the value a concrete type     |
//! | `object`            | `object:<Name>`    | no: a generic object may lack fields   |
//! | `string`            | `enum-value:<Name>`| no: not every string is a value        |
//!
//! Optionality: an optional value fits an optional pin or a pin with a default (the
//! default applies when the value is absent); it does not fit a required pin.

use svc_frontend::Code;
use svc_frontend::yaml::{Node, Value};
use svc_types::{Assets, Constraints, TypeRef};

/// The type of a wired value: a type, and whether it may be absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueType {
    pub ty: TypeRef,
    pub optional: bool,
    /// The constraints the value is known to meet when present: those of the request
    /// input, structure field or output pin it comes from, all checked before it can be
    /// read.
    pub constraints: Constraints,
}

impl ValueType {
    pub fn required(ty: TypeRef) -> Self {
        Self::new(ty, false)
    }

    /// A value of `ty`, maybe absent, known to meet no constraint.
    pub fn new(ty: TypeRef, optional: bool) -> Self {
        ValueType {
            ty,
            optional,
            constraints: Constraints::default(),
        }
    }

    pub fn describe(&self) -> String {
        if self.optional {
            format!("optional `{}`", self.ty)
        } else {
            format!("`{}`", self.ty)
        }
    }
}

/// Whether a value of type `src` may be wired into a pin of type `dst`.
pub fn fits(src: &TypeRef, dst: &TypeRef) -> bool {
    match (src, dst) {
        (_, TypeRef::Any) => true,
        (a, b) if a == b => true,
        (TypeRef::Structure(_), TypeRef::Object) => true,
        (TypeRef::Enum(_), TypeRef::String) => true,
        (TypeRef::Array(a), TypeRef::Array(b)) => fits(a, b),
        _ => false,
    }
}

/// A hint for a wire that does not fit.
pub fn mismatch_hint(src: &TypeRef, dst: &TypeRef) -> String {
    match (src, dst) {
        (TypeRef::Any, _) => {
            "the value is `any`, which may be anything; declare a concrete type on the output it comes from".into()
        }
        (TypeRef::Object, TypeRef::Structure(name)) => {
            format!("a generic `object` may lack the fields of `{name}`; declare the source as `object:{name}`")
        }
        (TypeRef::String, TypeRef::Enum(name)) => {
            format!("not every string is a value of `{name}`; declare the source as `enum-value:{name}`")
        }
        (TypeRef::Array(_), _) | (_, TypeRef::Array(_)) => {
            "arrays fit arrays whose elements fit, element by element".into()
        }
        (TypeRef::Structure(a), TypeRef::Structure(b)) => {
            format!(
                "`{a}` and `{b}` are different structures; wire a field of the right type, or convert in a code node"
            )
        }
        _ => format!("convert the value in a code node, or wire an output of type `{dst}`"),
    }
}

/// A problem with an inline literal: where inside the literal, and what.
#[derive(Debug)]
pub struct LiteralProblem<'a> {
    pub node: &'a Node,
    /// The type expected at `node` (inside a structure or list literal, the field's or
    /// element's type).
    pub expected: TypeRef,
    pub message: String,
    pub hint: String,
    /// `LiteralMismatch` for a value of the wrong shape, `LiteralBreaksConstraint` for
    /// one of the right shape that a field's constraints refuse.
    pub code: Code,
}

impl LiteralProblem<'_> {
    /// What the caret under the literal says.
    pub fn label(&self) -> String {
        match self.code {
            Code::LiteralBreaksConstraint => "breaks a constraint".into(),
            _ => format!("expected `{}`", self.expected),
        }
    }
}

/// Whether the YAML literal `node` is a valid value of type `ty`.
pub fn check_literal<'a>(node: &'a Node, ty: &TypeRef, assets: &Assets) -> Result<(), LiteralProblem<'a>> {
    let problem = |message: String, hint: String| {
        Err(LiteralProblem {
            node,
            expected: ty.clone(),
            message,
            hint,
            code: Code::LiteralMismatch,
        })
    };
    match (ty, &node.value) {
        (TypeRef::Any, _) => Ok(()),
        (TypeRef::String, Value::String(_)) => Ok(()),
        (TypeRef::String, Value::Int(_) | Value::Float(_) | Value::Bool(_)) => problem(
            format!(
                "`{}` is {}, but the pin expects a string",
                node.scalar_text(),
                node.kind()
            ),
            format!("quote it to make it a string: `\"{}\"`", node.scalar_text()),
        ),
        (TypeRef::Number, Value::Int(_) | Value::Float(_)) => Ok(()),
        (TypeRef::Boolean, Value::Bool(_)) => Ok(()),
        (TypeRef::Enum(name), Value::String(s)) => {
            let Some(e) = assets.enum_named(name) else {
                return Ok(());
            };
            if e.find_value(s).is_some() {
                return Ok(());
            }
            let values: Vec<&str> = e.values.iter().map(|v| v.value()).collect();
            let hint = if let Some(v) = e.values.iter().find(|v| v.key() == s || v.label() == s) {
                format!("`{s}` is a key or label of `{name}`; write its value, `{}`", v.value())
            } else {
                svc_types::assets::nearest_or_all(s, &values, format_args!("the values of `{name}` are"))
            };
            problem(format!("`{s}` is not a value of enum `{name}`"), hint)
        }
        (TypeRef::Object, Value::Map(_)) => Ok(()),
        (TypeRef::Structure(name), Value::Map(entries)) => {
            let Some(s) = assets.structure_named(name) else {
                return Ok(());
            };
            for (k, v) in entries {
                let key = k.scalar_text();
                match s.find_field(&key) {
                    None => {
                        let fields: Vec<&str> = s.fields.iter().map(|f| f.name.as_str()).collect();
                        let hint = svc_types::assets::nearest_or_all(
                            &key,
                            &fields,
                            format_args!("the fields of `{name}` are"),
                        );
                        return Err(LiteralProblem {
                            node: k,
                            expected: ty.clone(),
                            message: format!("structure `{name}` has no field `{key}`"),
                            hint,
                            code: Code::LiteralMismatch,
                        });
                    }
                    Some(f) => {
                        if v.is_null() && !f.required {
                            continue;
                        }
                        if let Some(ft) = f.type_ref() {
                            check_literal(v, &ft, assets)?;
                            check_constraints(v, &ft, &f.constraints, &format!("`{name}.{key}`"))?;
                        }
                    }
                }
            }
            for f in s.fields.iter().filter(|f| f.required) {
                if !entries.iter().any(|(k, _)| k.scalar_text() == f.name) {
                    return problem(
                        format!("the literal `{name}` has no `{}`", f.name),
                        format!("`{}` is a required field of `{name}`", f.name),
                    );
                }
            }
            Ok(())
        }
        (TypeRef::Array(inner), Value::Seq(items)) => {
            for item in items {
                check_literal(item, inner, assets)?;
            }
            Ok(())
        }
        (ty, _) => problem(
            format!(
                "{} does not fit {} `{ty}` pin",
                describe_literal(node),
                svc_types::type_ref::article(&ty.to_string())
            ),
            literal_hint(ty, assets),
        ),
    }
}

/// Whether `node`, a literal already known to be of type `ty`, meets `constraints`
/// (on an array: the array keywords on the list, the others on each item). `what`
/// names the field for the message.
pub fn check_constraints<'a>(
    node: &'a Node,
    ty: &TypeRef,
    constraints: &Constraints,
    what: &str,
) -> Result<(), LiteralProblem<'a>> {
    if constraints.is_empty() {
        return Ok(());
    }
    let broken = |at: &'a Node, b: svc_types::constraints::Broken| LiteralProblem {
        node: at,
        expected: ty.clone(),
        message: format!(
            "{} breaks `{}` of {what}: it {}",
            describe_literal(at),
            b.constraint,
            b.message
        ),
        hint: format!("{what} is {}", constraints.describe()),
        code: Code::LiteralBreaksConstraint,
    };
    let check_item = |item: &'a Node| -> Result<(), LiteralProblem<'a>> {
        let b = match &item.value {
            Value::Int(i) => constraints.check_number(*i as f64),
            Value::Float(f) => constraints.check_number(*f),
            Value::String(s) => constraints.check_string(s).or_else(|| {
                let p = constraints.pattern.as_deref()?;
                let re = super::constraints::compile_pattern(p).ok()?;
                svc_types::constraints::check::pattern(re.is_match(s), p)
            }),
            _ => None,
        };
        b.map_or(Ok(()), |b| Err(broken(item, b)))
    };
    match (&node.value, ty) {
        (Value::Seq(items), TypeRef::Array(_)) => {
            let distinct = || {
                let texts: Vec<String> = items.iter().map(Node::to_json_text).collect();
                texts.iter().collect::<std::collections::BTreeSet<_>>().len() == texts.len()
            };
            if let Some(b) = constraints.check_items(items.len(), distinct) {
                return Err(broken(node, b));
            }
            items.iter().try_for_each(check_item)
        }
        _ => check_item(node),
    }
}

fn describe_literal(node: &Node) -> String {
    match &node.value {
        Value::String(s) => format!("the string `{s}`"),
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => format!("`{}`", node.scalar_text()),
        _ => node.kind().to_string(),
    }
}

fn literal_hint(ty: &TypeRef, assets: &Assets) -> String {
    match ty {
        TypeRef::String => "write a string".into(),
        TypeRef::Number => "write a number, such as `10` or `2.5`".into(),
        TypeRef::Boolean => "write `true` or `false`".into(),
        TypeRef::Enum(name) => match assets.enum_named(name) {
            Some(e) => format!(
                "write one of the values of `{name}`: {}",
                svc_types::assets::listed(e.values.iter().map(|v| v.value()))
            ),
            None => format!("write one of the values of `{name}`"),
        },
        TypeRef::Object | TypeRef::Structure(_) => "write an object literal as `{ value: { … } }`".into(),
        TypeRef::Array(_) => "write a list, such as `[a, b]`".into(),
        TypeRef::Any => String::new(),
    }
}

/// Walks `.field.field` segments into a type.
pub enum Walk {
    Ok(ValueType),
    /// The segment at this index does not exist; message and hint.
    NoField(usize, String, String),
}

pub fn walk(mut current: ValueType, segments: &[String], assets: &Assets) -> Walk {
    for (i, seg) in segments.iter().enumerate() {
        match &current.ty {
            TypeRef::Structure(name) => {
                let Some(s) = assets.structure_named(name) else {
                    // Reported as an unknown structure elsewhere.
                    return Walk::Ok(ValueType::new(TypeRef::Any, true));
                };
                match s.find_field(seg) {
                    Some(f) => {
                        current = ValueType {
                            ty: f.type_ref().unwrap_or(TypeRef::Any),
                            optional: current.optional || !f.required,
                            constraints: f.constraints.clone(),
                        };
                    }
                    None => {
                        let fields: Vec<&str> = s.fields.iter().map(|f| f.name.as_str()).collect();
                        let hint =
                            svc_types::assets::nearest_or_all(seg, &fields, format_args!("the fields of `{name}` are"));
                        return Walk::NoField(i, format!("structure `{name}` has no field `{seg}`"), hint);
                    }
                }
            }
            TypeRef::Object | TypeRef::Any => {
                // Fields of untyped values are untyped and may be absent.
                return Walk::Ok(ValueType::new(TypeRef::Any, true));
            }
            TypeRef::Array(_) => {
                return Walk::NoField(
                    i,
                    format!("`{seg}`: an array has no fields"),
                    "wire the whole array; elements are processed in a code node".into(),
                );
            }
            other => {
                return Walk::NoField(
                    i,
                    format!("`{seg}`: `{other}` values have no fields"),
                    "remove the `.field` part".into(),
                );
            }
        }
    }
    Walk::Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_frontend::FileId;
    use svc_frontend::yaml::parse;
    use svc_types::{EnumDefinition, FieldDefinition, StructureDefinition};

    fn assets() -> Assets {
        Assets {
            enums: vec![EnumDefinition::new("Currency").values(["EUR", "USD"])],
            structures: vec![
                StructureDefinition::new("Line")
                    .field(FieldDefinition::new("sku", "string").required())
                    .field(FieldDefinition::new("qty", "number")),
            ],
            secrets: vec![],
        }
    }

    fn t(s: &str) -> TypeRef {
        TypeRef::parse(s).unwrap()
    }

    #[test]
    fn compatibility_table() {
        assert!(fits(&t("number"), &t("any")));
        assert!(fits(&t("object:Line"), &t("object")));
        assert!(fits(&t("enum-value:Currency"), &t("string")));
        assert!(fits(&t("object:Line:array"), &t("object:array")));
        assert!(fits(&t("object:Line:array"), &t("any")));
        assert!(!fits(&t("any"), &t("string")));
        assert!(!fits(&t("object"), &t("object:Line")));
        assert!(!fits(&t("string"), &t("enum-value:Currency")));
        assert!(!fits(&t("string:array"), &t("number:array")));
        assert!(!fits(&t("string"), &t("string:array")));
    }

    fn lit(yaml: &str, ty: &str) -> Result<(), String> {
        let node = parse(FileId(0), &format!("v: {yaml}")).unwrap();
        let v = &node.as_map().unwrap()[0].1;
        check_literal(v, &t(ty), &assets()).map_err(|p| format!("{} | {}", p.message, p.hint))
    }

    #[test]
    fn literals() {
        assert!(lit("EUR", "enum-value:Currency").is_ok());
        assert!(
            lit("EURO", "enum-value:Currency")
                .unwrap_err()
                .contains("did you mean `EUR`")
        );
        assert!(lit("12", "string").unwrap_err().contains("quote it"));
        assert!(lit("1.5", "number").is_ok());
        assert!(lit("x", "number").is_err());
        assert!(lit("[1, 2]", "number:array").is_ok());
        assert!(lit("[1, x]", "number:array").is_err());
        assert!(lit("{ sku: a, qty: 1 }", "object:Line").is_ok());
        assert!(lit("{ qty: 1 }", "object:Line").unwrap_err().contains("has no `sku`"));
        assert!(
            lit("{ sku: a, qtty: 1 }", "object:Line")
                .unwrap_err()
                .contains("did you mean `qty`")
        );
        assert!(lit("{ anything: 1 }", "any").is_ok());
    }

    #[test]
    fn walking_into_structures() {
        let line = ValueType::required(t("object:Line"));
        match walk(line.clone(), &["qty".into()], &assets()) {
            Walk::Ok(v) => assert_eq!(v, ValueType::new(t("number"), true)),
            Walk::NoField(..) => panic!(),
        }
        match walk(line, &["sk".into()], &assets()) {
            Walk::NoField(0, m, h) => assert!(m.contains("no field `sk`") && h.contains("`sku`")),
            _ => panic!(),
        }
    }
}
