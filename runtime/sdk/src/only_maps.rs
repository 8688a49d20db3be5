//! Structures are JSON objects, at every depth.
//!
//! serde's derived `Deserialize` for a struct also accepts a sequence of its fields in
//! order (`["a", 1, "red"]` for `{sku, quantity, color}`), and `serde_json` hands a JSON
//! array to that path. For svc a structure is an object: the generated types derive
//! their deserializer under `#[serde(remote = "Self")]` and call it through
//! [`OnlyMaps`], which hands the one request that allows both shapes,
//! `deserialize_struct`, a visitor that takes only a map (an object). The request stays
//! `deserialize_struct`, with the field names: a format that can use them (the engine of
//! TypeScript nodes matches keys to them without making text) still gets them. Nested
//! structures go through their own `Deserialize` impl, so the rule holds at every depth;
//! everything else is forwarded untouched, so this costs nothing at run time.

use serde::de::{Deserializer, MapAccess, Visitor};
use std::fmt;

/// A deserializer that reads structs only from maps (JSON objects).
pub struct OnlyMaps<D>(pub D);

macro_rules! forward {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.0.$method(visitor)
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for OnlyMaps<D> {
    type Error = D::Error;

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, MapsOnly(visitor))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A struct's visitor without its sequence form: a sequence is refused as any other
/// type the visitor does not take ("invalid type: sequence, expected struct …").
struct MapsOnly<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for MapsOnly<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(map)
    }
}

/// Implements `Serialize` and `Deserialize` for a struct whose derives ran under
/// `#[serde(remote = "Self")]` (which makes them inherent functions), deserializing it
/// through [`OnlyMaps`]. Used by svc's generated code; `$serde` is the path of serde.
#[doc(hidden)]
#[macro_export]
macro_rules! __object_serde {
    ($ty:ident, $serde:path) => {
        const _: () = {
            use $serde as __serde;
            impl __serde::Serialize for $ty {
                fn serialize<S: __serde::Serializer>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error> {
                    $ty::serialize(self, serializer)
                }
            }
            impl<'de> __serde::Deserialize<'de> for $ty {
                fn deserialize<D: __serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> ::core::result::Result<Self, D::Error> {
                    $ty::deserialize($crate::__private::OnlyMaps(deserializer))
                }
            }
        };
    };
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self", deny_unknown_fields)]
    struct Line {
        sku: String,
        quantity: f64,
    }
    crate::__object_serde!(Line, serde);

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self", deny_unknown_fields)]
    struct Order {
        lines: Vec<Line>,
        first: Option<Box<Line>>,
    }
    crate::__object_serde!(Order, serde);

    #[test]
    fn objects_pass_and_arrays_are_refused_at_every_depth() {
        let ok: Order =
            serde_json::from_str(r#"{"lines":[{"sku":"a","quantity":1}],"first":{"sku":"b","quantity":2}}"#).unwrap();
        assert_eq!(ok.lines[0].sku, "a");
        assert_eq!(
            serde_json::to_string(&ok.lines[0]).unwrap(),
            r#"{"sku":"a","quantity":1.0}"#
        );
        for bad in [
            r#"[[{"sku":"a","quantity":1}], null]"#,
            r#"{"lines":[["a", 1]],"first":null}"#,
            r#"{"lines":[],"first":["b", 2]}"#,
        ] {
            let e = serde_json::from_str::<Order>(bad).unwrap_err().to_string();
            assert!(e.contains("invalid type: sequence"), "{bad}: {e}");
        }
    }
}
