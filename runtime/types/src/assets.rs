//! Named assets (spec §2.7): enums, structures and secret requirements.
//!
//! These are plain data with the spec's camelCase serialization. The SDK's
//! `define_enum` / `define_structure` / `define_secret` build them, the compiler decodes
//! them from `svc.config.yaml`, and [`Assets::validate`] applies the same rules to both.

use crate::case;
use crate::constraints::Constraints;
use crate::names;
use crate::type_ref::{AssetRef, TypeRef};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One value of an enum: a plain string, or an object with `key`, `value` and `label`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EnumValue {
    Plain(String),
    Keyed {
        key: String,
        value: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
}

impl EnumValue {
    /// A value with a distinct key, wire value and label.
    pub fn keyed(key: impl Into<String>, value: impl Into<String>, label: impl Into<String>) -> Self {
        EnumValue::Keyed {
            key: key.into(),
            value: value.into(),
            label: Some(label.into()),
        }
    }

    /// The key: the stable identifier of the value (a plain value is its own key).
    pub fn key(&self) -> &str {
        match self {
            EnumValue::Plain(v) => v,
            EnumValue::Keyed { key, .. } => key,
        }
    }

    /// The value as it appears on the wire (in JSON bodies and inline literals).
    pub fn value(&self) -> &str {
        match self {
            EnumValue::Plain(v) => v,
            EnumValue::Keyed { value, .. } => value,
        }
    }

    /// The label shown in the Builder (defaults to the value).
    pub fn label(&self) -> &str {
        match self {
            EnumValue::Plain(v) => v,
            EnumValue::Keyed { label, value, .. } => label.as_deref().unwrap_or(value),
        }
    }

    /// The Rust variant name generated for this value (from its key); the one keyword in
    /// UpperCamelCase, `Self`, becomes `Self_`, as a field named `type` becomes `r#type`.
    pub fn rust_variant(&self) -> String {
        let variant = case::to_upper_camel(self.key());
        if case::is_keyword(&variant) {
            format!("{variant}_")
        } else {
            variant
        }
    }
}

impl From<&str> for EnumValue {
    fn from(value: &str) -> Self {
        EnumValue::Plain(value.to_string())
    }
}

impl From<String> for EnumValue {
    fn from(value: String) -> Self {
        EnumValue::Plain(value)
    }
}

/// `define_enum`: a named set of string values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnumDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub values: Vec<EnumValue>,
}

impl EnumDefinition {
    /// The value whose wire form is `value`.
    pub fn find_value(&self, value: &str) -> Option<&EnumValue> {
        self.values.iter().find(|v| v.value() == value)
    }
}

/// One field of a structure. `type` is a raw type string (`string`, `enum-value:Color`,
/// `string:array`, …), not a pin builder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldDefinition {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
    /// Fields are optional unless marked required (spec §2.7: `required` is optional).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What a valid value is, beyond its type (`minimum`, `maxLength`, …): JSON
    /// Schema's keywords, written beside `type` (see [`crate::constraints`]).
    #[serde(flatten)]
    pub constraints: Constraints,
}

impl FieldDefinition {
    /// The parsed type, if the type string is valid.
    pub fn type_ref(&self) -> Option<TypeRef> {
        TypeRef::parse(&self.type_).ok()
    }

    /// The Rust field name generated for this field.
    pub fn rust_name(&self) -> String {
        case::to_snake(&self.name)
    }
}

/// `define_structure`: a named object type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StructureDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub fields: Vec<FieldDefinition>,
}

impl StructureDefinition {
    pub fn find_field(&self, name: &str) -> Option<&FieldDefinition> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// `define_secret`: a secret requirement. It holds no value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Secrets are required unless marked otherwise: a server refuses to start without
    /// a required secret.
    #[serde(default = "default_true")]
    pub required: bool,
}

fn default_true() -> bool {
    true
}

/// `collect_assets`: every named asset of a project, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Assets {
    #[serde(default)]
    pub enums: Vec<EnumDefinition>,
    #[serde(default)]
    pub structures: Vec<StructureDefinition>,
    #[serde(default)]
    pub secrets: Vec<SecretDefinition>,
}

// --- builders: `define_enum("Currency").values(["EUR", "USD"])` and friends -------------

impl EnumDefinition {
    /// An enum with no values yet.
    pub fn new(name: impl Into<String>) -> Self {
        EnumDefinition {
            name: name.into(),
            description: None,
            values: Vec::new(),
        }
    }

    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Adds one value (a plain string, or [`EnumValue::keyed`]).
    pub fn value(mut self, value: impl Into<EnumValue>) -> Self {
        self.values.push(value.into());
        self
    }

    /// Adds values.
    pub fn values<V: Into<EnumValue>>(mut self, values: impl IntoIterator<Item = V>) -> Self {
        self.values.extend(values.into_iter().map(Into::into));
        self
    }
}

impl FieldDefinition {
    /// An optional field with a raw type string (`string`, `enum-value:Color`, `string:array`).
    pub fn new(name: impl Into<String>, type_: impl Into<String>) -> Self {
        FieldDefinition {
            name: name.into(),
            type_: type_.into(),
            required: false,
            description: None,
            constraints: Default::default(),
        }
    }

    /// Sets what a valid value is, beyond its type.
    pub fn constraints(mut self, constraints: Constraints) -> Self {
        self.constraints = constraints;
        self
    }

    /// Marks the field required.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Sets whether the field is required.
    pub fn required_if(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }
}

impl StructureDefinition {
    /// A structure with no fields yet.
    pub fn new(name: impl Into<String>) -> Self {
        StructureDefinition {
            name: name.into(),
            description: None,
            fields: Vec::new(),
        }
    }

    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    pub fn field(mut self, field: FieldDefinition) -> Self {
        self.fields.push(field);
        self
    }

    pub fn fields(mut self, fields: impl IntoIterator<Item = FieldDefinition>) -> Self {
        self.fields.extend(fields);
        self
    }
}

impl SecretDefinition {
    /// A required secret.
    pub fn new(name: impl Into<String>) -> Self {
        SecretDefinition {
            name: name.into(),
            description: None,
            required: true,
        }
    }

    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Sets whether a server may start without this secret.
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }
}

/// Any one named asset, for [`Assets::collect`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asset {
    Enum(EnumDefinition),
    Structure(StructureDefinition),
    Secret(SecretDefinition),
}

impl From<EnumDefinition> for Asset {
    fn from(v: EnumDefinition) -> Self {
        Asset::Enum(v)
    }
}

impl From<StructureDefinition> for Asset {
    fn from(v: StructureDefinition) -> Self {
        Asset::Structure(v)
    }
}

impl From<SecretDefinition> for Asset {
    fn from(v: SecretDefinition) -> Self {
        Asset::Secret(v)
    }
}

impl Assets {
    /// Sorts a mixed list of assets into `enums`, `structures` and `secrets`, keeping
    /// their order.
    pub fn collect(assets: impl IntoIterator<Item = Asset>) -> Self {
        let mut out = Assets::default();
        for a in assets {
            match a {
                Asset::Enum(e) => out.enums.push(e),
                Asset::Structure(s) => out.structures.push(s),
                Asset::Secret(s) => out.secrets.push(s),
            }
        }
        out
    }
}

/// Which part of an asset a problem is about, so a caller that knows where each part
/// was written (the compiler, from YAML spans) can point at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssetLocation {
    EnumName {
        enum_index: usize,
    },
    EnumValueKey {
        enum_index: usize,
        value_index: usize,
    },
    EnumValueValue {
        enum_index: usize,
        value_index: usize,
    },
    StructureName {
        structure_index: usize,
    },
    FieldName {
        structure_index: usize,
        field_index: usize,
    },
    FieldType {
        structure_index: usize,
        field_index: usize,
    },
    /// One constraint key of a field (`minimum`, …).
    FieldConstraint {
        structure_index: usize,
        field_index: usize,
        key: &'static str,
    },
    SecretName {
        secret_index: usize,
    },
}

/// The kinds of problems asset validation finds. Each maps to one stable diagnostic code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AssetProblemKind {
    InvalidName,
    DuplicateName,
    EmptyEnum,
    DuplicateEnumKey,
    DuplicateEnumValue,
    InvalidFieldName,
    DuplicateField,
    InvalidType,
    InvalidConstraint,
    UnknownStructure,
    UnknownEnum,
    InvalidSecretName,
    DuplicateSecret,
}

/// One problem found by [`Assets::validate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetProblem {
    pub kind: AssetProblemKind,
    pub location: AssetLocation,
    pub message: String,
    pub hint: String,
    /// For duplicates: where the first definition is.
    pub first: Option<AssetLocation>,
}

impl std::fmt::Display for AssetProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.hint)
    }
}

impl Assets {
    pub fn enum_named(&self, name: &str) -> Option<&EnumDefinition> {
        self.enums.iter().find(|e| e.name == name)
    }

    pub fn structure_named(&self, name: &str) -> Option<&StructureDefinition> {
        self.structures.iter().find(|s| s.name == name)
    }

    pub fn secret_named(&self, name: &str) -> Option<&SecretDefinition> {
        self.secrets.iter().find(|s| s.name == name)
    }

    /// Applies every asset rule and returns all problems found, in definition order.
    ///
    /// Rules: names are valid and unique (structures and enums share one namespace,
    /// because both become Rust types); enums have values with unique keys and unique
    /// wire values, and no two keys map to the same Rust variant; fields have valid,
    /// unique names (also after conversion to snake_case), valid types, and refer only to
    /// structures and enums that exist; secrets have valid, unique names.
    pub fn validate(&self) -> Vec<AssetProblem> {
        let mut problems = Vec::new();
        let mut push = |kind, location, message: String, hint: String, first| {
            problems.push(AssetProblem {
                kind,
                location,
                message,
                hint,
                first,
            })
        };

        // Type names: enums and structures share one namespace.
        let mut type_names: BTreeMap<&str, AssetLocation> = BTreeMap::new();
        let type_defs = self
            .enums
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.as_str(), AssetLocation::EnumName { enum_index: i }))
            .chain(
                self.structures
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (s.name.as_str(), AssetLocation::StructureName { structure_index: i })),
            );
        for (name, location) in type_defs {
            if let Err(e) = names::check_asset_name(name) {
                push(AssetProblemKind::InvalidName, location, e.message, e.hint, None);
                continue;
            }
            if let Some(first) = type_names.get(name) {
                push(
                    AssetProblemKind::DuplicateName,
                    location,
                    format!("`{name}` is defined more than once"),
                    "enums and structures share one namespace (each becomes a Rust type); rename one of them".into(),
                    Some(*first),
                );
            } else {
                type_names.insert(name, location);
            }
        }

        for (ei, e) in self.enums.iter().enumerate() {
            if e.values.is_empty() {
                push(
                    AssetProblemKind::EmptyEnum,
                    AssetLocation::EnumName { enum_index: ei },
                    format!("enum `{}` has no values", e.name),
                    "add at least one value under `values`".into(),
                    None,
                );
            }
            let mut keys: BTreeMap<&str, usize> = BTreeMap::new();
            let mut values: BTreeMap<&str, usize> = BTreeMap::new();
            let mut variants: BTreeMap<String, usize> = BTreeMap::new();
            for (vi, v) in e.values.iter().enumerate() {
                let key_at = AssetLocation::EnumValueKey {
                    enum_index: ei,
                    value_index: vi,
                };
                let value_at = AssetLocation::EnumValueValue {
                    enum_index: ei,
                    value_index: vi,
                };
                if v.key().is_empty() || v.value().is_empty() {
                    push(
                        AssetProblemKind::InvalidName,
                        key_at,
                        format!("enum `{}` has an empty value or key", e.name),
                        "enum keys and values are non-empty strings".into(),
                        None,
                    );
                    continue;
                }
                if !v
                    .key()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                {
                    push(
                        AssetProblemKind::InvalidName,
                        key_at,
                        format!("enum key `{}` of `{}` is not a valid identifier", v.key(), e.name),
                        "enum keys use letters, digits, `_`, `-` and `.`; give the value an explicit `key` if its wire value needs other characters".into(),
                        None,
                    );
                    continue;
                }
                if !v.key().chars().any(|c| c.is_ascii_alphanumeric()) {
                    push(
                        AssetProblemKind::InvalidName,
                        key_at,
                        format!("enum key `{}` of `{}` has no letter or digit", v.key(), e.name),
                        "an enum key names a Rust variant: give the value a key that is a word, for example `{ key: none, value: _ }`; the wire value stays as it is".into(),
                        None,
                    );
                    continue;
                }
                if let Some(&first) = keys.get(v.key()) {
                    push(
                        AssetProblemKind::DuplicateEnumKey,
                        key_at,
                        format!("enum `{}` has the key `{}` more than once", e.name, v.key()),
                        "each enum key must be unique".into(),
                        Some(AssetLocation::EnumValueKey {
                            enum_index: ei,
                            value_index: first,
                        }),
                    );
                    continue;
                }
                keys.insert(v.key(), vi);
                if let Some(&first) = values.get(v.value()) {
                    push(
                        AssetProblemKind::DuplicateEnumValue,
                        value_at,
                        format!("enum `{}` has the value `{}` more than once", e.name, v.value()),
                        "each enum value must be unique, or a request could not say which one it means".into(),
                        Some(AssetLocation::EnumValueValue {
                            enum_index: ei,
                            value_index: first,
                        }),
                    );
                    continue;
                }
                values.insert(v.value(), vi);
                let variant = v.rust_variant();
                if let Some(&first) = variants.get(&variant) {
                    push(
                        AssetProblemKind::DuplicateEnumKey,
                        key_at,
                        format!(
                            "enum keys `{}` and `{}` of `{}` both become the Rust variant `{variant}`",
                            e.values[first].key(),
                            v.key(),
                            e.name
                        ),
                        "enum keys must differ after conversion to UpperCamelCase; give one of them another key".into(),
                        Some(AssetLocation::EnumValueKey {
                            enum_index: ei,
                            value_index: first,
                        }),
                    );
                    continue;
                }
                variants.insert(variant, vi);
            }
        }

        for (si, s) in self.structures.iter().enumerate() {
            let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
            let mut rust_names: BTreeMap<String, usize> = BTreeMap::new();
            for (fi, f) in s.fields.iter().enumerate() {
                let name_at = AssetLocation::FieldName {
                    structure_index: si,
                    field_index: fi,
                };
                let type_at = AssetLocation::FieldType {
                    structure_index: si,
                    field_index: fi,
                };
                if let Err(e) = names::check_field_name(&f.name) {
                    push(AssetProblemKind::InvalidFieldName, name_at, e.message, e.hint, None);
                } else if let Some(&first) = seen.get(f.name.as_str()) {
                    push(
                        AssetProblemKind::DuplicateField,
                        name_at,
                        format!("structure `{}` has the field `{}` more than once", s.name, f.name),
                        "remove or rename one of the fields".into(),
                        Some(AssetLocation::FieldName {
                            structure_index: si,
                            field_index: first,
                        }),
                    );
                } else if let Some(&first) = rust_names.get(&f.rust_name()) {
                    push(
                        AssetProblemKind::DuplicateField,
                        name_at,
                        format!(
                            "fields `{}` and `{}` of `{}` both become the Rust field `{}`",
                            s.fields[first].name,
                            f.name,
                            s.name,
                            f.rust_name()
                        ),
                        "field names must differ after conversion to snake_case".into(),
                        Some(AssetLocation::FieldName {
                            structure_index: si,
                            field_index: first,
                        }),
                    );
                } else {
                    seen.insert(&f.name, fi);
                    rust_names.insert(f.rust_name(), fi);
                }
                match TypeRef::parse(&f.type_) {
                    Err(e) => push(AssetProblemKind::InvalidType, type_at, e.message, e.hint, None),
                    Ok(t) => {
                        for p in f.constraints.problems(&t) {
                            let at = AssetLocation::FieldConstraint {
                                structure_index: si,
                                field_index: fi,
                                key: p.key,
                            };
                            push(AssetProblemKind::InvalidConstraint, at, p.message, p.hint, None);
                        }
                        match t.referenced_asset() {
                            Some(AssetRef::Structure(name)) if self.structure_named(name).is_none() => {
                                let hint = if self.enum_named(name).is_some() {
                                    format!("`{name}` is an enum: write `enum-value:{name}`")
                                } else {
                                    suggest("structure", name, self.structures.iter().map(|s| s.name.as_str()))
                                };
                                push(
                                    AssetProblemKind::UnknownStructure,
                                    type_at,
                                    format!("unknown structure `{name}`"),
                                    hint,
                                    None,
                                )
                            }
                            Some(AssetRef::Enum(name)) if self.enum_named(name).is_none() => {
                                let hint = if self.structure_named(name).is_some() {
                                    format!("`{name}` is a structure: write `object:{name}`")
                                } else {
                                    suggest("enum", name, self.enums.iter().map(|e| e.name.as_str()))
                                };
                                push(
                                    AssetProblemKind::UnknownEnum,
                                    type_at,
                                    format!("unknown enum `{name}`"),
                                    hint,
                                    None,
                                )
                            }
                            _ => {}
                        }
                    }
                }
            }
        }

        let mut secrets: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, s) in self.secrets.iter().enumerate() {
            let at = AssetLocation::SecretName { secret_index: i };
            if let Err(e) = names::check_secret_name(&s.name) {
                push(AssetProblemKind::InvalidSecretName, at, e.message, e.hint, None);
            } else if let Some(&first) = secrets.get(s.name.as_str()) {
                push(
                    AssetProblemKind::DuplicateSecret,
                    at,
                    format!("secret `{}` is declared more than once", s.name),
                    "remove one of the declarations".into(),
                    Some(AssetLocation::SecretName { secret_index: first }),
                );
            } else {
                secrets.insert(&s.name, i);
            }
        }
        problems
    }
}

/// A "did you mean" hint for an unknown name.
pub fn suggest<'a>(what: &str, name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    match closest(name, candidates.iter().copied()) {
        Some(best) => format!("did you mean `{best}`?"),
        None if candidates.is_empty() => {
            format!("no {what} is defined; define it in svc.config.yaml")
        }
        None => {
            let mut sorted = candidates.clone();
            sorted.sort_unstable();
            sorted.truncate(8);
            format!("the defined {what}s are: {}", listed(sorted))
        }
    }
}

/// The hint for `name`, which is none of `candidates`: the nearest one (``did you mean
/// `x`?``), or else all of them after `intro` (``the fields of `Order` are: `sku`, `qty` ``).
pub fn nearest_or_all(name: &str, candidates: &[&str], intro: impl std::fmt::Display) -> String {
    match closest(name, candidates.iter().copied()) {
        Some(best) => format!("did you mean `{best}`?"),
        None => format!("{intro}: {}", listed(candidates)),
    }
}

/// Names as a hint lists them: `` `a`, `b`, `c` ``.
pub fn listed<T: std::fmt::Display>(names: impl IntoIterator<Item = T>) -> String {
    names
        .into_iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a typo.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(&name.to_ascii_lowercase(), &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c)
}

/// Edit distance over chars, counting an adjacent transposition (`nmae` → `name`) as one
/// edit (optimal string alignment distance): the usual typos cost one.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, ty: &str) -> FieldDefinition {
        FieldDefinition {
            name: name.into(),
            type_: ty.into(),
            required: true,
            description: None,
            constraints: Default::default(),
        }
    }

    fn kinds(a: &Assets) -> Vec<AssetProblemKind> {
        a.validate().into_iter().map(|p| p.kind).collect()
    }

    #[test]
    fn valid_assets_have_no_problems() {
        let a = Assets {
            enums: vec![EnumDefinition {
                name: "Currency".into(),
                description: None,
                values: vec!["EUR".into(), EnumValue::keyed("usd", "USD", "US dollar")],
            }],
            structures: vec![StructureDefinition {
                name: "Order".into(),
                description: None,
                fields: vec![
                    field("currency", "enum-value:Currency"),
                    field("tags", "string:array"),
                    field("children", "object:Order:array"),
                ],
            }],
            secrets: vec![SecretDefinition {
                name: "API_TOKEN".into(),
                description: None,
                required: true,
            }],
        };
        assert_eq!(a.validate(), vec![]);
    }

    #[test]
    fn finds_each_kind_of_problem() {
        let a = Assets {
            enums: vec![
                EnumDefinition {
                    name: "Color".into(),
                    description: None,
                    values: vec!["red".into(), "red".into()],
                },
                EnumDefinition {
                    name: "Color".into(),
                    description: None,
                    values: vec![],
                },
                EnumDefinition {
                    name: "Size".into(),
                    description: None,
                    values: vec![EnumValue::keyed("s", "small", "S"), EnumValue::keyed("m", "small", "M")],
                },
            ],
            structures: vec![StructureDefinition {
                name: "order".into(),
                description: None,
                fields: vec![
                    field("a", "Strin"),
                    field("a", "object:Nope"),
                    field("b", "enum-value:Shade"),
                ],
            }],
            secrets: vec![
                SecretDefinition {
                    name: "key".into(),
                    description: None,
                    required: true,
                },
                SecretDefinition {
                    name: "K".into(),
                    description: None,
                    required: true,
                },
                SecretDefinition {
                    name: "K".into(),
                    description: None,
                    required: false,
                },
            ],
        };
        let k = kinds(&a);
        use AssetProblemKind::*;
        for expected in [
            DuplicateEnumKey,
            DuplicateName,
            EmptyEnum,
            DuplicateEnumValue,
            InvalidName,
            InvalidType,
            DuplicateField,
            UnknownStructure,
            UnknownEnum,
            InvalidSecretName,
            DuplicateSecret,
        ] {
            assert!(k.contains(&expected), "missing {expected:?} in {k:?}");
        }
    }

    #[test]
    fn variant_and_field_name_collisions() {
        let a = Assets {
            enums: vec![EnumDefinition {
                name: "State".into(),
                description: None,
                values: vec!["in-progress".into(), "in_progress".into()],
            }],
            structures: vec![StructureDefinition {
                name: "S".into(),
                description: None,
                fields: vec![field("unitPrice", "number"), field("unit_price", "number")],
            }],
            secrets: vec![],
        };
        assert_eq!(
            kinds(&a),
            vec![AssetProblemKind::DuplicateEnumKey, AssetProblemKind::DuplicateField]
        );
    }

    #[test]
    fn suggestions() {
        assert_eq!(closest("Ordr", ["Order", "Customer"]), Some("Order"));
        assert_eq!(closest("Zebra", ["Order", "Customer"]), None);
        assert!(suggest("enum", "Zebra", ["Apple", "Berry"]).contains("`Apple`, `Berry`"));
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("nmae", "name"), 1);
    }

    #[test]
    fn serializes_in_the_spec_shape() {
        let s = StructureDefinition {
            name: "Order".into(),
            description: Some("An order".into()),
            fields: vec![field("lines", "object:Line:array")],
        };
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"name":"Order","description":"An order","fields":[{"name":"lines","type":"object:Line:array","required":true}]})
        );
        let e: EnumDefinition = serde_json::from_value(
            serde_json::json!({"name":"C","values":["a",{"key":"b","value":"B","label":"Bee"}]}),
        )
        .unwrap();
        assert_eq!(e.values[1].label(), "Bee");
        assert_eq!(e.values[0].key(), "a");
    }
}
