//! Case conversion, shared so that every generator derives the same Rust names
//! from the same asset names.

/// Rust keywords that cannot be plain identifiers (they are written `r#name`, or with a
/// trailing `_` where `r#` is not allowed either). `_` is one: a name with no letters
/// or digits (`_`, `__`, `-`) converts to it.
const KEYWORDS: &[&str] = &[
    "_", "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
    "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract",
    "become", "box", "do", "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Words that cannot be raw identifiers either.
const NOT_RAW: &[&str] = &["crate", "self", "Self", "super", "_"];

/// Splits a name into words at `_`, `-`, `.`, `$`, spaces and lower→upper case changes.
/// Letters and digits of any script belong to words (pin ids may be `größe`); the names
/// of assets and flows are ASCII, for which this is the ASCII rule.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        let boundary = c.is_uppercase()
            && !current.is_empty()
            && (chars[i - 1].is_lowercase()
                || chars[i - 1].is_numeric()
                || chars.get(i + 1).is_some_and(|n| n.is_lowercase()) && chars[i - 1].is_uppercase());
        if boundary {
            out.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// `unitPrice`, `unit-price`, `UnitPrice` → `unit_price`.
pub fn to_snake(name: &str) -> String {
    let s = words(name)
        .iter()
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join("_");
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{s}")
    } else {
        s
    }
}

/// `in-progress`, `in_progress`, `inProgress` → `InProgress`. A leading digit gets a `_`.
pub fn to_upper_camel(name: &str) -> String {
    let s: String = words(name)
        .iter()
        .map(|w| {
            let mut cs = w.chars();
            match cs.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + &cs.as_str().to_ascii_lowercase(),
                None => String::new(),
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{s}")
    } else {
        s
    }
}

/// `"price-order"` → `"PRICE_ORDER"`.
pub fn to_shouty_snake(name: &str) -> String {
    to_snake(name).to_ascii_uppercase()
}

/// Whether `name` is a Rust keyword (and so must be written as a raw identifier).
pub fn is_keyword(name: &str) -> bool {
    KEYWORDS.contains(&name)
}

/// Whether `name` can be written as a raw identifier `r#name`.
pub fn can_be_raw(name: &str) -> bool {
    !NOT_RAW.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake() {
        for (name, snake) in [
            ("unitPrice", "unit_price"),
            ("unit-price", "unit_price"),
            ("UnitPrice", "unit_price"),
            ("HTTPServer", "http_server"),
            ("sku2Code", "sku2_code"),
            ("1st", "_1st"),
            ("type", "type"),
        ] {
            assert_eq!(to_snake(name), snake, "{name}");
        }
    }

    #[test]
    fn upper_camel() {
        for (name, camel) in [
            ("in-progress", "InProgress"),
            ("in_progress", "InProgress"),
            ("EUR", "Eur"),
            ("inProgress", "InProgress"),
            ("2fa", "_2fa"),
            ("a.b", "AB"),
        ] {
            assert_eq!(to_upper_camel(name), camel, "{name}");
        }
    }

    #[test]
    fn keywords() {
        assert!(is_keyword("type"));
        assert!(!is_keyword("kind"));
        assert!(!can_be_raw("self"));
        // A field named `_` (or anything with no letters or digits) is not an identifier.
        assert_eq!(to_snake("_"), "_");
        assert!(is_keyword("_") && !can_be_raw("_"));
    }
}
