//! Values across the boundary without JSON text: a node's inputs become JavaScript values
//! directly, and what `run` returns is read back as a `serde_json::Value` that serde then
//! checks against the pins. QuickJS's `JSON.parse` and `JSON.stringify` were most of a
//! call's cost (bench/typescript.py, `examples/call_cost.rs` under callgrind).
//!
//! Reading follows `JSON.stringify`: `toJSON` is called (a `Date` becomes its ISO text),
//! `undefined`, functions and symbols are left out of objects and are `null` in arrays,
//! numbers that are not finite are `null`, and a cycle or a `BigInt` is an error.

use rquickjs::{Array, Ctx, Function, Object, Type, Value};
use serde_json::{Map, Number};

/// Deeper than this is refused, as a cycle would be.
const MAX_DEPTH: usize = 256;

/// `value` as a JavaScript value.
pub fn to_js<'js>(ctx: &Ctx<'js>, value: &serde_json::Value) -> rquickjs::Result<Value<'js>> {
    Ok(match value {
        serde_json::Value::Null => Value::new_null(ctx.clone()),
        serde_json::Value::Bool(b) => Value::new_bool(ctx.clone(), *b),
        serde_json::Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => Value::new_int(ctx.clone(), i),
            None => Value::new_float(ctx.clone(), n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => rquickjs::String::from_str(ctx.clone(), s)?.into_value(),
        serde_json::Value::Array(items) => {
            let array = Array::new(ctx.clone())?;
            for (i, item) in items.iter().enumerate() {
                array.set(i, to_js(ctx, item)?)?;
            }
            array.into_value()
        }
        serde_json::Value::Object(fields) => {
            let object = Object::new(ctx.clone())?;
            for (key, field) in fields {
                object.set(key.as_str(), to_js(ctx, field)?)?;
            }
            object.into_value()
        }
    })
}

/// A JavaScript value as JSON, as `JSON.stringify` would write it; `Err` names what
/// cannot be written.
pub fn from_js<'js>(value: &Value<'js>) -> Result<serde_json::Value, String> {
    Ok(read(value, 0)?.unwrap_or(serde_json::Value::Null))
}

/// `None` for what `JSON.stringify` leaves out of an object.
fn read<'js>(value: &Value<'js>, depth: usize) -> Result<Option<serde_json::Value>, String> {
    if depth > MAX_DEPTH {
        return Err("the value is nested too deeply (or is circular)".into());
    }
    Ok(Some(match value.type_of() {
        Type::Uninitialized | Type::Undefined | Type::Symbol | Type::Function | Type::Constructor => return Ok(None),
        Type::Null => serde_json::Value::Null,
        Type::Bool => serde_json::Value::Bool(value.as_bool().unwrap_or(false)),
        Type::Int => serde_json::Value::Number(value.as_int().unwrap_or(0).into()),
        Type::Float => number(value.as_float().unwrap_or(f64::NAN)),
        Type::String => {
            let text: String = value.get().map_err(|e| e.to_string())?;
            serde_json::Value::String(text)
        }
        Type::BigInt => return Err("a BigInt cannot be written as JSON".into()),
        Type::Array => {
            let array = value.as_array().ok_or("an array that is not one")?;
            let mut items = Vec::with_capacity(array.len());
            for i in 0..array.len() {
                let item: Value = array.get(i).map_err(|e| e.to_string())?;
                items.push(read(&item, depth + 1)?.unwrap_or(serde_json::Value::Null));
            }
            serde_json::Value::Array(items)
        }
        _ => {
            let object = value.as_object().ok_or("a value of an unknown kind")?;
            // `toJSON` first: a `Date`, a `URL`, or the node's own.
            if let Ok(to_json) = object.get::<_, Function>("toJSON") {
                let converted: Value = to_json
                    .call((rquickjs::function::This(object.clone()),))
                    .map_err(|e| format!("toJSON failed: {e}"))?;
                return read(&converted, depth + 1);
            }
            let mut fields = Map::new();
            for key in object.keys::<String>() {
                let key = key.map_err(|e| e.to_string())?;
                let field: Value = object.get(key.as_str()).map_err(|e| e.to_string())?;
                if let Some(field) = read(&field, depth + 1)? {
                    fields.insert(key, field);
                }
            }
            serde_json::Value::Object(fields)
        }
    }))
}

/// A number as `JSON.stringify` writes it and `serde_json` would read that text back:
/// an integer when it is one, `null` when it is not finite.
fn number(x: f64) -> serde_json::Value {
    if !x.is_finite() {
        return serde_json::Value::Null;
    }
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        return serde_json::Value::Number((x as i64).into());
    }
    Number::from_f64(x).map_or(serde_json::Value::Null, serde_json::Value::Number)
}
