//! Type strings, as the spec writes them.
//!
//! | Form                 | Meaning                                  |
//! |----------------------|------------------------------------------|
//! | `string`             | a JSON string                            |
//! | `number`             | a JSON number (an `f64`)                 |
//! | `boolean`            | `true` or `false`                        |
//! | `any`                | any JSON value                           |
//! | `object`             | any JSON object                          |
//! | `object:<Name>`      | an object of the structure `<Name>`      |
//! | `enum-value:<Name>`  | one of the values of the enum `<Name>`   |
//! | `<inner>:array`      | an array of `<inner>` (structure fields) |
//!
//! Pins built with `t::array(inner)` report the spec's pin type string `type:array`;
//! the element type is kept beside it (see [`TypeRef::pin_type_string`]).

use std::fmt;

/// A parsed type string. Arrays keep their element type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeRef {
    String,
    Number,
    Boolean,
    Any,
    /// A generic JSON object.
    Object,
    /// `object:<Name>`: an instance of a structure.
    Structure(String),
    /// `enum-value:<Name>`: a value of an enum.
    Enum(String),
    /// `<inner>:array`.
    Array(Box<TypeRef>),
}

/// Why a type string could not be parsed.
pub type TypeParseError = crate::Invalid;

/// Every scalar type name, for hints.
pub const SCALAR_TYPE_NAMES: &[&str] = &["string", "number", "boolean", "any", "object"];

impl TypeRef {
    /// Parses a raw type string such as `string`, `object:Order`, `enum-value:Color`,
    /// `string:array` or `object:OrderLine:array`.
    pub fn parse(raw: &str) -> Result<TypeRef, TypeParseError> {
        let raw = raw.trim();
        if let Some(inner) = raw.strip_suffix(":array") {
            if inner == "type" {
                return Err(TypeParseError {
                    message: "`type:array` does not say what the array holds".into(),
                    hint: "write the element type before `:array`, for example `string:array` or `object:Order:array`"
                        .into(),
                });
            }
            return Ok(TypeRef::Array(Box::new(TypeRef::parse(inner)?)));
        }
        match raw {
            "string" => return Ok(TypeRef::String),
            "number" => return Ok(TypeRef::Number),
            "boolean" => return Ok(TypeRef::Boolean),
            "any" => return Ok(TypeRef::Any),
            "object" => return Ok(TypeRef::Object),
            _ => {}
        }
        type Named = fn(String) -> TypeRef;
        let named: [(&str, &str, Named); 2] = [
            ("object:", "structure", TypeRef::Structure),
            ("enum-value:", "enum", TypeRef::Enum),
        ];
        for (prefix, kind, named_type) in named {
            if let Some(name) = raw.strip_prefix(prefix) {
                crate::names::check_asset_name(name).map_err(|e| TypeParseError {
                    message: format!("invalid {kind} name in `{raw}`: {}", e.message),
                    hint: e.hint,
                })?;
                return Ok(named_type(name.to_string()));
            }
        }
        let hint = match raw {
            "str" | "text" => "did you mean `string`?".to_string(),
            "int" | "integer" | "float" | "f64" | "i64" | "u32" => "did you mean `number`?".into(),
            "bool" => "did you mean `boolean`?".into(),
            "array" | "list" => "arrays are written `<element>:array`, for example `string:array`".into(),
            _ if raw.starts_with("enum:") => {
                format!("enum types are written `enum-value:{}`", &raw["enum:".len()..])
            }
            _ if raw.starts_with("struct:") || raw.starts_with("structure:") => {
                let name = raw.split_once(':').map(|x| x.1).unwrap_or_default();
                format!("structure types are written `object:{name}`")
            }
            _ => format!(
                "a type is one of {}, `object:<Structure>`, `enum-value:<Enum>` or `<type>:array`",
                crate::assets::listed(SCALAR_TYPE_NAMES)
            ),
        };
        Err(TypeParseError {
            message: format!("unknown type `{raw}`"),
            hint,
        })
    }

    /// The raw type string, as used in structure fields: arrays as `<inner>:array`.
    pub fn raw(&self) -> String {
        self.to_string()
    }

    /// The spec's pin type string: arrays report `type:array` (their element type is
    /// carried separately in manifests as `items`).
    pub fn pin_type_string(&self) -> String {
        match self {
            TypeRef::Array(_) => "type:array".to_string(),
            other => other.to_string(),
        }
    }

    /// The element type of an array.
    pub fn element(&self) -> Option<&TypeRef> {
        match self {
            TypeRef::Array(inner) => Some(inner),
            _ => None,
        }
    }

    /// Every asset name (structure or enum) this type mentions, innermost last.
    pub fn referenced_asset(&self) -> Option<AssetRef<'_>> {
        match self {
            TypeRef::Structure(name) => Some(AssetRef::Structure(name)),
            TypeRef::Enum(name) => Some(AssetRef::Enum(name)),
            TypeRef::Array(inner) => inner.referenced_asset(),
            _ => None,
        }
    }
}

/// A reference from a type to a named asset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssetRef<'a> {
    Structure(&'a str),
    Enum(&'a str),
}

impl fmt::Display for TypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeRef::String => f.write_str("string"),
            TypeRef::Number => f.write_str("number"),
            TypeRef::Boolean => f.write_str("boolean"),
            TypeRef::Any => f.write_str("any"),
            TypeRef::Object => f.write_str("object"),
            TypeRef::Structure(name) => write!(f, "object:{name}"),
            TypeRef::Enum(name) => write!(f, "enum-value:{name}"),
            TypeRef::Array(inner) => write!(f, "{inner}:array"),
        }
    }
}

/// "a" or "an" before a type string as written in messages (`an enum-value:Tone pin`,
/// `an object:Order pin`, `a number pin`).
pub fn article(type_string: &str) -> &'static str {
    match type_string.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!(TypeRef::parse("string").unwrap(), TypeRef::String);
        assert_eq!(TypeRef::parse("number").unwrap(), TypeRef::Number);
        assert_eq!(TypeRef::parse("boolean").unwrap(), TypeRef::Boolean);
        assert_eq!(TypeRef::parse("any").unwrap(), TypeRef::Any);
        assert_eq!(TypeRef::parse("object").unwrap(), TypeRef::Object);
        assert_eq!(
            TypeRef::parse("object:Order").unwrap(),
            TypeRef::Structure("Order".into())
        );
        assert_eq!(
            TypeRef::parse("enum-value:Color").unwrap(),
            TypeRef::Enum("Color".into())
        );
        assert_eq!(
            TypeRef::parse("object:Line:array:array").unwrap(),
            TypeRef::Array(Box::new(TypeRef::Array(Box::new(TypeRef::Structure("Line".into())))))
        );
    }

    #[test]
    fn round_trips_through_display() {
        for raw in [
            "string",
            "string:array",
            "object:Order:array",
            "enum-value:Color:array",
            "any",
        ] {
            assert_eq!(TypeRef::parse(raw).unwrap().raw(), raw);
        }
    }

    #[test]
    fn arrays_report_the_spec_pin_type_string() {
        let t = TypeRef::parse("object:Order:array").unwrap();
        assert_eq!(t.pin_type_string(), "type:array");
        assert_eq!(t.element(), Some(&TypeRef::Structure("Order".into())));
    }

    #[test]
    fn rejects_with_hints() {
        let e = TypeRef::parse("int").unwrap_err();
        assert!(e.hint.contains("number"), "{e:?}");
        let e = TypeRef::parse("enum:Color").unwrap_err();
        assert!(e.hint.contains("enum-value:Color"), "{e:?}");
        let e = TypeRef::parse("type:array").unwrap_err();
        assert!(e.message.contains("does not say"), "{e:?}");
        assert!(TypeRef::parse("object:order").is_err());
        assert!(TypeRef::parse("object:").is_err());
    }
}
