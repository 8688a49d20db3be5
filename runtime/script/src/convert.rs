//! Values across the boundary without JSON text: a node's inputs (and `ctx.request`,
//! `ctx.env`) are serialized straight into JavaScript values ([`Writer`]), and what `run`
//! returns is deserialized straight into the typed outputs ([`Reader`]), which checks it
//! against the pins. QuickJS's `JSON.parse` and
//! `JSON.stringify` were most of a call's cost (bench/typescript.py,
//! `examples/call_cost.rs` under callgrind).
//!
//! Reading follows `JSON.stringify`: `toJSON` is called (a `Date` becomes its ISO text),
//! `undefined`, functions and symbols are left out of objects and are `null` in arrays,
//! numbers that are not finite are `null`, and a cycle or a `BigInt` is an error.

use rquickjs::{Array, Ctx, Object, Type, Value};

/// Deeper than this is refused, as a cycle would be.
const MAX_DEPTH: usize = 256;

/// A serde `Deserializer` over a JavaScript value, with `JSON.stringify`'s rules: the
/// outputs of a call read straight into the typed `Outputs`, with no JSON text and no
/// `serde_json::Value` in between.
pub struct Reader<'js> {
    value: Value<'js>,
    depth: usize,
}

impl<'js> Reader<'js> {
    pub fn new(value: Value<'js>) -> Self {
        Reader { value, depth: 0 }
    }

    fn child(&self, value: Value<'js>) -> Result<Self, ReadError> {
        if self.depth >= MAX_DEPTH {
            return Err(ReadError("the value is nested too deeply (or is circular)".into()));
        }
        Ok(Reader {
            value,
            depth: self.depth + 1,
        })
    }

    /// What `JSON.stringify` leaves out of an object, and writes as `null` in an array.
    fn is_left_out(value: &Value<'js>) -> bool {
        matches!(
            value.type_of(),
            Type::Uninitialized | Type::Undefined | Type::Symbol | Type::Function | Type::Constructor
        )
    }

    /// The value `toJSON` gives, when the object has one.
    fn to_json(&self) -> Result<Option<Value<'js>>, ReadError> {
        let Some(object) = self.value.as_object() else {
            return Ok(None);
        };
        if self.value.is_array() {
            return Ok(None);
        }
        // Read as a plain value: most objects have no `toJSON`, and a failed conversion to
        // `Function` would build an error message for each of them.
        let to_json: Value = object.get("toJSON").map_err(|e| ReadError(e.to_string()))?;
        match to_json.into_function() {
            Some(to_json) => to_json
                .call((rquickjs::function::This(object.clone()),))
                .map(Some)
                .map_err(|e| ReadError(format!("toJSON failed: {e}"))),
            None => Ok(None),
        }
    }
}

/// Why a value could not be read.
#[derive(Debug)]
pub struct ReadError(String);

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

impl serde::de::Error for ReadError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        ReadError(msg.to_string())
    }
}

impl<'de, 'js> serde::Deserializer<'de> for Reader<'js> {
    type Error = ReadError;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        if let Some(converted) = self.to_json()? {
            return self.child(converted)?.deserialize_any(visitor);
        }
        match self.value.type_of() {
            Type::Uninitialized | Type::Undefined | Type::Null | Type::Symbol | Type::Function | Type::Constructor => {
                visitor.visit_unit()
            }
            Type::Bool => visitor.visit_bool(self.value.as_bool().unwrap_or(false)),
            Type::Int => visitor.visit_i64(i64::from(self.value.as_int().unwrap_or(0))),
            Type::Float => {
                let x = self.value.as_float().unwrap_or(f64::NAN);
                if !x.is_finite() {
                    visitor.visit_unit()
                } else if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
                    visitor.visit_i64(x as i64)
                } else {
                    visitor.visit_f64(x)
                }
            }
            Type::String => {
                let text: String = self.value.get().map_err(|e| ReadError(e.to_string()))?;
                visitor.visit_string(text)
            }
            Type::BigInt => Err(ReadError("a BigInt cannot be written as JSON".into())),
            Type::Array => {
                let array = self
                    .value
                    .as_array()
                    .cloned()
                    .ok_or_else(|| ReadError("not an array".into()))?;
                visitor.visit_seq(Items {
                    reader: &self,
                    len: array.len(),
                    array,
                    next: 0,
                })
            }
            _ => {
                let object = self
                    .value
                    .as_object()
                    .cloned()
                    .ok_or_else(|| ReadError("not an object".into()))?;
                // Keys and values in one pass: each value is read by the key's atom.
                let props = object
                    .props::<String, Value>()
                    .collect::<rquickjs::Result<Vec<(String, Value)>>>()
                    .map_err(|e| ReadError(e.to_string()))?;
                visitor.visit_map(Fields {
                    reader: &self,
                    props: props.into_iter(),
                    value: None,
                })
            }
        }
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.value.type_of() {
            Type::Uninitialized | Type::Undefined | Type::Null => visitor.visit_none(),
            Type::Float if !self.value.as_float().unwrap_or(f64::NAN).is_finite() => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        // Enums of svc assets are strings (their wire values).
        match self.value.type_of() {
            Type::String => {
                let text: String = self.value.get().map_err(|e| ReadError(e.to_string()))?;
                visitor.visit_enum(serde::de::IntoDeserializer::<ReadError>::into_deserializer(text))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

struct Items<'r, 'js> {
    reader: &'r Reader<'js>,
    array: Array<'js>,
    len: usize,
    next: usize,
}

impl<'de, 'js> serde::de::SeqAccess<'de> for Items<'_, 'js> {
    type Error = ReadError;

    fn next_element_seed<T: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ReadError> {
        if self.next >= self.len {
            return Ok(None);
        }
        let item: Value = self.array.get(self.next).map_err(|e| ReadError(e.to_string()))?;
        self.next += 1;
        // In an array, what JSON leaves out of an object is `null`.
        let item = if Reader::is_left_out(&item) {
            Value::new_null(item.ctx().clone())
        } else {
            item
        };
        seed.deserialize(self.reader.child(item)?).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len - self.next)
    }
}

struct Fields<'r, 'js> {
    reader: &'r Reader<'js>,
    props: std::vec::IntoIter<(String, Value<'js>)>,
    value: Option<Value<'js>>,
}

impl<'de, 'js> serde::de::MapAccess<'de> for Fields<'_, 'js> {
    type Error = ReadError;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, ReadError> {
        for (key, value) in self.props.by_ref() {
            if Reader::is_left_out(&value) {
                continue;
            }
            self.value = Some(value);
            return seed
                .deserialize(serde::de::IntoDeserializer::<ReadError>::into_deserializer(key))
                .map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ReadError> {
        let value = self
            .value
            .take()
            .ok_or_else(|| ReadError("a value without its key".into()))?;
        seed.deserialize(self.reader.child(value)?)
    }
}

/// A serde `Serializer` into JavaScript values: a call's typed inputs become the node's
/// `ctx.inputs` with no JSON text and no `serde_json::Value` in between. Numbers that are
/// 32-bit integers are JavaScript integers; map keys are strings, as in JSON.
pub struct Writer<'js> {
    ctx: Ctx<'js>,
}

impl<'js> Writer<'js> {
    pub fn new(ctx: Ctx<'js>) -> Self {
        Writer { ctx }
    }

    fn number(&self, x: f64) -> Value<'js> {
        if x.fract() == 0.0
            && x >= f64::from(i32::MIN)
            && x <= f64::from(i32::MAX)
            && !(x == 0.0 && x.is_sign_negative())
        {
            Value::new_int(self.ctx.clone(), x as i32)
        } else {
            Value::new_float(self.ctx.clone(), x)
        }
    }

    fn string(&self, text: &str) -> Result<Value<'js>, WriteError> {
        Ok(rquickjs::String::from_str(self.ctx.clone(), text)
            .map_err(WriteError::engine)?
            .into_value())
    }

    fn object(&self) -> Result<Object<'js>, WriteError> {
        Object::new(self.ctx.clone()).map_err(WriteError::engine)
    }

    /// `{ variant: value }`, serde's external tagging.
    fn tagged(&self, variant: &str, value: Value<'js>) -> Result<Value<'js>, WriteError> {
        let object = self.object()?;
        object.set(variant, value).map_err(WriteError::engine)?;
        Ok(object.into_value())
    }
}

/// Why a value could not be written (the engine refused an allocation, a key is not text).
#[derive(Debug)]
pub struct WriteError {
    message: String,
    /// The engine ran out of memory (its limit): the call is stopped as for a node that
    /// used too much.
    pub out_of_memory: bool,
}

impl WriteError {
    fn engine(e: rquickjs::Error) -> Self {
        WriteError {
            out_of_memory: matches!(e, rquickjs::Error::Allocation),
            message: e.to_string(),
        }
    }
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WriteError {}

impl serde::ser::Error for WriteError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        WriteError {
            message: msg.to_string(),
            out_of_memory: false,
        }
    }
}

impl<'js> serde::Serializer for Writer<'js> {
    type Ok = Value<'js>;
    type Error = WriteError;
    type SerializeSeq = Elements<'js>;
    type SerializeTuple = Elements<'js>;
    type SerializeTupleStruct = Elements<'js>;
    type SerializeTupleVariant = Elements<'js>;
    type SerializeMap = Entries<'js>;
    type SerializeStruct = Entries<'js>;
    type SerializeStructVariant = Entries<'js>;

    fn serialize_bool(self, v: bool) -> Result<Value<'js>, WriteError> {
        Ok(Value::new_bool(self.ctx, v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value<'js>, WriteError> {
        Ok(Value::new_int(self.ctx, v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value<'js>, WriteError> {
        Ok(Value::new_int(self.ctx, v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value<'js>, WriteError> {
        Ok(Value::new_int(self.ctx, v))
    }
    fn serialize_i64(self, v: i64) -> Result<Value<'js>, WriteError> {
        Ok(self.number(v as f64))
    }
    fn serialize_u8(self, v: u8) -> Result<Value<'js>, WriteError> {
        Ok(Value::new_int(self.ctx, v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value<'js>, WriteError> {
        Ok(Value::new_int(self.ctx, v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value<'js>, WriteError> {
        Ok(self.number(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value<'js>, WriteError> {
        Ok(self.number(v as f64))
    }
    fn serialize_f32(self, v: f32) -> Result<Value<'js>, WriteError> {
        Ok(self.number(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Value<'js>, WriteError> {
        Ok(self.number(v))
    }
    fn serialize_char(self, v: char) -> Result<Value<'js>, WriteError> {
        self.string(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<Value<'js>, WriteError> {
        self.string(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value<'js>, WriteError> {
        let array = Array::new(self.ctx.clone()).map_err(WriteError::engine)?;
        for (i, b) in v.iter().enumerate() {
            array.set(i, i32::from(*b)).map_err(WriteError::engine)?;
        }
        Ok(array.into_value())
    }
    fn serialize_none(self) -> Result<Value<'js>, WriteError> {
        Ok(Value::new_null(self.ctx))
    }
    fn serialize_some<T: serde::Serialize + ?Sized>(self, value: &T) -> Result<Value<'js>, WriteError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value<'js>, WriteError> {
        Ok(Value::new_null(self.ctx))
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value<'js>, WriteError> {
        Ok(Value::new_null(self.ctx))
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value<'js>, WriteError> {
        self.string(variant)
    }
    fn serialize_newtype_struct<T: serde::Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value<'js>, WriteError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: serde::Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value<'js>, WriteError> {
        let inner = value.serialize(Writer::new(self.ctx.clone()))?;
        self.tagged(variant, inner)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Elements<'js>, WriteError> {
        Ok(Elements {
            array: Array::new(self.ctx.clone()).map_err(WriteError::engine)?,
            next: 0,
            variant: None,
            ctx: self.ctx,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Elements<'js>, WriteError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Elements<'js>, WriteError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Elements<'js>, WriteError> {
        let mut elements = self.serialize_seq(Some(len))?;
        elements.variant = Some(variant);
        Ok(elements)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Entries<'js>, WriteError> {
        Ok(Entries {
            object: self.object()?,
            key: None,
            variant: None,
            ctx: self.ctx,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Entries<'js>, WriteError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Entries<'js>, WriteError> {
        let mut entries = self.serialize_map(Some(len))?;
        entries.variant = Some(variant);
        Ok(entries)
    }
}

/// An array being written (and, for a tuple variant, the variant that wraps it).
pub struct Elements<'js> {
    ctx: Ctx<'js>,
    array: Array<'js>,
    next: usize,
    variant: Option<&'static str>,
}

impl<'js> Elements<'js> {
    fn push<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), WriteError> {
        let value = value.serialize(Writer::new(self.ctx.clone()))?;
        self.array.set(self.next, value).map_err(WriteError::engine)?;
        self.next += 1;
        Ok(())
    }

    fn finish(self) -> Result<Value<'js>, WriteError> {
        let array = self.array.into_value();
        match self.variant {
            Some(variant) => Writer::new(self.ctx).tagged(variant, array),
            None => Ok(array),
        }
    }
}

/// The four ways serde writes an array (a sequence, a tuple, a tuple struct, a tuple
/// variant) are one here.
macro_rules! elements {
    ($($trait:ident::$method:ident),*) => {$(
        impl<'js> serde::ser::$trait for Elements<'js> {
            type Ok = Value<'js>;
            type Error = WriteError;
            fn $method<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), WriteError> {
                self.push(value)
            }
            fn end(self) -> Result<Value<'js>, WriteError> {
                self.finish()
            }
        }
    )*};
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// An object being written (and, for a struct variant, the variant that wraps it).
pub struct Entries<'js> {
    ctx: Ctx<'js>,
    object: Object<'js>,
    key: Option<String>,
    variant: Option<&'static str>,
}

impl<'js> Entries<'js> {
    fn set<T: serde::Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), WriteError> {
        let value = value.serialize(Writer::new(self.ctx.clone()))?;
        self.object.set(key, value).map_err(WriteError::engine)
    }

    fn finish(self) -> Result<Value<'js>, WriteError> {
        let object = self.object.into_value();
        match self.variant {
            Some(variant) => Writer::new(self.ctx).tagged(variant, object),
            None => Ok(object),
        }
    }
}

impl<'js> serde::ser::SerializeMap for Entries<'js> {
    type Ok = Value<'js>;
    type Error = WriteError;
    fn serialize_key<T: serde::Serialize + ?Sized>(&mut self, key: &T) -> Result<(), WriteError> {
        // Keys are text in JSON: strings as they are, numbers and booleans written out.
        let key = match serde_json::to_value(key).map_err(<WriteError as serde::ser::Error>::custom)? {
            serde_json::Value::String(s) => s,
            other @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_)) => other.to_string(),
            _ => return Err(serde::ser::Error::custom("a map key must be text")),
        };
        self.key = Some(key);
        Ok(())
    }
    fn serialize_value<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), WriteError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| <WriteError as serde::ser::Error>::custom("a value without its key"))?;
        self.set(&key, value)
    }
    fn end(self) -> Result<Value<'js>, WriteError> {
        self.finish()
    }
}

/// A struct and a struct variant are written alike.
macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl<'js> serde::ser::$trait for Entries<'js> {
            type Ok = Value<'js>;
            type Error = WriteError;
            fn serialize_field<T: serde::Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), WriteError> {
                self.set(key, value)
            }
            fn end(self) -> Result<Value<'js>, WriteError> {
                self.finish()
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);
