//! What counts as a valid name, everywhere in svc.
//!
//! | Name                     | Rule                                   | Example            |
//! |--------------------------|----------------------------------------|--------------------|
//! | node key                 | `<namespace>.<node-name>`, lower kebab | `acme.price-order` |
//! | structure / enum         | UpperCamelCase                         | `OrderLine`        |
//! | structure field          | a JSON-friendly identifier             | `unitPrice`        |
//! | enum key                 | a JSON-friendly identifier             | `eur`              |
//! | secret                   | an environment-variable name           | `STRIPE_API_KEY`   |
//! | pin id                   | a JavaScript identifier                | `unitPrice`        |
//! | path parameter           | snake_case                             | `order_id`         |
//! | flow node id             | lower kebab or snake case              | `check-key`        |
//!
//! Secrets follow environment-variable rules because in development `ctx.secret(name)`
//! reads the environment variable of the same name (spec §2.6).

/// Why a name was rejected.
pub type NameError = crate::Invalid;

fn err(message: impl Into<String>, hint: impl Into<String>) -> Result<(), NameError> {
    Err(NameError {
        message: message.into(),
        hint: hint.into(),
    })
}

fn is_lower_kebab_segment(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z'))
        && s.chars().all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-' | '_'))
        && !s.ends_with('-')
        && !s.contains("--")
}

/// One part of a node key: lower kebab case, `[a-z][a-z0-9]*(-[a-z0-9]+)*`. Unlike node
/// ids in flows, no `_`: a node key is a published identifier, and one spelling per word
/// boundary keeps `acme.price_order` and `acme.price-order` from being two nodes.
fn is_node_key_part(s: &str) -> bool {
    is_lower_kebab_segment(s) && !s.contains('_')
}

/// A node key: `<namespace>.<node-name>`, both parts lower kebab case.
pub fn check_node_key(key: &str) -> Result<(), NameError> {
    let Some((namespace, name)) = key.split_once('.') else {
        return err(
            format!("node key `{key}` has no namespace"),
            "node keys are namespaced as `<namespace>.<node-name>`, for example `acme.price-order`",
        );
    };
    if name.contains('.') {
        return err(
            format!("node key `{key}` has more than one `.`"),
            "node keys have exactly two parts, `<namespace>.<node-name>`",
        );
    }
    for (what, part) in [("namespace", namespace), ("node name", name)] {
        if !is_node_key_part(part) {
            // Suggest the kebab spelling when that alone makes the key valid.
            let kebab = key.to_ascii_lowercase().replace('_', "-");
            let hint = if kebab != key && check_node_key(&kebab).is_ok() {
                format!(
                    "node keys are lower kebab case: lowercase letters, digits and single `-` between words, starting with a letter; write `{kebab}`"
                )
            } else {
                "node keys are lower kebab case: lowercase letters, digits and single `-` between words, starting with a letter, for example `acme.price-order`".to_string()
            };
            return err(
                format!("the {what} `{part}` in node key `{key}` is not lower kebab case"),
                hint,
            );
        }
    }
    Ok(())
}

/// A structure or enum name: UpperCamelCase ASCII.
pub fn check_asset_name(name: &str) -> Result<(), NameError> {
    let mut chars = name.chars();
    match chars.next() {
        None => err(
            "the name is empty",
            "structure and enum names are UpperCamelCase, for example `OrderLine`",
        ),
        Some('A'..='Z') if name == "Self" => err(
            "`Self` is a Rust keyword and cannot name a type",
            "choose another name, for example `SelfInfo`",
        ),
        Some('A'..='Z') if chars.all(|c| c.is_ascii_alphanumeric()) => Ok(()),
        _ => err(
            format!("`{name}` is not an UpperCamelCase name"),
            format!(
                "structure and enum names start with an uppercase letter and contain only letters and digits, for example `{}`",
                crate::case::to_upper_camel(name).trim_start_matches('_')
            ),
        ),
    }
}

/// A structure field name or an enum key: letters, digits and `_`, not starting with a digit.
pub fn check_field_name(name: &str) -> Result<(), NameError> {
    let mut chars = name.chars();
    match chars.next() {
        None => err(
            "the name is empty",
            "field names are identifiers such as `unitPrice` or `unit_price`",
        ),
        Some(c) if (c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') => {
            Ok(())
        }
        _ => err(
            format!("`{name}` is not a valid field name"),
            "field names contain letters, digits and `_` and do not start with a digit, for example `unitPrice`",
        ),
    }
}

/// A secret name: an environment variable name in upper snake case.
pub fn check_secret_name(name: &str) -> Result<(), NameError> {
    let mut chars = name.chars();
    match chars.next() {
        Some('A'..='Z') if chars.all(|c| matches!(c, 'A'..='Z' | '0'..='9' | '_')) => Ok(()),
        _ => err(
            format!("`{name}` is not a valid secret name"),
            "secret names are upper snake case, like environment variables (in development a secret is read from the environment variable of the same name), for example `STRIPE_API_KEY`",
        ),
    }
}

/// A pin id: any identifier a JavaScript object literal takes without quotes
/// (`unitPrice`, `unit_price`, `UnitPrice`, `$ref`, `_private`, `größe`), as the spec's
/// users write them. Generated Rust names its fields with [`pin_field`] and renames them
/// to the id, so the id is what manifests, JSON and diagnostics show.
pub fn check_pin_id(id: &str) -> Result<(), NameError> {
    let mut chars = id.chars();
    let start =
        |c: char| c == '$' || c == '_' || c.is_ascii_alphabetic() || (!c.is_ascii() && unicode_ident::is_xid_start(c));
    let part = |c: char| {
        c == '$' || c == '_' || c.is_ascii_alphanumeric() || (!c.is_ascii() && unicode_ident::is_xid_continue(c))
    };
    if chars.next().is_some_and(start) && chars.all(part) {
        Ok(())
    } else {
        err(
            format!("`{id}` is not a valid pin id"),
            "pin ids are identifiers: letters, digits, `_` and `$`, not starting with a digit, for example `unitPrice` or `unit_price`",
        )
    }
}

/// The Rust field a pin becomes in generated `Inputs` / `Outputs` structs: its snake_case
/// form (`maxTags` → `max_tags`, `$ref` → `ref`, which is written `r#ref`), as structure
/// fields are. Rust node code reads `ctx.inputs.max_tags`; everything else (JSON, flows,
/// manifests, TypeScript) uses the id as written. Two ids of one node that give one field
/// are refused by [`pin_fields_collide`].
pub fn pin_field(id: &str) -> String {
    match crate::case::to_snake(id).as_str() {
        // `$`, `_`, `$$`: no letters at all.
        "_" => "pin".to_string(),
        field => field.to_string(),
    }
}

/// The first pin of `ids` whose Rust field ([`pin_field`]) an earlier one already has,
/// with that earlier id: `maxTags` and `max_tags` on one node would be one field.
pub fn pin_fields_collide<'a>(ids: impl IntoIterator<Item = &'a str>) -> Option<(&'a str, &'a str)> {
    let mut seen: Vec<(String, &str)> = Vec::new();
    for id in ids {
        let field = pin_field(id);
        if let Some((_, earlier)) = seen.iter().find(|(f, _)| *f == field) {
            return Some((earlier, id));
        }
        seen.push((field, id));
    }
    None
}

/// A path parameter (`/orders/{order_id}`): snake_case, as it becomes a Rust name and the
/// key of `request.params`.
pub fn check_path_param(name: &str) -> Result<(), NameError> {
    let mut chars = name.chars();
    let ok = matches!(chars.next(), Some('a'..='z' | '_'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
        && name != "_";
    if ok {
        Ok(())
    } else {
        err(
            format!("`{name}` is not a snake_case name"),
            "path parameters are snake_case, for example `order_id`",
        )
    }
}

/// An id of a node inside a flow file.
pub fn check_flow_node_id(id: &str) -> Result<(), NameError> {
    if id == "request" || id == "start" {
        return err(
            format!("`{id}` is reserved"),
            "`request` names the incoming request in wires and `start` names the Start node; choose another id",
        );
    }
    if is_lower_kebab_segment(id) {
        return Ok(());
    }
    let lower = id.to_ascii_lowercase();
    let hint = if lower != id && is_lower_kebab_segment(&lower) {
        format!("node ids use lowercase letters, digits, `-` and `_`, starting with a letter: write `{lower}`")
    } else {
        "node ids use lowercase letters, digits, `-` and `_`, starting with a letter, for example `check-key`"
            .to_string()
    };
    err(format!("`{id}` is not a valid node id"), hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_keys() {
        assert!(check_node_key("acme.price-order").is_ok());
        assert!(check_node_key("a1.b-2").is_ok());
        let e = check_node_key("a1.b_2").unwrap_err();
        assert!(e.hint.contains("`a1.b-2`"), "{e:?}");
        for key in [
            "acme_co.price",
            "acme.price--order",
            "price-order",
            "acme.price.order",
            "Acme.price",
            "acme.",
            "acme.price-",
            ".price",
        ] {
            assert!(check_node_key(key).is_err(), "{key}");
        }
    }

    #[test]
    fn asset_names() {
        assert!(check_asset_name("OrderLine").is_ok());
        for name in ["orderLine", "Order_Line", ""] {
            assert!(check_asset_name(name).is_err(), "{name}");
        }
        let e = check_asset_name("order-line").unwrap_err();
        assert!(e.hint.contains("OrderLine"), "{e:?}");
    }

    #[test]
    fn field_and_secret_names() {
        for (name, ok) in [("unitPrice", true), ("_x", true), ("1x", false), ("a-b", false)] {
            assert_eq!(check_field_name(name).is_ok(), ok, "{name}");
        }
        for (name, ok) in [("STRIPE_API_KEY", true), ("stripe", false), ("1A", false)] {
            assert_eq!(check_secret_name(name).is_ok(), ok, "{name}");
        }
    }

    #[test]
    fn pin_and_node_ids() {
        for id in [
            "unit_price",
            "unitPrice",
            "UnitPrice",
            "$ref",
            "_private",
            "_",
            "größe",
            "x1",
            "ÆtherId",
            "$",
        ] {
            assert!(check_pin_id(id).is_ok(), "{id}");
        }
        for id in ["1st", "a-b", "a b", "", "a.b", "é-x"] {
            assert!(check_pin_id(id).is_err(), "{id}");
        }
        assert!(check_path_param("order_id").is_ok());
        assert!(check_path_param("orderId").is_err());
        assert!(check_flow_node_id("check-key").is_ok());
        assert!(check_flow_node_id("request").is_err());
        assert!(check_flow_node_id("Check").is_err());
    }

    #[test]
    fn pin_fields_are_snake_case_rust_names() {
        for (id, field) in [
            ("unit_price", "unit_price"),
            ("maxTags", "max_tags"),
            ("MaxTags", "max_tags"),
            ("urgentEnough", "urgent_enough"),
            ("HTTPServer", "http_server"),
            ("sku2Code", "sku2_code"),
            ("$ref", "ref"),
            ("_private", "private"),
            ("$", "pin"),
            ("_", "pin"),
            ("größe", "größe"),
            ("ÆtherId", "æther_id"),
            ("type", "type"),
        ] {
            assert_eq!(pin_field(id), field, "{id}");
        }
        assert_eq!(
            pin_fields_collide(["maxTags", "other", "max_tags"]),
            Some(("maxTags", "max_tags"))
        );
        assert_eq!(pin_fields_collide(["$ref", "ref"]), Some(("$ref", "ref")));
        assert_eq!(pin_fields_collide(["a", "b", "aB"]), None);
    }
}
