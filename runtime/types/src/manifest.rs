//! Pins and node manifests (spec §2.2–2.5): the publishable shape of a code node,
//! without its `run` function.
//!
//! Serialized in the spec's camelCase JSON shape:
//!
//! ```json
//! { "nodeKey": "acme.price-order", "name": "Price order", "category": "code-function",
//!   "inputs":  { "order": { "type": "object:Order" },
//!                "lines": { "type": "type:array", "items": { "type": "object:Line" } },
//!                "exec":  { "type": "sequence", "portOnly": true } },
//!   "outputs": { "total": { "type": "number", "description": "in cents" } } }
//! ```

use crate::constraints::Constraints;
use crate::type_ref::TypeRef;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What flows through a pin: data of a type, or execution order (a sequence pin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinKind {
    Data(TypeRef),
    Sequence,
}

/// The pin type string used for sequence pins in manifests.
pub const SEQUENCE_TYPE: &str = "sequence";

/// One input or output pin.
#[derive(Debug, Clone, PartialEq)]
pub struct PinDefinition {
    pub kind: PinKind,
    pub optional: bool,
    pub description: Option<String>,
    pub default: Option<serde_json::Value>,
    /// Connect-only: no inline value entry (sequence pins are port-only by default).
    pub port_only: bool,
    /// Re-enables inline value entry on a port-only pin.
    pub allow_inline_value: bool,
    /// What a valid value is beyond its type (`t.number().minimum(1)`), as on a
    /// structure field: on an array pin the array keywords hold the array and the others
    /// each item.
    pub constraints: Constraints,
}

impl PinDefinition {
    /// A required data pin of the given type with no modifiers.
    pub fn data(type_ref: TypeRef) -> Self {
        PinDefinition {
            kind: PinKind::Data(type_ref),
            optional: false,
            description: None,
            default: None,
            port_only: false,
            allow_inline_value: false,
            constraints: Constraints::default(),
        }
    }

    /// A sequence pin: port-only by default (spec §2.5).
    pub fn sequence() -> Self {
        PinDefinition {
            kind: PinKind::Sequence,
            optional: false,
            description: None,
            default: None,
            port_only: true,
            allow_inline_value: false,
            constraints: Constraints::default(),
        }
    }

    /// The data type, or `None` for a sequence pin.
    pub fn type_ref(&self) -> Option<&TypeRef> {
        match &self.kind {
            PinKind::Data(t) => Some(t),
            PinKind::Sequence => None,
        }
    }

    /// Whether any modifier is set (meaningless on an array's element).
    pub fn has_modifiers(&self) -> bool {
        self.optional
            || self.default.is_some()
            || self.port_only
            || self.allow_inline_value
            || self.description.is_some()
            || !self.constraints.is_empty()
    }

    pub fn is_sequence(&self) -> bool {
        matches!(self.kind, PinKind::Sequence)
    }

    /// Whether a flow may give this pin an inline literal instead of a wire.
    pub fn accepts_inline_value(&self) -> bool {
        !self.is_sequence() && (!self.port_only || self.allow_inline_value)
    }

    /// Whether a flow must wire (or give a value to) this input.
    pub fn is_required_input(&self) -> bool {
        !self.is_sequence() && !self.optional && self.default.is_none()
    }
}

/// Pins in declaration order (the Builder shows them in this order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PinMap(pub Vec<(String, PinDefinition)>);

impl PinMap {
    pub fn get(&self, id: &str) -> Option<&PinDefinition> {
        self.0.iter().find(|(k, _)| k == id).map(|(_, p)| p)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &PinDefinition)> {
        self.0.iter().map(|(k, p)| (k.as_str(), p))
    }

    /// Data pins only (sequence pins carry no values).
    pub fn data(&self) -> impl Iterator<Item = (&str, &PinDefinition, &TypeRef)> {
        self.0
            .iter()
            .filter_map(|(k, p)| p.type_ref().map(|t| (k.as_str(), p, t)))
    }

    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The publishable manifest of a code node (`build_manifest_from_node`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeManifest {
    pub node_key: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default = "default_category")]
    pub category: String,
    #[serde(default)]
    pub inputs: PinMap,
    #[serde(default)]
    pub outputs: PinMap,
}

/// The category of a node that does not set one.
pub const DEFAULT_CATEGORY: &str = "code-function";

fn default_category() -> String {
    DEFAULT_CATEGORY.to_string()
}

// --- serialization -------------------------------------------------------------------

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PinWire {
    #[serde(rename = "type")]
    type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    items: Option<Box<ItemsWire>>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    optional: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    default: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    port_only: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    allow_inline_value: bool,
    #[serde(flatten)]
    constraints: Constraints,
}

/// The element type of an array pin: `{ "type": ..., "items": ... }`.
#[derive(Serialize, Deserialize)]
struct ItemsWire {
    #[serde(rename = "type")]
    type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    items: Option<Box<ItemsWire>>,
}

fn items_of(t: &TypeRef) -> Option<Box<ItemsWire>> {
    t.element().map(|inner| {
        Box::new(ItemsWire {
            type_: inner.pin_type_string(),
            items: items_of(inner),
        })
    })
}

fn type_from_wire(type_: &str, items: Option<&ItemsWire>) -> Result<TypeRef, String> {
    if type_ == "type:array" {
        let items = items.ok_or("an array pin needs `items`")?;
        let inner = type_from_wire(&items.type_, items.items.as_deref())?;
        return Ok(TypeRef::Array(Box::new(inner)));
    }
    TypeRef::parse(type_).map_err(|e| e.message)
}

impl Serialize for PinDefinition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (type_, items) = match &self.kind {
            PinKind::Data(t) => (t.pin_type_string(), items_of(t)),
            PinKind::Sequence => (SEQUENCE_TYPE.to_string(), None),
        };
        PinWire {
            type_,
            items,
            optional: self.optional,
            description: self.description.clone(),
            default: self.default.clone(),
            port_only: self.port_only,
            allow_inline_value: self.allow_inline_value,
            constraints: self.constraints.clone(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for PinDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = PinWire::deserialize(d)?;
        let kind = if w.type_ == SEQUENCE_TYPE {
            PinKind::Sequence
        } else {
            PinKind::Data(type_from_wire(&w.type_, w.items.as_deref()).map_err(D::Error::custom)?)
        };
        Ok(PinDefinition {
            kind,
            optional: w.optional,
            description: w.description,
            default: w.default,
            port_only: w.port_only,
            allow_inline_value: w.allow_inline_value,
            constraints: w.constraints,
        })
    }
}

impl Serialize for PinMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for PinMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = PinMap;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of pin id to pin definition")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<PinMap, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, PinDefinition>()? {
                    out.push((k, v));
                }
                Ok(PinMap(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn manifest_round_trips_in_the_spec_shape() {
        let mut total = PinDefinition::data(TypeRef::Number);
        total.description = Some("in cents".into());
        let manifest = NodeManifest {
            node_key: "acme.price-order".into(),
            name: "Price order".into(),
            description: None,
            category: DEFAULT_CATEGORY.into(),
            inputs: PinMap(vec![
                ("order".into(), PinDefinition::data(TypeRef::Structure("Order".into()))),
                (
                    "lines".into(),
                    PinDefinition::data(TypeRef::Array(Box::new(TypeRef::Structure("Line".into())))),
                ),
                ("exec".into(), PinDefinition::sequence()),
            ]),
            outputs: PinMap(vec![("total".into(), total)]),
        };
        let value = serde_json::to_value(&manifest).unwrap();
        assert_eq!(
            value,
            json!({
                "nodeKey": "acme.price-order", "name": "Price order", "category": "code-function",
                "inputs": {
                    "order": {"type": "object:Order"},
                    "lines": {"type": "type:array", "items": {"type": "object:Line"}},
                    "exec": {"type": "sequence", "portOnly": true}
                },
                "outputs": {"total": {"type": "number", "description": "in cents"}}
            })
        );
        // Declaration order is kept.
        let text = serde_json::to_string(&manifest).unwrap();
        assert!(text.find("\"order\"").unwrap() < text.find("\"lines\"").unwrap());
        let back: NodeManifest = serde_json::from_str(&text).unwrap();
        assert_eq!(back, manifest);
    }

    #[test]
    fn inline_values_follow_port_only_and_allow_inline_value() {
        let mut p = PinDefinition::data(TypeRef::String);
        assert!(p.accepts_inline_value());
        p.port_only = true;
        assert!(!p.accepts_inline_value());
        p.allow_inline_value = true;
        assert!(p.accepts_inline_value());
        assert!(!PinDefinition::sequence().accepts_inline_value());
    }

    #[test]
    fn required_inputs() {
        let mut p = PinDefinition::data(TypeRef::String);
        assert!(p.is_required_input());
        p.default = Some(json!("x"));
        assert!(!p.is_required_input());
        assert!(!PinDefinition::sequence().is_required_input());
    }
}
