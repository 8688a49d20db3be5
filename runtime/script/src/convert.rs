//! Values across the boundary without JSON text: a node's inputs (and `ctx.request`,
//! `ctx.env`) are serialized straight into JavaScript values ([`Writer`]), and what `run`
//! returns is deserialized straight into the typed outputs ([`Reader`]), which checks it
//! against the pins. QuickJS's `JSON.parse` and `JSON.stringify` were most of a call's
//! cost (bench/typescript.py, `examples/call_cost.rs` under callgrind).
//!
//! Field names cross as atoms made once per runtime, objects are read through their own
//! keys and written with own data properties, and arrays are made whole (raw.rs).
//!
//! Reading follows `JSON.stringify`: `toJSON` is called (a `Date` becomes its ISO text),
//! `undefined`, functions and symbols are left out of objects and are `null` in arrays,
//! numbers that are not finite are `null`, and a cycle or a `BigInt` is an error.

use crate::raw::{self, Atom, Atoms, OwnKeys};
use rquickjs::{CaughtError, Ctx, Object, Value, qjs};
use std::rc::Rc;

/// Deeper than this is refused, as a cycle would be.
const MAX_DEPTH: usize = 256;

/// What a value is, for reading: from its tag, with the two object checks only when it is
/// an object (rquickjs's `type_of` asks six questions of every object).
enum Kind {
    /// `undefined`, a symbol, a function: left out of an object, `null` in an array.
    LeftOut,
    Null,
    Bool,
    Int,
    Float,
    String,
    BigInt,
    Array,
    Object,
}

fn kind(value: &Value) -> Kind {
    match raw::tag(value) {
        qjs::JS_TAG_NULL => Kind::Null,
        qjs::JS_TAG_BOOL => Kind::Bool,
        qjs::JS_TAG_INT => Kind::Int,
        qjs::JS_TAG_FLOAT64 => Kind::Float,
        qjs::JS_TAG_STRING | qjs::JS_TAG_STRING_ROPE => Kind::String,
        qjs::JS_TAG_BIG_INT | qjs::JS_TAG_SHORT_BIG_INT => Kind::BigInt,
        qjs::JS_TAG_OBJECT if value.is_function() => Kind::LeftOut,
        qjs::JS_TAG_OBJECT if value.is_array() => Kind::Array,
        qjs::JS_TAG_OBJECT => Kind::Object,
        _ => Kind::LeftOut,
    }
}

/// A serde `Deserializer` over a JavaScript value, with `JSON.stringify`'s rules: the
/// outputs of a call read straight into the typed `Outputs`, with no JSON text and no
/// `serde_json::Value` in between.
pub struct Reader<'a, 'js> {
    value: Value<'js>,
    depth: usize,
    atoms: &'a Atoms,
}

impl<'a, 'js> Reader<'a, 'js> {
    pub fn new(value: Value<'js>, atoms: &'a Atoms) -> Self {
        Reader { value, depth: 0, atoms }
    }

    fn ctx(&self) -> &Ctx<'js> {
        self.value.ctx()
    }

    fn child(&self, value: Value<'js>) -> Result<Self, ReadError> {
        if self.depth >= MAX_DEPTH {
            return Err(ReadError("the value is nested too deeply (or is circular)".into()));
        }
        Ok(Reader {
            value,
            depth: self.depth + 1,
            atoms: self.atoms,
        })
    }

    /// An engine error while reading: the exception a getter or `toJSON` threw, if that
    /// is what it was.
    fn engine(&self, e: rquickjs::Error) -> ReadError {
        ReadError(CaughtError::from_error(self.ctx(), e).to_string())
    }

    /// The value `toJSON` gives, when the object has one.
    fn to_json(&self, object: &Object<'js>) -> Result<Option<Value<'js>>, ReadError> {
        let name = self.atoms.name(self.ctx(), "toJSON").map_err(|e| self.engine(e))?;
        let to_json = raw::get(self.ctx(), object, name).map_err(|e| self.engine(e))?;
        match to_json.into_function() {
            Some(to_json) => to_json
                .call((rquickjs::function::This(object.clone()),))
                .map(Some)
                .map_err(|e| ReadError(format!("toJSON failed: {}", CaughtError::from_error(self.ctx(), e)))),
            None => Ok(None),
        }
    }

    /// Reads the value, or the object its `toJSON` gives; `fields` are the names of the
    /// struct it is read into, when serde knows them.
    fn read<'de, V: serde::de::Visitor<'de>>(
        self,
        fields: Option<&'static [&'static str]>,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match kind(&self.value) {
            Kind::LeftOut | Kind::Null => visitor.visit_unit(),
            Kind::Bool => visitor.visit_bool(self.value.as_bool().unwrap_or(false)),
            Kind::Int => visitor.visit_i64(i64::from(self.value.as_int().unwrap_or(0))),
            Kind::Float => {
                let x = self.value.as_float().unwrap_or(f64::NAN);
                if !x.is_finite() {
                    visitor.visit_unit()
                } else if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
                    visitor.visit_i64(x as i64)
                } else {
                    visitor.visit_f64(x)
                }
            }
            Kind::String => {
                let text: String = self.value.get().map_err(|e| self.engine(e))?;
                visitor.visit_string(text)
            }
            Kind::BigInt => Err(ReadError("a BigInt cannot be written as JSON".into())),
            Kind::Array => {
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
            Kind::Object => {
                let object = self
                    .value
                    .as_object()
                    .cloned()
                    .ok_or_else(|| ReadError("not an object".into()))?;
                if let Some(converted) = self.to_json(&object)? {
                    return self.child(converted)?.read(fields, visitor);
                }
                let known = match fields {
                    Some(names) => Some((self.atoms.names(self.ctx(), names).map_err(|e| self.engine(e))?, names)),
                    None => None,
                };
                let keys = OwnKeys::of(self.ctx(), &object).map_err(|e| self.engine(e))?;
                visitor.visit_map(Fields {
                    reader: &self,
                    object,
                    keys,
                    next: 0,
                    known,
                    value: None,
                })
            }
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

impl<'de> serde::Deserializer<'de> for Reader<'_, '_> {
    type Error = ReadError;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.read(None, visitor)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.read(Some(fields), visitor)
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match kind(&self.value) {
            Kind::LeftOut | Kind::Null => visitor.visit_none(),
            Kind::Float if !self.value.as_float().unwrap_or(f64::NAN).is_finite() => visitor.visit_none(),
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
        match kind(&self.value) {
            Kind::String => {
                let text: String = self.value.get().map_err(|e| self.engine(e))?;
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
        tuple_struct map identifier ignored_any
    }
}

struct Items<'r, 'a, 'js> {
    reader: &'r Reader<'a, 'js>,
    array: rquickjs::Array<'js>,
    len: usize,
    next: usize,
}

impl<'de> serde::de::SeqAccess<'de> for Items<'_, '_, '_> {
    type Error = ReadError;

    fn next_element_seed<T: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ReadError> {
        if self.next >= self.len {
            return Ok(None);
        }
        let item: Value = self.array.get(self.next).map_err(|e| self.reader.engine(e))?;
        self.next += 1;
        // In an array, what JSON leaves out of an object is `null`.
        let item = if matches!(kind(&item), Kind::LeftOut) {
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

/// An object's fields, in property order. A key that is one of the struct's field names
/// (compared as atoms) goes to serde as that name, with no text made; any other key as
/// its text (which a struct that denies unknown fields then refuses).
struct Fields<'r, 'a, 'js> {
    reader: &'r Reader<'a, 'js>,
    object: Object<'js>,
    keys: OwnKeys<'js>,
    next: usize,
    known: Option<(Rc<[Atom]>, &'static [&'static str])>,
    value: Option<Value<'js>>,
}

impl<'de> serde::de::MapAccess<'de> for Fields<'_, '_, '_> {
    type Error = ReadError;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, ReadError> {
        let ctx = self.reader.ctx();
        while self.next < self.keys.len() {
            let atom = self.keys.atom(self.next);
            self.next += 1;
            let value = raw::get(ctx, &self.object, atom).map_err(|e| self.reader.engine(e))?;
            if matches!(kind(&value), Kind::LeftOut) {
                continue;
            }
            self.value = Some(value);
            let field = self
                .known
                .as_ref()
                .and_then(|(atoms, names)| atoms.iter().position(|a| *a == atom).map(|i| names[i]));
            return match field {
                Some(name) => seed.deserialize(serde::de::value::BorrowedStrDeserializer::<ReadError>::new(name)),
                None => {
                    let text = raw::atom_text(ctx, atom).map_err(|e| self.reader.engine(e))?;
                    seed.deserialize(serde::de::IntoDeserializer::<ReadError>::into_deserializer(text))
                }
            }
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
pub struct Writer<'a, 'js> {
    ctx: Ctx<'js>,
    atoms: &'a Atoms,
}

impl<'a, 'js> Writer<'a, 'js> {
    pub fn new(ctx: Ctx<'js>, atoms: &'a Atoms) -> Self {
        Writer { ctx, atoms }
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

    /// The writer of a part of the value.
    fn part(&self) -> Writer<'a, 'js> {
        Writer {
            ctx: self.ctx.clone(),
            atoms: self.atoms,
        }
    }

    /// `{ variant: value }`, serde's external tagging.
    fn tagged(&self, variant: &'static str, value: Value<'js>) -> Result<Value<'js>, WriteError> {
        let object = self.object()?;
        let key = self.atoms.name(&self.ctx, variant).map_err(WriteError::engine)?;
        raw::define(&self.ctx, &object, key, value).map_err(WriteError::engine)?;
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

impl<'a, 'js> serde::Serializer for Writer<'a, 'js> {
    type Ok = Value<'js>;
    type Error = WriteError;
    type SerializeSeq = Elements<'a, 'js>;
    type SerializeTuple = Elements<'a, 'js>;
    type SerializeTupleStruct = Elements<'a, 'js>;
    type SerializeTupleVariant = Elements<'a, 'js>;
    type SerializeMap = Entries<'a, 'js>;
    type SerializeStruct = Entries<'a, 'js>;
    type SerializeStructVariant = Entries<'a, 'js>;

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
        let bytes = v
            .iter()
            .map(|b| Value::new_int(self.ctx.clone(), i32::from(*b)))
            .collect();
        Ok(raw::array(&self.ctx, bytes).map_err(WriteError::engine)?.into_value())
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
        let inner = value.serialize(self.part())?;
        self.tagged(variant, inner)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Elements<'a, 'js>, WriteError> {
        Ok(Elements {
            values: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            variant: None,
            writer: self,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Elements<'a, 'js>, WriteError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Elements<'a, 'js>, WriteError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Elements<'a, 'js>, WriteError> {
        let mut elements = self.serialize_seq(Some(len))?;
        elements.variant = Some(variant);
        Ok(elements)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Entries<'a, 'js>, WriteError> {
        Ok(Entries {
            object: self.object()?,
            key: None,
            variant: None,
            writer: self,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Entries<'a, 'js>, WriteError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Entries<'a, 'js>, WriteError> {
        let mut entries = self.serialize_map(Some(len))?;
        entries.variant = Some(variant);
        Ok(entries)
    }
}

/// An array being written (and, for a tuple variant, the variant that wraps it): its
/// values are collected and the array made at its full length.
pub struct Elements<'a, 'js> {
    writer: Writer<'a, 'js>,
    values: Vec<Value<'js>>,
    variant: Option<&'static str>,
}

impl<'js> Elements<'_, 'js> {
    fn push<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), WriteError> {
        self.values.push(value.serialize(self.writer.part())?);
        Ok(())
    }

    fn finish(self) -> Result<Value<'js>, WriteError> {
        let array = raw::array(&self.writer.ctx, self.values)
            .map_err(WriteError::engine)?
            .into_value();
        match self.variant {
            Some(variant) => self.writer.tagged(variant, array),
            None => Ok(array),
        }
    }
}

/// The four ways serde writes an array (a sequence, a tuple, a tuple struct, a tuple
/// variant) are one here.
macro_rules! elements {
    ($($trait:ident::$method:ident),*) => {$(
        impl<'js> serde::ser::$trait for Elements<'_, 'js> {
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
pub struct Entries<'a, 'js> {
    writer: Writer<'a, 'js>,
    object: Object<'js>,
    key: Option<String>,
    variant: Option<&'static str>,
}

impl<'js> Entries<'_, 'js> {
    /// A struct's field: its name is an atom made once per runtime.
    fn field<T: serde::Serialize + ?Sized>(&mut self, name: &'static str, value: &T) -> Result<(), WriteError> {
        let value = value.serialize(self.writer.part())?;
        let key = self
            .writer
            .atoms
            .name(&self.writer.ctx, name)
            .map_err(WriteError::engine)?;
        raw::define(&self.writer.ctx, &self.object, key, value).map_err(WriteError::engine)
    }

    fn finish(self) -> Result<Value<'js>, WriteError> {
        let object = self.object.into_value();
        match self.variant {
            Some(variant) => self.writer.tagged(variant, object),
            None => Ok(object),
        }
    }
}

impl<'js> serde::ser::SerializeMap for Entries<'_, 'js> {
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
        let value = value.serialize(self.writer.part())?;
        raw::define_named(&self.writer.ctx, &self.object, &key, value).map_err(WriteError::engine)
    }
    fn end(self) -> Result<Value<'js>, WriteError> {
        self.finish()
    }
}

/// A struct and a struct variant are written alike.
macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl<'js> serde::ser::$trait for Entries<'_, 'js> {
            type Ok = Value<'js>;
            type Error = WriteError;
            fn serialize_field<T: serde::Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), WriteError> {
                self.field(key, value)
            }
            fn end(self) -> Result<Value<'js>, WriteError> {
                self.finish()
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);
