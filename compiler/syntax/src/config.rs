//! `svc.config.yaml`: the project's name, its place in route paths, and its named assets.
//!
//! ```yaml
//! project_name: shop-api        # the name of the built binary
//! workspace_id: acme            # routes are served at /<workspace_id>/<api_id>/<route>
//! api_id: shop
//! enums:
//!   - name: Currency
//!     values: [EUR, USD, { key: gbp, value: GBP, label: Pound sterling }]
//! structures:
//!   - name: Order
//!     fields:
//!       - { name: id, type: string, required: true }
//!       - { name: lines, type: "object:OrderLine:array", required: true }
//! secrets:
//!   - { name: STRIPE_API_KEY, description: Charges cards }
//! ```

use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::source::{FileId, Span};
use crate::yaml::{self, MapReader, Node, Value};
use svc_types::assets::{AssetLocation, AssetProblemKind};
use svc_types::constraints::{self, Constraints, Format, Setting, Takes};
use svc_types::{Assets, EnumDefinition, EnumValue, FieldDefinition, SecretDefinition, StructureDefinition};

/// The config file's name, at the project root.
pub const CONFIG_FILE: &str = "svc.config.yaml";

const TOP_KEYS: &[&str] = &[
    "$schema",
    "project_name",
    "workspace_id",
    "api_id",
    "enums",
    "structures",
    "secrets",
];

/// A loaded, validated config.
#[derive(Debug, Clone)]
pub struct Config {
    pub file: FileId,
    pub project_name: String,
    pub workspace_id: String,
    pub api_id: String,
    pub assets: Assets,
    pub spans: AssetSpans,
    /// Where TypeScript node modules are, relative to the project (`nodes` in
    /// `svc.config.ts`), and where that was written; `None`: `src/nodes`.
    pub nodes_dir: Option<(String, Span)>,
}

impl Config {
    /// The path a route is served at: `/<workspace>/<api>/<route>` (spec §1).
    pub fn served_path(&self, route: &str) -> String {
        format!("/{}/{}/{}", self.workspace_id, self.api_id, route)
    }
}

/// Where each asset part was written.
#[derive(Debug, Clone, Default)]
pub struct AssetSpans {
    pub enums: Vec<EnumSpans>,
    pub structures: Vec<StructureSpans>,
    pub secrets: Vec<Span>,
}

#[derive(Debug, Clone)]
pub struct EnumSpans {
    pub name: Span,
    /// Per value: (key, value) spans (the same span for a plain value).
    pub values: Vec<(Span, Span)>,
}

#[derive(Debug, Clone)]
pub struct StructureSpans {
    pub name: Span,
    /// Per field: (name, type) spans.
    pub fields: Vec<(Span, Span)>,
    /// Per field: where each constraint key's value is written.
    pub constraints: Vec<ConstraintSpans>,
}

/// Where each constraint key of one field or input is written (its value's span).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConstraintSpans(pub Vec<(&'static str, Span)>);

impl ConstraintSpans {
    pub fn span(&self, key: &str) -> Option<Span> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, s)| *s)
    }
}

impl AssetSpans {
    pub fn locate(&self, at: AssetLocation) -> Span {
        match at {
            AssetLocation::EnumName { enum_index } => self.enums[enum_index].name,
            AssetLocation::EnumValueKey {
                enum_index,
                value_index,
            } => self.enums[enum_index].values[value_index].0,
            AssetLocation::EnumValueValue {
                enum_index,
                value_index,
            } => self.enums[enum_index].values[value_index].1,
            AssetLocation::StructureName { structure_index } => self.structures[structure_index].name,
            AssetLocation::FieldName {
                structure_index,
                field_index,
            } => self.structures[structure_index].fields[field_index].0,
            AssetLocation::FieldType {
                structure_index,
                field_index,
            } => self.structures[structure_index].fields[field_index].1,
            AssetLocation::FieldConstraint {
                structure_index,
                field_index,
                key,
            } => self.structures[structure_index].constraints[field_index]
                .span(key)
                .unwrap_or(self.structures[structure_index].fields[field_index].1),
            AssetLocation::SecretName { secret_index } => self.secrets[secret_index],
        }
    }
}

/// The diagnostic code of each asset problem.
pub fn asset_problem_code(kind: AssetProblemKind) -> Code {
    match kind {
        AssetProblemKind::InvalidName => Code::InvalidAssetName,
        AssetProblemKind::DuplicateName => Code::DuplicateAssetName,
        AssetProblemKind::EmptyEnum => Code::EmptyEnum,
        AssetProblemKind::DuplicateEnumKey => Code::DuplicateEnumKey,
        AssetProblemKind::DuplicateEnumValue => Code::DuplicateEnumValue,
        AssetProblemKind::InvalidFieldName => Code::InvalidFieldName,
        AssetProblemKind::DuplicateField => Code::DuplicateField,
        AssetProblemKind::InvalidType => Code::InvalidType,
        AssetProblemKind::InvalidConstraint => Code::InvalidConstraint,
        AssetProblemKind::UnknownStructure => Code::UnknownStructure,
        AssetProblemKind::UnknownEnum => Code::UnknownEnum,
        AssetProblemKind::InvalidSecretName => Code::InvalidSecretName,
        AssetProblemKind::DuplicateSecret => Code::DuplicateSecret,
    }
}

/// Loads and validates the config text. Returns the config when it could be read at
/// all (even with validation errors, so later passes can still check flows against
/// it), plus every problem found.
pub fn load(file: FileId, text: &str, diags: &mut Diagnostics) -> Option<Config> {
    let root = yaml::parse_reporting(file, text, diags)?;
    let mut top = MapReader::new(&root, "svc.config.yaml", diags)?;
    let project_name = read_id(
        &mut top,
        "project_name",
        "the project's name, used for the built binary, for example `shop-api`",
        diags,
    );
    let workspace_id = read_id(
        &mut top,
        "workspace_id",
        "the workspace id, the first segment of every route path: /<workspace_id>/<api_id>/<route>",
        diags,
    );
    let api_id = read_id(
        &mut top,
        "api_id",
        "the API id, the second segment of every route path: /<workspace_id>/<api_id>/<route>",
        diags,
    );
    let _ = top.get("$schema");

    let mut assets = Assets::default();
    let mut spans = AssetSpans::default();
    // Each kind of asset (its key, and what the key holds): its items, each read with
    // its spans.
    fn read_all<T, S>(
        top: &mut MapReader,
        (key, help): (&str, &str),
        read: fn(&Node, &mut Diagnostics) -> Option<(T, S)>,
        diags: &mut Diagnostics,
    ) -> (Vec<T>, Vec<S>) {
        let Some(list) = top.get(key) else {
            return (Vec::new(), Vec::new());
        };
        let items = list_items(list, key, help, diags);
        items.iter().filter_map(|item| read(item, diags)).unzip()
    }
    const ENUMS: (&str, &str) = ("enums", "a list of enums, each `{ name, values }`");
    const STRUCTURES: (&str, &str) = ("structures", "a list of structures, each `{ name, fields }`");
    const SECRETS: (&str, &str) = ("secrets", "a list of secrets, each `{ name, description, required }`");
    (assets.enums, spans.enums) = read_all(&mut top, ENUMS, read_enum, diags);
    (assets.structures, spans.structures) = read_all(&mut top, STRUCTURES, read_structure, diags);
    (assets.secrets, spans.secrets) = read_all(&mut top, SECRETS, read_secret, diags);
    top.finish(TOP_KEYS, diags);

    let ids = [project_name, workspace_id, api_id];
    Some(Config::assemble(file, ids, (assets, spans), None, diags))
}

impl Config {
    /// How both config readers (the YAML one and svc.config.ts's) end: the assets checked
    /// by the rules they share and each problem reported where it was written, and the
    /// ids (a missing one already reported) given a stand-in so that checking goes on.
    pub fn assemble(
        file: FileId,
        [project_name, workspace_id, api_id]: [Option<String>; 3],
        (assets, spans): (Assets, AssetSpans),
        nodes_dir: Option<(String, Span)>,
        diags: &mut Diagnostics,
    ) -> Config {
        report_asset_problems(&assets, &spans, diags);
        Config {
            file,
            project_name: project_name.unwrap_or_else(|| "svc-project".into()),
            workspace_id: workspace_id.unwrap_or_default(),
            api_id: api_id.unwrap_or_default(),
            assets,
            spans,
            nodes_dir,
        }
    }
}

/// Validates the assets with the rules every reader shares ([`Assets::validate`]) and
/// reports each problem at the place `spans` gives for it.
fn report_asset_problems(assets: &Assets, spans: &AssetSpans, diags: &mut Diagnostics) {
    for problem in assets.validate() {
        let label = match problem.kind {
            AssetProblemKind::InvalidName
            | AssetProblemKind::InvalidFieldName
            | AssetProblemKind::InvalidSecretName => "invalid name",
            AssetProblemKind::EmptyEnum => "no values",
            AssetProblemKind::InvalidType => "not a type",
            AssetProblemKind::InvalidConstraint => "cannot hold here",
            AssetProblemKind::UnknownStructure | AssetProblemKind::UnknownEnum => "not defined in this file",
            _ => "",
        };
        let mut d = Diagnostic::new(
            asset_problem_code(problem.kind),
            spans.locate(problem.location),
            problem.message,
        )
        .label(label)
        .help(problem.hint);
        if let Some(first) = problem.first {
            d = d
                .label("defined again here")
                .with_secondary(spans.locate(first), "first defined here");
        }
        diags.push(d);
    }
}

/// A URL-safe identifier: lowercase letters, digits, `-` and `_`, starting with a letter or digit.
fn read_id(top: &mut MapReader, key: &str, help: &str, diags: &mut Diagnostics) -> Option<String> {
    let node = top.required(key, help, diags)?;
    let s = yaml::expect_str(node, help, diags)?;
    check_id(s, node.span, key, help, diags)
}

/// Whether `s` is a project id: lowercase letters, digits, `-` and `_`, starting with a
/// letter or digit.
pub fn is_project_id(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// Whether `s` is a project name: a project id that starts with a letter, since it names
/// the binary and Rust packages (`<name>-server`), which cannot start with a digit.
/// `svc init` takes the same.
pub fn is_project_name(s: &str) -> bool {
    is_project_id(s) && s.starts_with(|c: char| c.is_ascii_lowercase())
}

/// Checks a project id (`project_name`, `workspace_id`, `api_id`): lowercase letters,
/// digits, `-` and `_`, starting with a letter or digit. Reports and returns `None` when not.
pub fn check_id(s: &str, span: Span, key: &str, help: &str, diags: &mut Diagnostics) -> Option<String> {
    if matches!(key, "project_name" | "projectName") && is_project_id(s) && !is_project_name(s) {
        diags.push(
            Diagnostic::new(Code::InvalidProjectId, span, format!("`{s}` is not a valid `{key}`"))
                .label("starts with a digit")
                .help(format!(
                    "the project name names the built binary and its Rust packages, which cannot start with a digit; write for example `api-{s}`"
                )),
        );
        return None;
    }
    if !is_project_id(s) {
        diags.push(
            Diagnostic::new(Code::InvalidProjectId, span, format!("`{s}` is not a valid `{key}`"))
                .label("not a lowercase identifier")
                .help(format!("{help}; use lowercase letters, digits, `-` and `_`")),
        );
        return None;
    }
    Some(s.to_string())
}

fn list_items<'a>(node: &'a Node, what: &str, help: &str, diags: &mut Diagnostics) -> &'a [Node] {
    match &node.value {
        Value::Seq(items) => items,
        Value::Null => &[],
        _ => {
            diags.push(node.wrong_shape("a list", format!("`{what}` is {help}")));
            &[]
        }
    }
}

fn opt_string(r: &mut MapReader, key: &str, diags: &mut Diagnostics) -> Option<String> {
    r.get(key)
        .and_then(|n| yaml::expect_str(n, &format!("`{key}` is text"), diags))
        .map(str::to_string)
}

/// Reads one asset from its located tree (a YAML node, or a TypeScript object literal
/// read statically): every problem reported at its place.
pub fn read_enum(node: &Node, diags: &mut Diagnostics) -> Option<(EnumDefinition, EnumSpans)> {
    let mut r = MapReader::new(node, "an enum", diags)?;
    let name_node = r.required("name", "every enum has a `name`, for example `name: Currency`", diags);
    let name = name_node.and_then(|n| yaml::expect_str(n, "the enum's name", diags));
    let description = opt_string(&mut r, "description", diags);
    let mut values = Vec::new();
    let mut value_spans = Vec::new();
    if let Some(list) = r.required("values", "list the enum's values: `values: [EUR, USD]`", diags) {
        for item in list_items(
            list,
            "values",
            "a list of strings or `{ key, value, label }` objects",
            diags,
        ) {
            match &item.value {
                Value::String(s) => {
                    values.push(EnumValue::Plain(s.clone()));
                    value_spans.push((item.span, item.span));
                }
                Value::Map(_) => {
                    let Some(mut vr) = MapReader::new(item, "an enum value", diags) else {
                        continue;
                    };
                    let key = vr.required("key", "an enum value object has `key`, `value` and `label`", diags);
                    let value = vr.required("value", "an enum value object has `key`, `value` and `label`", diags);
                    let label = opt_string(&mut vr, "label", diags);
                    vr.finish(&["key", "value", "label"], diags);
                    let (Some(k), Some(v)) = (key, value) else {
                        continue;
                    };
                    let (Some(ks), Some(vs)) = (
                        yaml::expect_str(k, "the key is a string", diags),
                        scalar_string(v, "the value is a string", diags),
                    ) else {
                        continue;
                    };
                    values.push(EnumValue::Keyed {
                        key: ks.to_string(),
                        value: vs,
                        label,
                    });
                    value_spans.push((k.span, v.span));
                }
                Value::Int(_) | Value::Float(_) | Value::Bool(_) => {
                    diags.push(item.wrong_shape(
                        "a string",
                        format!("enum values are strings; quote it: `\"{}\"`", item.scalar_text()),
                    ));
                }
                _ => diags.push(item.wrong_shape(
                    "a string or a `{ key, value, label }` object",
                    "enum values are strings or objects",
                )),
            }
        }
    }
    r.finish(&["name", "description", "values"], diags);
    Some((
        EnumDefinition {
            name: name?.to_string(),
            description,
            values,
        },
        EnumSpans {
            name: name_node?.span,
            values: value_spans,
        },
    ))
}

fn scalar_string(node: &Node, help: &str, diags: &mut Diagnostics) -> Option<String> {
    match &node.value {
        Value::String(s) => Some(s.clone()),
        _ => {
            diags.push(node.wrong_shape("a string", help.to_string()));
            None
        }
    }
}

/// What a field declares beside its name, read the same way for a structure's field
/// (the config) and a request body's field (a flow): its `type` (the node, which the
/// caller reads as a type), `required`, `description` and constraints.
pub struct FieldParts<'a> {
    pub type_node: Option<&'a Node>,
    pub required: bool,
    pub description: Option<String>,
    pub constraints: Constraints,
    pub constraint_spans: ConstraintSpans,
}

/// Reads a field's parts from `fr`, then reports its unknown keys (`name`, read by the
/// caller, is known where `named`). A field without `required` is required where
/// `required_by_default`: a request body's fields are, a structure's are not.
pub fn read_field_parts<'a>(
    mut fr: MapReader<'a>,
    named: bool,
    type_help: &str,
    required_by_default: bool,
    diags: &mut Diagnostics,
) -> FieldParts<'a> {
    let type_node = fr.required("type", type_help, diags);
    let required = fr
        .get("required")
        .and_then(|n| yaml::expect_bool(n, "`required` is `true` or `false`", diags))
        .unwrap_or(required_by_default);
    let description = opt_string(&mut fr, "description", diags);
    let (constraints, constraint_spans) = read_constraints(&mut fr, diags);
    let own = ["name", "type", "required", "description"];
    let known: Vec<&str> = own[usize::from(!named)..]
        .iter()
        .chain(constraints::KEYS)
        .copied()
        .collect();
    fr.finish(&known, diags);
    FieldParts {
        type_node,
        required,
        description,
        constraints,
        constraint_spans,
    }
}

/// Reads the constraint keys (JSON Schema's names, see `svc_types::constraints`) of a
/// structure field or a request input, each checked for its shape where it is written.
/// Whether they fit the field's type is checked with the type (`Constraints::problems`).
pub fn read_constraints(r: &mut MapReader, diags: &mut Diagnostics) -> (Constraints, ConstraintSpans) {
    let mut c = Constraints::default();
    let mut spans = ConstraintSpans::default();
    for &key in constraints::KEYS {
        let Some(node) = r.get(key) else { continue };
        spans.0.push((key, node.span));
        let number = |diags: &mut Diagnostics| match &node.value {
            Value::Int(i) => Some(serde_json::Number::from(*i)),
            Value::Float(f) => serde_json::Number::from_f64(*f).or_else(|| {
                diags.push(node.wrong_shape(
                    "a finite number",
                    format!("`{key}` is a number, for example `{key}: 1`"),
                ));
                None
            }),
            _ => {
                diags.push(node.wrong_shape("a number", format!("`{key}` is a number, for example `{key}: 1`")));
                None
            }
        };
        let count = |diags: &mut Diagnostics| {
            yaml::expect_u64(node, &format!("`{key}` is a count, for example `{key}: 1`"), diags)
        };
        let flag = |diags: &mut Diagnostics| {
            yaml::expect_bool(node, &format!("`{key}` is `true` or `false`"), diags).unwrap_or(false)
        };
        let setting = match Takes::of(key).expect("every constraint key takes a kind of value") {
            Takes::Number => number(diags).map(Setting::Number),
            Takes::Count => count(diags).map(Setting::Count),
            Takes::Flag => Some(Setting::Flag(flag(diags))),
            Takes::Pattern => yaml::expect_str(
                node,
                "a regular expression, for example `pattern: \"^[A-Z]{3}-[0-9]+$\"`",
                diags,
            )
            .map(|p| Setting::Pattern(p.to_string())),
            Takes::Format => {
                let Some(name) = yaml::expect_str(node, "a format name, for example `format: email`", diags) else {
                    continue;
                };
                let format = Format::parse(name);
                if format.is_none() {
                    let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                    let help = svc_types::assets::nearest_or_all(name, &names, format_args!("svc checks the formats"));
                    diags.push(
                        Diagnostic::new(Code::InvalidConstraint, node.span, format!("unknown format `{name}`"))
                            .label("not a format svc checks")
                            .help(help),
                    );
                }
                format.map(Setting::Format)
            }
        };
        if let Some(setting) = setting {
            c.put(key, setting);
        }
    }
    (c, spans)
}

/// Reads one asset from its located tree (a YAML node, or a TypeScript object literal
/// read statically): every problem reported at its place.
pub fn read_structure(node: &Node, diags: &mut Diagnostics) -> Option<(StructureDefinition, StructureSpans)> {
    let mut r = MapReader::new(node, "a structure", diags)?;
    let name_node = r.required("name", "every structure has a `name`, for example `name: Order`", diags);
    let name = name_node.and_then(|n| yaml::expect_str(n, "the structure's name", diags));
    let description = opt_string(&mut r, "description", diags);
    let mut fields = Vec::new();
    let mut field_spans = Vec::new();
    let mut all_constraint_spans = Vec::new();
    if let Some(list) = r.required(
        "fields",
        "list the structure's fields: `fields: [{ name: id, type: string, required: true }]`",
        diags,
    ) {
        for item in list_items(list, "fields", "a list of `{ name, type, required }` objects", diags) {
            let Some(mut fr) = MapReader::new(item, "a structure field", diags) else {
                continue;
            };
            let fname = fr.required("name", "a field has a `name`", diags);
            let parts = read_field_parts(
                fr,
                true,
                "a field has a raw type string such as `string`, `enum-value:Color` or `string:array`",
                false,
                diags,
            );
            let (Some(n), Some(t)) = (fname, parts.type_node) else {
                continue;
            };
            let (Some(ns), Some(ts)) = (
                yaml::expect_str(n, "the field's name", diags),
                yaml::expect_str(t, "a raw type string such as `string`", diags),
            ) else {
                continue;
            };
            fields.push(FieldDefinition {
                name: ns.to_string(),
                type_: ts.to_string(),
                required: parts.required,
                description: parts.description,
                constraints: parts.constraints,
            });
            field_spans.push((n.span, t.span));
            all_constraint_spans.push(parts.constraint_spans);
        }
    }
    r.finish(&["name", "description", "fields"], diags);
    Some((
        StructureDefinition {
            name: name?.to_string(),
            description,
            fields,
        },
        StructureSpans {
            name: name_node?.span,
            fields: field_spans,
            constraints: all_constraint_spans,
        },
    ))
}

/// Reads one asset from its located tree (a YAML node, or a TypeScript object literal
/// read statically): every problem reported at its place.
pub fn read_secret(node: &Node, diags: &mut Diagnostics) -> Option<(SecretDefinition, Span)> {
    // A bare string is shorthand for a required secret with no description.
    if let Value::String(s) = &node.value {
        return Some((
            SecretDefinition {
                name: s.clone(),
                description: None,
                required: true,
            },
            node.span,
        ));
    }
    let mut r = MapReader::new(node, "a secret", diags)?;
    let name_node = r.required(
        "name",
        "every secret has a `name`, for example `name: STRIPE_API_KEY`",
        diags,
    );
    let name = name_node.and_then(|n| yaml::expect_str(n, "the secret's name", diags));
    let description = opt_string(&mut r, "description", diags);
    let required = r
        .get("required")
        .and_then(|n| yaml::expect_bool(n, "`required` is `true` or `false`", diags))
        .unwrap_or(true);
    r.finish(&["name", "description", "required"], diags);
    Some((
        SecretDefinition {
            name: name?.to_string(),
            description,
            required,
        },
        name_node?.span,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Found = Vec<(Code, u32, u32, String)>;

    fn load_text(text: &str) -> (Option<Config>, Found) {
        let mut d = Diagnostics::new();
        let c = load(FileId(0), text, &mut d);
        (
            c,
            d.into_iter()
                .map(|d| (d.code, d.primary.span.line, d.primary.span.column, d.help))
                .collect(),
        )
    }

    #[test]
    fn loads_a_full_config() {
        let (c, d) = load_text(
            "project_name: shop-api\nworkspace_id: acme\napi_id: shop\nenums:\n  - name: Currency\n    values: [EUR, { key: usd, value: USD, label: Dollar }]\nstructures:\n  - name: Order\n    fields:\n      - { name: id, type: string, required: true }\n      - { name: currency, type: \"enum-value:Currency\" }\nsecrets:\n  - { name: STRIPE_KEY, required: false }\n  - API_TOKEN\n",
        );
        assert_eq!(d, vec![]);
        let c = c.unwrap();
        assert_eq!(c.project_name, "shop-api");
        assert_eq!(c.assets.enums[0].values.len(), 2);
        assert!(c.assets.structures[0].fields[0].required);
        assert!(!c.assets.structures[0].fields[1].required);
        assert!(!c.assets.secrets[0].required);
        assert!(c.assets.secrets[1].required);
        assert_eq!(c.spans.structures[0].fields[1].1.line, 11);
    }

    #[test]
    fn reports_problems_at_their_place() {
        let (_, d) = load_text(
            "project_name: Shop API\nworkspace_id: acme\napi_id: shop\nenums:\n  - name: Color\n    values: [red, red]\nstructures:\n  - name: Order\n    fields:\n      - { name: c, type: \"enum-value:Colour\" }\n    feilds: []\n",
        );
        let codes: Vec<_> = d.iter().map(|x| (x.0, x.1)).collect();
        assert!(codes.contains(&(Code::InvalidProjectId, 1)), "{d:?}");
        assert!(codes.contains(&(Code::DuplicateEnumKey, 6)), "{d:?}");
        assert!(codes.contains(&(Code::UnknownEnum, 10)), "{d:?}");
        assert!(codes.contains(&(Code::UnknownField, 11)), "{d:?}");
        let unknown_enum = d.iter().find(|x| x.0 == Code::UnknownEnum).unwrap();
        assert!(unknown_enum.3.contains("Color"), "{unknown_enum:?}");
    }
}
