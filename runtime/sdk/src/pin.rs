//! Pin builders (spec §2.3–2.5).
//!
//! | spec                     | Rust                                   | type string        |
//! |--------------------------|----------------------------------------|--------------------|
//! | `t.string()`             | `t::string()`                          | `string`           |
//! | `t.number()`             | `t::number()`                          | `number`           |
//! | `t.boolean()`            | `t::boolean()`                         | `boolean`          |
//! | `t.any()`                | `t::any()`                             | `any`              |
//! | `t.object()`             | `t::object()`                          | `object`           |
//! | `t.object("Name")`       | `t::object_named("Name")`              | `object:Name`      |
//! | `t.struct("Name")`       | `t::structure("Name")`, `t::r#struct`  | `object:Name`      |
//! | `t.enumValue("Name")`    | `t::enum_value("Name")`                | `enum-value:Name`  |
//! | `t.array(inner)`         | `t::array(inner)`                      | `type:array`       |
//! | `seq.in()` / `seq.out()` | `seq::input()` / `seq::output()`       | `sequence`         |
//!
//! Rust has no optional arguments, so `t.object()` and `t.object("Name")` become two
//! functions, and `.portOnly(enabled?)` becomes `.port_only()` plus `.port_only_if(bool)`.
//!
//! These functions are the pin language's Rust spelling (`svc_syntax::pin_language::RUST`,
//! checked word for word by `tests/pin_language.rs`).
//!
//! Node definitions are also read *without running them* (by the compiler and the
//! `define_code_function_node!` macro), so write builder chains out directly inside the
//! macro; both readings give the same manifest.

use svc_types::TypeRef;
use svc_types::manifest::PinDefinition;

/// A pin under construction. Every builder returns one and every modifier chains.
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a pin builder does nothing until it is used in a node definition"]
pub struct PinBuilder {
    definition: PinDefinition,
}

impl PinBuilder {
    fn data(t: TypeRef) -> Self {
        PinBuilder {
            definition: PinDefinition::data(t),
        }
    }

    /// Marks the pin optional.
    pub fn optional(mut self) -> Self {
        self.definition.optional = true;
        self
    }

    /// Sets the help text the Builder shows.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.definition.description = Some(text.into());
        self
    }

    /// Sets the value used when the pin is left unwired.
    pub fn default(mut self, value: impl Into<serde_json::Value>) -> Self {
        self.definition.default = Some(value.into());
        self
    }

    /// Marks the pin connect-only: it must be wired, with no inline value entry.
    pub fn port_only(self) -> Self {
        self.port_only_if(true)
    }

    /// `.portOnly(enabled)`.
    pub fn port_only_if(mut self, enabled: bool) -> Self {
        self.definition.port_only = enabled;
        self
    }

    /// Alias of [`PinBuilder::port_only`].
    pub fn pin_only(self) -> Self {
        self.port_only()
    }

    /// Alias of [`PinBuilder::port_only_if`].
    pub fn pin_only_if(self, enabled: bool) -> Self {
        self.port_only_if(enabled)
    }

    /// Re-enables inline value entry on a port-only pin.
    pub fn allow_inline_value(self) -> Self {
        self.allow_inline_value_if(true)
    }

    /// `.allowInlineValue(enabled)`.
    pub fn allow_inline_value_if(mut self, enabled: bool) -> Self {
        self.definition.allow_inline_value = enabled;
        self
    }

    // Field constraints (JSON Schema's keywords, as on a structure field in the config):
    // what a valid value is beyond its type. `svc check` checks every literal and
    // default given to the pin against them; a wired value is checked before the node
    // runs unless what it comes from already guarantees them (docs/nodes.md). On an
    // array pin, `min_items`, `max_items` and `unique_items` hold the array and the
    // others each item. The compiler refuses a constraint that does not apply to the
    // pin's type; here they only record it.

    fn constrained(mut self, key: &str, value: serde_json::Value) -> Self {
        // The compiler reads the same call and reports a wrong value with its place.
        let _ = self.definition.constraints.set(key, &value);
        self
    }

    /// Numbers: at least `limit` (`minimum`).
    pub fn minimum(self, limit: impl Into<f64>) -> Self {
        self.constrained("minimum", number(limit.into()))
    }

    /// Numbers: at most `limit` (`maximum`).
    pub fn maximum(self, limit: impl Into<f64>) -> Self {
        self.constrained("maximum", number(limit.into()))
    }

    /// Numbers: greater than `limit` (`exclusiveMinimum`).
    pub fn exclusive_minimum(self, limit: impl Into<f64>) -> Self {
        self.constrained("exclusiveMinimum", number(limit.into()))
    }

    /// Numbers: less than `limit` (`exclusiveMaximum`).
    pub fn exclusive_maximum(self, limit: impl Into<f64>) -> Self {
        self.constrained("exclusiveMaximum", number(limit.into()))
    }

    /// Numbers: a multiple of `step`, greater than 0 (`multipleOf`).
    pub fn multiple_of(self, step: impl Into<f64>) -> Self {
        self.constrained("multipleOf", number(step.into()))
    }

    /// Numbers: a whole number (`integer`).
    pub fn integer(self) -> Self {
        self.constrained("integer", true.into())
    }

    /// Strings: at least `n` characters, in Unicode code points (`minLength`).
    pub fn min_length(self, n: u64) -> Self {
        self.constrained("minLength", n.into())
    }

    /// Strings: at most `n` characters, in Unicode code points (`maxLength`).
    pub fn max_length(self, n: u64) -> Self {
        self.constrained("maxLength", n.into())
    }

    /// Strings: contains a match of the regular expression `pattern` (write `^…$` for
    /// the whole string; the `regex` crate's syntax, matched in linear time).
    pub fn pattern(self, pattern: &str) -> Self {
        self.constrained("pattern", pattern.into())
    }

    /// Strings: one of the formats svc checks: `email`, `uri`, `uuid`, `date`,
    /// `date-time`, `ipv4`, `ipv6` (`format`).
    pub fn format(self, format: &str) -> Self {
        self.constrained("format", format.into())
    }

    /// Arrays: at least `n` items (`minItems`).
    pub fn min_items(self, n: u64) -> Self {
        self.constrained("minItems", n.into())
    }

    /// Arrays: at most `n` items (`maxItems`).
    pub fn max_items(self, n: u64) -> Self {
        self.constrained("maxItems", n.into())
    }

    /// Arrays: no item twice (`uniqueItems`).
    pub fn unique_items(self) -> Self {
        self.constrained("uniqueItems", true.into())
    }

    /// The finished pin definition.
    pub fn build(self) -> PinDefinition {
        self.definition
    }

    /// The type string this pin produces (`string`, `object:Order`, `type:array`, …).
    pub fn type_string(&self) -> String {
        match self.definition.type_ref() {
            Some(t) => t.pin_type_string(),
            None => svc_types::manifest::SEQUENCE_TYPE.to_string(),
        }
    }
}

/// A limit as JSON (`Constraints::set` writes a whole number as an integer).
fn number(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into)
}

impl From<PinBuilder> for PinDefinition {
    fn from(b: PinBuilder) -> Self {
        b.build()
    }
}

/// Data pin type builders.
pub mod t {
    use super::PinBuilder;
    use svc_types::TypeRef;

    /// `string`
    pub fn string() -> PinBuilder {
        PinBuilder::data(TypeRef::String)
    }

    /// `number`
    pub fn number() -> PinBuilder {
        PinBuilder::data(TypeRef::Number)
    }

    /// `boolean`
    pub fn boolean() -> PinBuilder {
        PinBuilder::data(TypeRef::Boolean)
    }

    /// `any`: an unrestricted value.
    pub fn any() -> PinBuilder {
        PinBuilder::data(TypeRef::Any)
    }

    /// `object`: a generic object.
    pub fn object() -> PinBuilder {
        PinBuilder::data(TypeRef::Object)
    }

    /// `object:<Name>`: an object of a named structure (`t.object("Name")`).
    pub fn object_named(name: &str) -> PinBuilder {
        PinBuilder::data(TypeRef::Structure(name.to_string()))
    }

    /// `object:<Name>`: the explicit structure alias (`t.struct("Name")`).
    pub fn structure(name: &str) -> PinBuilder {
        object_named(name)
    }

    /// `object:<Name>`: the spec's spelling, `t.struct("Name")`.
    pub fn r#struct(name: &str) -> PinBuilder {
        object_named(name)
    }

    /// `enum-value:<Name>`: a value of a named enum.
    pub fn enum_value(name: &str) -> PinBuilder {
        PinBuilder::data(TypeRef::Enum(name.to_string()))
    }

    /// `type:array`: an array of another builder's type (its modifiers are not kept;
    /// apply modifiers to the array).
    pub fn array(inner: PinBuilder) -> PinBuilder {
        let inner = inner.build().type_ref().cloned().unwrap_or(TypeRef::Any);
        PinBuilder::data(TypeRef::Array(Box::new(inner)))
    }
}

/// Sequence pin builders: they order execution and are port-only by default.
pub mod seq {
    use super::PinBuilder;
    use svc_types::manifest::PinDefinition;

    /// A sequence input pin (`seq.in()`).
    pub fn input() -> PinBuilder {
        PinBuilder {
            definition: PinDefinition::sequence(),
        }
    }

    /// A sequence output pin (`seq.out()`).
    pub fn output() -> PinBuilder {
        PinBuilder {
            definition: PinDefinition::sequence(),
        }
    }

    /// The spec's spelling of [`input`].
    pub fn r#in() -> PinBuilder {
        input()
    }

    /// The spec's spelling of [`output`].
    pub fn out() -> PinBuilder {
        output()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_builder_produces_its_type_string() {
        assert_eq!(t::string().type_string(), "string");
        assert_eq!(t::number().type_string(), "number");
        assert_eq!(t::boolean().type_string(), "boolean");
        assert_eq!(t::any().type_string(), "any");
        assert_eq!(t::object().type_string(), "object");
        assert_eq!(t::object_named("Order").type_string(), "object:Order");
        assert_eq!(t::structure("Order").type_string(), "object:Order");
        assert_eq!(t::r#struct("Order").type_string(), "object:Order");
        assert_eq!(t::enum_value("Color").type_string(), "enum-value:Color");
        assert_eq!(t::array(t::structure("Line")).type_string(), "type:array");
        assert_eq!(
            t::array(t::structure("Line")).build().type_ref().unwrap().element(),
            Some(&TypeRef::Structure("Line".into()))
        );
        assert_eq!(seq::input().type_string(), "sequence");
        assert_eq!(seq::r#in().build(), seq::input().build());
        assert_eq!(seq::out().build(), seq::output().build());
    }

    #[test]
    fn every_modifier_chains_on_every_builder() {
        let builders = [
            t::string(),
            t::number(),
            t::boolean(),
            t::any(),
            t::object(),
            t::object_named("A"),
            t::structure("A"),
            t::enum_value("E"),
            t::array(t::string()),
        ];
        for b in builders {
            let p = b
                .optional()
                .description("d")
                .default(json!(null))
                .port_only()
                .allow_inline_value()
                .build();
            assert!(p.optional);
            assert_eq!(p.description.as_deref(), Some("d"));
            assert_eq!(p.default, Some(json!(null)));
            assert!(p.port_only && p.allow_inline_value);
        }
    }

    #[test]
    fn port_only_and_its_alias() {
        assert!(t::string().port_only().build().port_only);
        assert!(t::string().pin_only().build().port_only);
        assert!(!t::string().pin_only_if(false).build().port_only);
        assert!(!t::string().port_only().port_only_if(false).build().port_only);
        assert!(t::string().build().accepts_inline_value());
        assert!(!t::string().port_only().build().accepts_inline_value());
        assert!(
            t::string()
                .port_only()
                .allow_inline_value()
                .build()
                .accepts_inline_value()
        );
        assert!(
            !t::string()
                .port_only()
                .allow_inline_value_if(false)
                .build()
                .accepts_inline_value()
        );
    }

    #[test]
    fn sequence_pins_are_port_only_by_default() {
        assert!(seq::input().build().port_only);
        assert!(seq::output().build().port_only);
        assert!(!seq::output().build().accepts_inline_value());
    }

    #[test]
    fn defaults_take_plain_values() {
        assert_eq!(t::string().default("EUR").build().default, Some(json!("EUR")));
        assert_eq!(t::number().default(3).build().default, Some(json!(3)));
        assert_eq!(t::boolean().default(true).build().default, Some(json!(true)));
        assert_eq!(
            t::array(t::number()).default(vec![1, 2]).build().default,
            Some(json!([1, 2]))
        );
    }
}
