//! JSON Schemas (draft 2020-12) of flow files and `svc.config.yaml`, for YAML editors
//! (`# yaml-language-server: $schema=…`). They describe the shape only: names, types and
//! wires are checked by `svc check`, which knows the project. Committed copies live in
//! `docs/schemas/`; a test keeps them equal to what `svc schema` prints.

use serde_json::{Value, json};

/// The file name a schema is published under.
pub const FLOW_FILE: &str = "flow.schema.json";
pub const CONFIG_FILE: &str = "svc.config.schema.json";
pub const TEST_FILE: &str = "test.schema.json";

const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A type string: `string`, `number`, `boolean`, `any`, `object`, `object:<Name>`,
/// `enum-value:<Name>`, each optionally followed by `:array`.
fn type_string() -> Value {
    json!({
        "type": "string",
        "description": "A type: string, number, boolean, any, object, object:<Structure>, enum-value:<Enum>; append :array for a list.",
        "pattern": "^(string|number|boolean|any|object|object:[A-Za-z_][A-Za-z0-9_]*|enum-value:[A-Za-z_][A-Za-z0-9_]*)(:array)?$"
    })
}

/// The schema of one flow file.
pub fn flow() -> Value {
    let edge = json!({ "type": "string", "description": "The id of the node that runs next." });
    let fields = json!({
        "type": "object",
        "additionalProperties": {
            "oneOf": [
                { "$ref": "#/$defs/type" },
                {
                    "type": "object",
                    "required": ["type"],
                    "additionalProperties": false,
                    "properties": with_constraints(json!({
                        "type": { "$ref": "#/$defs/type" },
                        "required": { "type": "boolean", "default": true },
                        "description": { "type": "string" }
                    }))
                }
            ]
        }
    });
    json!({
        "$schema": DIALECT,
        "$id": "https://svc.dev/schemas/flow.schema.json",
        "title": "svc flow",
        "description": "One route: its path, methods, typed request inputs, and the nodes it runs. See docs/flow-format.md.",
        "type": "object",
        "required": ["route", "methods", "start", "nodes"],
        "additionalProperties": false,
        "properties": {
            "$schema": { "type": "string" },
            "route": {
                "type": "string",
                "description": "The path after /<workspace_id>/<api_id>/, such as `orders` or `orders/{id}`.",
                "pattern": "^[A-Za-z0-9._~{}-]+(/[A-Za-z0-9._~{}-]+)*$"
            },
            "methods": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": true,
                "items": { "enum": ["GET", "POST", "PUT", "PATCH", "DELETE"] }
            },
            "summary": { "type": "string" },
            "request": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "body": {
                        "description": "One type (`object:CreateOrder`) or a mapping of fields.",
                        "oneOf": [{ "$ref": "#/$defs/type" }, { "$ref": "#/$defs/fields" }]
                    },
                    "query": { "$ref": "#/$defs/fields" },
                    "headers": { "$ref": "#/$defs/fields" }
                }
            },
            "start": { "type": "string", "description": "The id of the first node." },
            "nodes": {
                "type": "object",
                "minProperties": 1,
                "propertyNames": { "pattern": "^[a-z][a-z0-9_-]*$", "not": { "enum": ["request", "start"] } },
                "additionalProperties": { "$ref": "#/$defs/node" }
            }
        },
        "$defs": {
            "type": type_string(),
            "fields": fields,
            "edge": edge,
            "reference": {
                "type": "object",
                "required": ["from"],
                "additionalProperties": false,
                "properties": {
                    "from": {
                        "type": "string",
                        "description": "request.body.<field>, request.query.<name>, request.headers.<name>, request.params.<name>, or <node-id>.<output>[.<field>…]"
                    }
                }
            },
            "binding": {
                "description": "A wire `{ from: … }`, a literal `{ value: … }`, or a plain literal.",
                "anyOf": [
                    { "$ref": "#/$defs/reference" },
                    {
                        "type": "object",
                        "required": ["value"],
                        "additionalProperties": false,
                        "properties": { "value": true }
                    },
                    { "type": ["string", "number", "boolean", "null", "array"] }
                ]
            },
            "template": {
                "description": "A response body: literals, wires `{ from: … }`, and objects and lists of those.",
                "anyOf": [
                    { "$ref": "#/$defs/reference" },
                    { "type": "object", "additionalProperties": { "$ref": "#/$defs/template" } },
                    { "type": "array", "items": { "$ref": "#/$defs/template" } },
                    { "type": ["string", "number", "boolean", "null"] }
                ]
            },
            "node": node_schema()
        }
    })
}

/// A node: one branch per built-in node type, from its row of the table.
fn node_schema() -> Value {
    use svc_types::builtin_nodes::{NODE_TYPES, OUTPUT_SCHEMA};
    let parse = |text: &str| serde_json::from_str::<Value>(text).expect("the table's schemas are JSON (tested there)");
    let branches: Vec<Value> = NODE_TYPES
        .iter()
        .map(|row| {
            let mut properties = serde_json::Map::new();
            properties.insert("type".into(), json!({ "const": row.type_name }));
            properties.insert("description".into(), json!({ "type": "string" }));
            for setting in row.settings {
                properties.insert(setting.key.into(), parse(setting.schema));
            }
            for output in row.outputs {
                properties.insert(output.pin.into(), parse(OUTPUT_SCHEMA));
            }
            let required: Vec<&str> = row.settings.iter().filter(|s| s.required).map(|s| s.key).collect();
            json!({
                "title": row.label,
                "required": required,
                "additionalProperties": false,
                "properties": properties,
            })
        })
        .collect();
    json!({
        "type": "object",
        "required": ["type"],
        "properties": {
            "type": { "enum": NODE_TYPES.iter().map(|t| t.type_name).collect::<Vec<_>>() },
            "description": { "type": "string" }
        },
        "oneOf": branches
    })
}

/// The schema of `svc.config.yaml`.
pub fn config() -> Value {
    let asset_name = json!({ "type": "string", "pattern": "^[A-Z][A-Za-z0-9]*$", "description": "UpperCamelCase" });
    let field_name = json!({ "type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" });
    let id = json!({ "type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$" });
    // A list of enums or structures: each a name, a description and its `part` (the
    // values, the fields).
    let assets_of = |part: &str, schema: Value| {
        json!({
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", part],
                "additionalProperties": false,
                "properties": {
                    "name": asset_name,
                    "description": { "type": "string" },
                    part: schema
                }
            }
        })
    };
    let values = json!({
        "type": "array",
        "minItems": 1,
        "items": {
            "oneOf": [
                { "type": "string" },
                {
                    "type": "object",
                    "required": ["key", "value"],
                    "additionalProperties": false,
                    "properties": {
                        "key": { "type": "string" },
                        "value": { "type": "string" },
                        "label": { "type": "string" }
                    }
                }
            ]
        }
    });
    let fields = json!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["name", "type"],
            "additionalProperties": false,
            "properties": with_constraints(json!({
                "name": field_name,
                "type": type_string(),
                "required": { "type": "boolean", "default": false },
                "description": { "type": "string" }
            }))
        }
    });
    json!({
        "$schema": DIALECT,
        "$id": "https://svc.dev/schemas/svc.config.schema.json",
        "title": "svc project config",
        "description": "The project's name, route prefix, enums, structures and secret requirements. See docs/config.md.",
        "type": "object",
        "required": ["project_name", "workspace_id", "api_id"],
        "additionalProperties": false,
        "properties": {
            "$schema": { "type": "string" },
            "project_name": id,
            "workspace_id": id,
            "api_id": id,
            "enums": assets_of("values", values),
            "structures": assets_of("fields", fields),
            "secrets": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "additionalProperties": false,
                    "properties": {
                        "name": { "type": "string", "pattern": "^[A-Z][A-Z0-9_]*$" },
                        "description": { "type": "string" },
                        "required": { "type": "boolean", "default": true }
                    }
                }
            }
        }
    })
}

/// A field's own properties and the constraint keys (docs/config.md, "Field constraints").
fn with_constraints(mut properties: Value) -> Value {
    let number = |d: &str| json!({ "type": "number", "description": d });
    let count = |d: &str| json!({ "type": "integer", "minimum": 0, "description": d });
    let formats: Vec<&str> = svc_types::Format::ALL.iter().map(|f| f.name()).collect();
    let constraints = json!({
        "minimum": number("Numbers: at least this."),
        "maximum": number("Numbers: at most this."),
        "exclusiveMinimum": number("Numbers: greater than this."),
        "exclusiveMaximum": number("Numbers: less than this."),
        "multipleOf": { "type": "number", "exclusiveMinimum": 0, "description": "Numbers: a multiple of this." },
        "integer": { "type": "boolean", "description": "Numbers: a whole number." },
        "minLength": count("Strings: at least this many characters."),
        "maxLength": count("Strings: at most this many characters."),
        "pattern": { "type": "string", "description": "Strings: contain a match of this regular expression (linear-time: no look-around or backreferences)." },
        "format": { "enum": formats, "description": "Strings: one of these formats." },
        "minItems": count("Arrays: at least this many items."),
        "maxItems": count("Arrays: at most this many items."),
        "uniqueItems": { "type": "boolean", "description": "Arrays: no item twice." }
    });
    for (k, v) in constraints.as_object().expect("an object") {
        properties[k] = v.clone();
    }
    properties
}

/// The schema of `svc test` files (`tests/*.yaml`).
pub fn test() -> Value {
    let scalar = json!({ "type": ["string", "number", "boolean"] });
    let scalars = json!({ "type": "object", "additionalProperties": scalar });
    // A case's request, apart: one `json!` of the whole file passes the macro's recursion limit.
    let request = json!({
        "type": "object",
        "required": ["route"],
        "additionalProperties": false,
        "properties": {
            "route": { "type": "string", "description": "The flow's path under flows/ without `.yaml` (`greeting`, `admin/users`)." },
            "method": { "enum": ["GET", "POST", "PUT", "PATCH", "DELETE"] },
            "params": scalars,
            "query": scalars,
            "headers": scalars,
            "body": { "description": "Sent as JSON." },
            "origin": { "type": "string" },
            "client_ip": { "type": "string", "description": "Sent as X-Forwarded-For from a trusted proxy; each case has its own address otherwise." },
            "key": { "type": "string", "description": "A key fixture from `keys`, sent where the route's Check API Key reads keys." },
            "token": { "type": "string", "description": "A token fixture from `tokens`, sent where the route's Check JWT reads tokens." },
            "signed": { "type": "boolean", "description": "Signed, now, as the route's Check Signature's provider signs, with the first secret it lists (its value from `secrets`)." }
        }
    });
    json!({
        "$schema": DIALECT,
        "$id": "https://svc.dev/schemas/test.schema.json",
        "title": "svc flow tests",
        "description": "Fixtures and cases that `svc test` runs over HTTP against the built server. See docs/testing.md.",
        "type": "object",
        "required": ["cases"],
        "additionalProperties": false,
        "properties": {
            "$schema": { "type": "string" },
            "keys": {
                "description": "API keys created in the run's throwaway store, by fixture name; a case sends one with `key: <name>`.",
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "required": ["owner"],
                    "additionalProperties": false,
                    "properties": { "owner": { "type": "string" } }
                }
            },
            "tokens": {
                "description": "Bearer tokens signed for the run with a test key, by fixture name; a case sends one with `token: <name>`. The test server verifies every Check JWT with that key, in place of the route's own keys.",
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "required": ["subject"],
                    "additionalProperties": false,
                    "properties": {
                        "subject": { "type": "string", "description": "Its `sub`." },
                        "scopes": { "type": "array", "items": { "type": "string" }, "description": "Its `scope`." },
                        "claims": { "type": "object", "description": "More claims (they win over the ones svc sets)." },
                        "expires_in": { "type": "string", "pattern": "^-?[0-9]+[smhd]$", "default": "1h", "description": "From now to its `exp`; `-5m` for a token that expired five minutes ago." },
                        "issuer": { "type": "string", "description": "Its `iss`; default the route's Check JWT's issuer." },
                        "audience": { "type": "string", "description": "Its `aud`; default the route's Check JWT's first audience." }
                    }
                }
            },
            "secrets": {
                "description": "Values of the project's secrets for this file's server.",
                "type": "object",
                "additionalProperties": scalar
            },
            "cases": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "request", "expect"],
                    "additionalProperties": false,
                    "properties": {
                        "name": { "type": "string", "description": "Unique in the file; what the report shows." },
                        "repeat": { "type": "integer", "minimum": 1, "maximum": 10000, "default": 1, "description": "Send the request this many times; `expect` holds for each." },
                        "advance": { "type": "string", "pattern": "^[0-9]+[smhd]$", "description": "Move the rate limiters' clock forward before the first request (`30s`, `1m`, `1h`, `1d`)." },
                        "request": request,
                        "expect": {
                            "type": "object",
                            "additionalProperties": false,
                            "properties": {
                                "status": { "type": "integer", "minimum": 100, "maximum": 599 },
                                "body": { "description": "The whole JSON body, exactly." },
                                "body_contains": { "type": "object", "description": "Values at dotted paths of the body (`error.code`, `lines.0.sku`)." },
                                "headers": {
                                    "type": "object",
                                    "description": "`present`, `absent`, or the exact value.",
                                    "additionalProperties": scalar
                                },
                                "trace": {
                                    "type": "object",
                                    "description": "The output each named check or code node took.",
                                    "additionalProperties": { "type": "string" }
                                }
                            }
                        }
                    }
                }
            }
        }
    })
}

/// A schema as the committed file holds it: pretty JSON and a final newline.
pub fn to_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("a JSON value serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod constraint_tests {
    use super::*;

    #[test]
    fn fields_accept_every_constraint_key_and_no_other() {
        let properties = with_constraints(json!({}));
        let keys: Vec<&str> = properties.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected: Vec<&str> = svc_types::constraints::KEYS.to_vec();
        expected.sort();
        let mut keys = keys;
        keys.sort();
        assert_eq!(keys, expected);
    }
}
