//! Named assets (spec §2.7): `define_enum`, `define_structure`, `define_secret`,
//! `collect_assets`.
//!
//! A project's assets live in `svc.config.yaml` (the compiler reads them there, and
//! `svc_sdk::include_assets!()` turns them into Rust types). These helpers build the
//! same values in code, for tooling, tests and custom build scripts:
//!
//! ```
//! use svc_sdk::prelude::*;
//! let assets = collect_assets([
//!     define_enum("Currency").values(["EUR", "USD"]).into(),
//!     define_structure("Order")
//!         .field(field("id", "string").required())
//!         .field(field("currency", "enum-value:Currency"))
//!         .into(),
//!     define_secret("STRIPE_API_KEY").description("Charges cards").into(),
//! ]);
//! assert_eq!(assets.enums.len(), 1);
//! assert!(assets.validate().is_empty());
//! ```

use svc_types::{Asset, Assets, EnumDefinition, FieldDefinition, SecretDefinition, StructureDefinition};

/// Starts an enum definition: `define_enum("Currency").values(["EUR", "USD"])`.
pub fn define_enum(name: &str) -> EnumDefinition {
    EnumDefinition::new(name)
}

/// Starts a structure definition: `define_structure("Order").field(field("id", "string").required())`.
pub fn define_structure(name: &str) -> StructureDefinition {
    StructureDefinition::new(name)
}

/// A structure field with a raw type string (`string`, `enum-value:Color`, `string:array`).
/// Optional unless `.required()`.
pub fn field(name: &str, type_: &str) -> FieldDefinition {
    FieldDefinition::new(name, type_)
}

/// Declares a secret requirement (required unless `.required(false)`). It holds no value.
pub fn define_secret(name: &str) -> SecretDefinition {
    SecretDefinition::new(name)
}

/// Sorts a mixed list of assets into `enums`, `structures` and `secrets`.
pub fn collect_assets(assets: impl IntoIterator<Item = Asset>) -> Assets {
    Assets::collect(assets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_types::EnumValue;

    #[test]
    fn helpers_build_the_spec_shapes() {
        let e = define_enum("Currency")
            .description("ISO 4217")
            .values(["EUR"])
            .value(EnumValue::keyed("usd", "USD", "US dollar"));
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"name": "Currency", "description": "ISO 4217", "values": ["EUR", {"key": "usd", "value": "USD", "label": "US dollar"}]})
        );
        let s = define_structure("Line").fields([
            field("sku", "string").required(),
            field("tags", "string:array").description("free text"),
        ]);
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            serde_json::json!({"name": "Line", "fields": [{"name": "sku", "type": "string", "required": true}, {"name": "tags", "type": "string:array", "description": "free text"}]})
        );
        let k = define_secret("API_TOKEN");
        assert!(k.required);
        assert!(!define_secret("X").required(false).required);
        assert_eq!(
            serde_json::to_value(&k).unwrap(),
            serde_json::json!({"name": "API_TOKEN", "required": true})
        );
    }

    #[test]
    fn collect_assets_sorts_by_kind_in_order() {
        let a = collect_assets([
            define_secret("B_KEY").into(),
            define_enum("E1").values(["a"]).into(),
            define_structure("S").into(),
            define_enum("E2").values(["b"]).into(),
            define_secret("A_KEY").into(),
        ]);
        assert_eq!(
            a.enums.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            ["E1", "E2"]
        );
        assert_eq!(a.structures.len(), 1);
        assert_eq!(
            a.secrets.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["B_KEY", "A_KEY"]
        );
        let json = serde_json::to_value(&a).unwrap();
        assert!(json.get("enums").is_some() && json.get("structures").is_some() && json.get("secrets").is_some());
    }

    #[test]
    fn collected_assets_are_validated_with_the_compiler_rules() {
        let a = collect_assets([define_structure("S").field(field("x", "enum-value:Missing")).into()]);
        let problems = a.validate();
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("unknown enum `Missing`"));
    }
}
