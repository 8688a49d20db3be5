//! Conversions generated code applies where the checker allows a wire between two
//! different types (see docs/type-rules.md): a structure into `object`, anything into
//! `any`, and literals of `any`/`object` pins.

use serde::Serialize;
use svc_sdk::{Object, Value};

/// Any value as JSON (`any` pins).
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A structure as a JSON object (`object` pins).
pub fn to_object<T: Serialize + ?Sized>(value: &T) -> Object {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => map,
        _ => Object::new(),
    }
}

/// A literal written in a flow, as JSON (checked when the code was generated).
pub fn json_literal(text: &'static str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// A literal object.
pub fn object_literal(text: &'static str) -> Object {
    match json_literal(text) {
        Value::Object(map) => map,
        _ => Object::new(),
    }
}
