//! `svc.config.ts`: a TypeScript project's config, read without running it.
//!
//! ```ts
//! import { collectAssets, defineEnum, defineSecret, defineStructure } from "@svc/sdk";
//!
//! const Currency = defineEnum({ name: "Currency", values: ["EUR", "USD"] });
//!
//! export default {
//!   projectName: "shop",
//!   workspaceId: "acme", // routes are served at /<workspaceId>/<apiId>/<route>
//!   apiId: "shop",
//!   ...collectAssets([
//!     Currency,
//!     defineStructure({ name: "Order", fields: [{ name: "id", type: "string", required: true }] }),
//!     defineSecret({ name: "STRIPE_API_KEY" }),
//!   ]),
//! };
//! ```
//!
//! The spec's shape is `projectName` and the spread of `collectAssets([...])`; svc adds
//! `workspaceId` and `apiId`, which `svc.config.yaml` calls `workspace_id` and `api_id`.
//! Each asset's argument is read as data ([`crate::literal`]) and decoded by the YAML
//! config's own readers, so both files follow one set of rules and messages.

use crate::literal::{self, NotStatic, resolve};
use crate::module::{Module, SDK_PACKAGE};
use oxc_allocator::Allocator;
use oxc_ast::ast::{Argument, ArrayExpressionElement, Expression, ObjectPropertyKind};
use svc_frontend::config::{self, AssetSpans, Config};
use svc_frontend::yaml::Value;
use svc_frontend::{Code, Diagnostic, Diagnostics, FileId, Span};
use svc_types::Assets;

/// The config file of a TypeScript project, at the project root.
pub const CONFIG_FILE: &str = "svc.config.ts";

const KEYS: &[(&str, &str)] = &[
    (
        "projectName",
        "the project's name, used for the built binary, for example `\"shop-api\"`",
    ),
    (
        "workspaceId",
        "the workspace id, the first segment of every route path: /<workspaceId>/<apiId>/<route>",
    ),
    (
        "apiId",
        "the API id, the second segment of every route path: /<workspaceId>/<apiId>/<route>",
    ),
];

/// How an asset list is written, for the hints of the errors about one.
const COLLECT_ASSETS: &str = "collectAssets([defineEnum({…}), defineStructure({…}), defineSecret({…})])";

const SHAPE_HINT: &str = "svc.config.ts ends with `export default { projectName: \"shop\", workspaceId: \"acme\", apiId: \"shop\", ...collectAssets([ … ]) }`";

/// Reads and validates `svc.config.ts`. Returns the config when its default export could
/// be read at all (even with problems in it), plus every problem found.
pub fn load(file: FileId, text: &str, diags: &mut Diagnostics) -> Option<Config> {
    let allocator = Allocator::default();
    let module = Module::parse(&allocator, file, text, diags)?;
    let export = match module.default_export() {
        Some(Ok(expr)) => expr,
        Some(Err(span)) => {
            diags.push(wrong_shape(
                span,
                "the default export of svc.config.ts must be an object",
                "not an object",
                SHAPE_HINT,
            ));
            return None;
        }
        None => {
            diags.push(
                Diagnostic::new(
                    Code::MissingField,
                    Span::file_start(file),
                    "svc.config.ts has no default export",
                )
                .label("no `export default`")
                .help(SHAPE_HINT),
            );
            return None;
        }
    };
    let object = match resolve(&module, export) {
        Ok(Expression::ObjectExpression(object)) => object,
        Ok(other) => {
            diags.push(wrong_shape(
                module.span(other),
                "the default export of svc.config.ts must be an object literal",
                format!("{}, not an object", literal::describe(other)),
                SHAPE_HINT,
            ));
            return None;
        }
        Err(not_static) => {
            not_static.report("the default export of svc.config.ts", diags);
            return None;
        }
    };

    // Per key of `KEYS`: `None` when not written, `Some(None)` when written but invalid
    // (already reported).
    let mut ids: [Option<Option<String>>; 3] = [None, None, None];
    let mut nodes_dir = None;
    let mut reader = AssetReader {
        module: &module,
        assets: Assets::default(),
        spans: AssetSpans::default(),
        diags,
    };
    for property in &object.properties {
        match property {
            ObjectPropertyKind::ObjectProperty(p) => {
                let key_span = module.span(&p.key);
                let Some(key) = literal::static_key(&p.key, p.computed) else {
                    NotStatic::new(
                        key_span,
                        "a computed key",
                        "write the key out, for example `projectName: …`",
                    )
                    .report("a key of the config", reader.diags);
                    continue;
                };
                if let Some(index) = KEYS.iter().position(|(k, _)| *k == key) {
                    ids[index] = Some(read_id(&module, &p.value, KEYS[index], reader.diags));
                } else if key == NODES_KEY {
                    nodes_dir = read_nodes_dir(&module, &p.value, reader.diags);
                } else {
                    let known: Vec<_> = KEYS
                        .iter()
                        .map(|(k, _)| format!("`{k}`"))
                        .chain([format!("`{NODES_KEY}` (optional)")])
                        .collect();
                    reader.diags.push(
                        Diagnostic::new(
                            Code::UnknownField,
                            key_span,
                            format!("unknown key `{key}` in svc.config.ts"),
                        )
                        .label("not a config key")
                        .help(format!(
                            "the config has {}, and its assets spread from `...collectAssets([ … ])`",
                            known.join(", ")
                        )),
                    );
                }
            }
            ObjectPropertyKind::SpreadProperty(spread) => reader.collect_assets(&spread.argument),
        }
    }
    for ((key, help), value) in KEYS.iter().zip(&ids) {
        if value.is_none() {
            reader.diags.push(
                Diagnostic::new(
                    Code::MissingField,
                    module.span(&**object),
                    format!("svc.config.ts has no `{key}`"),
                )
                .label(format!("`{key}` missing"))
                .help(format!("add `{key}: \"…\"`: {help}")),
            );
        }
    }
    let AssetReader {
        assets, spans, diags, ..
    } = reader;
    let ids = ids.map(Option::flatten);
    Some(Config::assemble(file, ids, (assets, spans), nodes_dir, diags))
}

/// The optional key naming where node modules are.
const NODES_KEY: &str = "nodes";

/// `nodes: "lib/nodes"`: a directory of the project, written as a relative path.
fn read_nodes_dir<'a>(
    module: &Module<'a>,
    value: &'a Expression<'a>,
    diags: &mut Diagnostics,
) -> Option<(String, Span)> {
    const HELP: &str = "`nodes` names the directory of the node modules, relative to the project, for example `nodes: \"lib/nodes\"` (default `src/nodes`)";
    let node = match literal::read(module, value) {
        Ok(node) => node,
        Err(not_static) => {
            not_static.report("`nodes`", diags);
            return None;
        }
    };
    let Value::String(dir) = &node.value else {
        diags.push(node.wrong_shape("a string", HELP.to_string()));
        return None;
    };
    let dir = dir.trim_end_matches('/');
    let inside = !dir.is_empty()
        && std::path::Path::new(dir)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !inside {
        diags.push(
            Diagnostic::new(
                Code::InvalidValue,
                node.span,
                format!("`{dir}` is not a directory inside the project"),
            )
            .label("not a relative path inside the project")
            .help(HELP),
        );
        return None;
    }
    Some((dir.to_string(), node.span))
}

fn read_id<'a>(
    module: &Module<'a>,
    value: &'a Expression<'a>,
    (key, help): (&str, &str),
    diags: &mut Diagnostics,
) -> Option<String> {
    match literal::read(module, value) {
        Ok(node) => match &node.value {
            Value::String(s) => config::check_id(s, node.span, key, help, diags),
            _ => {
                diags.push(node.wrong_shape("a string", help.to_string()));
                None
            }
        },
        Err(not_static) => {
            not_static.report(&format!("`{key}`"), diags);
            None
        }
    }
}

struct AssetReader<'m, 'a, 'd> {
    module: &'m Module<'a>,
    assets: Assets,
    spans: AssetSpans,
    diags: &'d mut Diagnostics,
}

impl<'a> AssetReader<'_, 'a, '_> {
    /// `...collectAssets([ … ])` (or a `const` holding that call).
    fn collect_assets(&mut self, expr: &'a Expression<'a>) {
        let module = self.module;
        let call = match resolve(module, expr) {
            Ok(Expression::CallExpression(call)) if self.is_sdk_call(&call.callee, "collectAssets") => call,
            Ok(other) => {
                self.diags.push(wrong_shape(
                    module.span(other),
                    "svc.config.ts spreads only `collectAssets([ … ])`",
                    literal::describe(other),
                    format!("import `collectAssets` from `{SDK_PACKAGE}` and spread `...{COLLECT_ASSETS}`"),
                ));
                return;
            }
            Err(not_static) => return not_static.report("the spread in svc.config.ts", self.diags),
        };
        match call.arguments.as_slice() {
            [Argument::SpreadElement(s)] => NotStatic::new(
                module.span(&**s),
                "a spread argument",
                "pass the list itself: `collectAssets([ … ])`",
            )
            .report("the argument of `collectAssets`", self.diags),
            [list] => self.asset_list(list.to_expression()),
            _ => self.diags.push(wrong_shape(
                module.span(&**call),
                "`collectAssets` takes one list",
                "not one argument",
                format!("write `{COLLECT_ASSETS}`"),
            )),
        }
    }

    fn asset_list(&mut self, expr: &'a Expression<'a>) {
        let module = self.module;
        match resolve(module, expr) {
            Ok(Expression::ArrayExpression(array)) => {
                for element in &array.elements {
                    match element {
                        ArrayExpressionElement::SpreadElement(spread) => self.asset_list(&spread.argument),
                        ArrayExpressionElement::Elision(_) => {}
                        element => self.asset(element.to_expression()),
                    }
                }
            }
            Ok(other) => self.diags.push(wrong_shape(
                module.span(other),
                "`collectAssets` takes a list of assets",
                "not a list",
                format!("write `{COLLECT_ASSETS}`"),
            )),
            Err(not_static) => not_static.report("the list given to `collectAssets`", self.diags),
        }
    }

    /// One `defineEnum({…})`, `defineStructure({…})` or `defineSecret({…})`.
    fn asset(&mut self, expr: &'a Expression<'a>) {
        let module = self.module;
        let call = match resolve(module, expr) {
            Ok(Expression::CallExpression(call)) => call,
            Ok(other) => {
                return self.diags.push(wrong_shape(
                    module.span(other),
                    "an asset is made by `defineEnum`, `defineStructure` or `defineSecret`",
                    literal::describe(other),
                    format!(
                        "write `defineEnum({{ name: \"Currency\", values: [\"EUR\"] }})`, imported from `{SDK_PACKAGE}`"
                    ),
                ));
            }
            Err(not_static) => return not_static.report("an asset", self.diags),
        };
        let kind = ["defineEnum", "defineStructure", "defineSecret"]
            .into_iter()
            .find(|name| self.is_sdk_call(&call.callee, name));
        let Some(kind) = kind else {
            let callee = match call.callee.get_inner_expression() {
                Expression::Identifier(id) => format!("`{}`", id.name),
                _ => "this function".to_string(),
            };
            return self.diags.push(wrong_shape(
                module.span(&call.callee),
                format!("{callee} is not an asset helper of `{SDK_PACKAGE}`"),
                "not defineEnum, defineStructure or defineSecret",
                format!(
                    "import `defineEnum`, `defineStructure` and `defineSecret` from `{SDK_PACKAGE}` and call them here"
                ),
            ));
        };
        let argument = match call.arguments.as_slice() {
            [Argument::SpreadElement(s)] => {
                return NotStatic::new(
                    module.span(&**s),
                    "a spread argument",
                    "pass the object itself: `{ name: …, … }`",
                )
                .report(&format!("the argument of `{kind}`"), self.diags);
            }
            [argument] => argument.to_expression(),
            _ => {
                return self.diags.push(wrong_shape(
                    module.span(&**call),
                    format!("`{kind}` takes one object"),
                    "not one argument",
                    format!("write `{kind}({{ name: \"…\", … }})`"),
                ));
            }
        };
        let node = match literal::read(module, argument) {
            Ok(node) => node,
            Err(not_static) => return not_static.report(&format!("the argument of `{kind}`"), self.diags),
        };
        match kind {
            "defineEnum" => {
                if let Some((e, s)) = config::read_enum(&node, self.diags) {
                    self.assets.enums.push(e);
                    self.spans.enums.push(s);
                }
            }
            "defineStructure" => {
                if let Some((st, s)) = config::read_structure(&node, self.diags) {
                    self.assets.structures.push(st);
                    self.spans.structures.push(s);
                }
            }
            _ => {
                if matches!(node.value, Value::String(_)) {
                    return self
                        .diags
                        .push(node.wrong_shape("an object", "write `defineSecret({ name: \"STRIPE_API_KEY\" })`"));
                }
                if let Some((secret, span)) = config::read_secret(&node, self.diags) {
                    self.assets.secrets.push(secret);
                    self.spans.secrets.push(span);
                }
            }
        }
    }

    fn is_sdk_call(&self, callee: &Expression, name: &str) -> bool {
        self.module.sdk_export(callee) == Some(name)
    }
}

/// svc.config.ts is not of the shape svc reads: what is wrong, its label and the fix.
fn wrong_shape(
    span: Span,
    message: impl Into<String>,
    label: impl Into<String>,
    help: impl Into<String>,
) -> Diagnostic {
    Diagnostic::new(Code::WrongShape, span, message).label(label).help(help)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// svc.config.ts read from `text`, which must have no problem.
    fn load_clean(text: &str) -> Config {
        let (config, found) = load_text(text);
        assert_eq!(found, vec![]);
        config.unwrap()
    }

    /// Each diagnostic as (code, line, column, "message | help").
    type Found = Vec<(Code, u32, u32, String)>;

    /// svc.config.ts read from `text`, and what it found.
    fn load_text(text: &str) -> (Option<Config>, Found) {
        let mut diags = Diagnostics::new();
        let config = load(FileId(0), text, &mut diags);
        let found = diags
            .into_iter()
            .map(|d| {
                let place = &d.primary.span;
                (d.code, place.line, place.column, format!("{} | {}", d.message, d.help))
            })
            .collect();
        (config, found)
    }

    const FULL: &str = r#"import { collectAssets, defineEnum, defineSecret, defineStructure as structure } from "@svc/sdk";

const Currency = defineEnum({ name: "Currency", values: ["EUR", { key: "usd", value: "USD", label: "Dollar" }] });
const secrets = [defineSecret({ name: "STRIPE_KEY", required: false }), defineSecret({ name: "API_TOKEN" })];
const idField = { name: "id", type: "string", required: true } as const;

export default {
  projectName: "shop-api",
  workspaceId: `acme`,
  apiId: "shop",
  ...collectAssets([
    Currency,
    structure({
      name: "Order",
      description: undefined,
      fields: [idField, { name: "currency", type: "enum-value:Currency" }],
    }),
    ...secrets,
  ]),
} satisfies Record<string, unknown>;
"#;

    #[test]
    fn reads_the_spec_shape_with_consts_spreads_and_renamed_imports() {
        let c = load_clean(FULL);
        assert_eq!(
            (c.project_name.as_str(), c.workspace_id.as_str(), c.api_id.as_str()),
            ("shop-api", "acme", "shop")
        );
        assert_eq!(c.assets.enums[0].values.len(), 2);
        assert_eq!(c.assets.structures[0].description, None);
        assert!(c.assets.structures[0].fields[0].required);
        assert!(!c.assets.structures[0].fields[1].required);
        assert!(!c.assets.secrets[0].required);
        assert!(c.assets.secrets[1].required);
        // Spans point into the .ts file: the `type` of the second field.
        assert_eq!(c.spans.structures[0].fields[1].1.line, 16);
        assert_eq!(c.spans.enums[0].name.line, 3);
    }

    #[test]
    fn the_same_rules_as_the_yaml_config_at_their_place() {
        let (_, d) = load_text(
            r#"import { collectAssets, defineEnum, defineStructure } from "@svc/sdk";
export default {
  projectName: "Shop API",
  workspaceId: "acme",
  apiId: "shop",
  ...collectAssets([
    defineEnum({ name: "Color", values: ["red", "red"] }),
    defineStructure({ name: "Order", fields: [{ name: "c", type: "enum-value:Colour" }], feilds: [] }),
  ]),
};
"#,
        );
        let codes: Vec<_> = d.iter().map(|x| (x.0, x.1)).collect();
        assert!(codes.contains(&(Code::InvalidProjectId, 3)), "{d:?}");
        assert!(codes.contains(&(Code::DuplicateEnumKey, 7)), "{d:?}");
        assert!(codes.contains(&(Code::UnknownEnum, 8)), "{d:?}");
        assert!(codes.contains(&(Code::UnknownField, 8)), "{d:?}");
    }

    #[test]
    fn what_cannot_be_read_statically_is_located_and_says_what_to_write() {
        let (_, d) = load_text(
            r#"import { collectAssets, defineEnum } from "@svc/sdk";
import { currencies } from "./currencies";
const prefix = "acme";
export default {
  projectName: `${prefix}-shop`,
  workspaceId: prefix,
  apiId: "shop".toLowerCase(),
  ...collectAssets([defineEnum({ name: "Currency", values: currencies })]),
};
"#,
        );
        let not_static: Vec<_> = d.iter().filter(|x| x.0 == Code::NotStatic).collect();
        assert_eq!(not_static.len(), 3, "{d:?}");
        assert_eq!((not_static[0].1, not_static[0].2), (5, 16));
        assert!(not_static[0].3.contains("`${…}`"), "{d:?}");
        assert_eq!((not_static[1].1, not_static[1].2), (7, 10));
        assert_eq!((not_static[2].1, not_static[2].2), (8, 60));
        assert!(not_static[2].3.contains("imported from `./currencies`"), "{d:?}");
        assert!(not_static[2].3.contains("svc cannot follow imports"), "{d:?}");
    }

    #[test]
    fn missing_and_unknown_keys_and_foreign_helpers() {
        let (_, d) = load_text(
            r#"import { collectAssets } from "@svc/sdk";
function defineSecret(x: object) { return x; }
export default {
  projectName: "shop",
  api: "shop",
  ...collectAssets([defineSecret({ name: "K" })]),
};
"#,
        );
        let codes: Vec<_> = d.iter().map(|x| (x.0, x.1)).collect();
        assert!(codes.contains(&(Code::UnknownField, 5)), "{d:?}");
        assert!(codes.contains(&(Code::WrongShape, 6)), "{d:?}");
        let missing: Vec<_> = d
            .iter()
            .filter(|x| x.0 == Code::MissingField)
            .map(|x| x.3.clone())
            .collect();
        assert_eq!(missing.len(), 2, "{d:?}");
        assert!(
            missing[0].contains("workspaceId") && missing[1].contains("apiId"),
            "{d:?}"
        );
    }

    #[test]
    fn syntax_errors_and_missing_exports() {
        let (c, d) = load_text("export default { projectName: \"x\",, };\n");
        assert!(c.is_none());
        assert_eq!(d[0].0, Code::TypeScriptSyntax);
        assert_eq!(d[0].1, 1);
        let (c, d) = load_text("const x = 1;\n");
        assert!(c.is_none());
        assert_eq!(d[0].0, Code::MissingField);
        let (_, d) = load_text("export default function config() { return {}; }\n");
        assert_eq!(d[0].0, Code::WrongShape);
    }

    #[test]
    fn cycles_of_consts_end() {
        let (_, d) = load_text("const a = b;\nconst b = a;\nexport default a;\n");
        assert_eq!(d[0].0, Code::NotStatic, "{d:?}");
    }
}
