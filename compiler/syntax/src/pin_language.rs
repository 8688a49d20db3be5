//! The pin language: the builders and modifiers a node declares its pins with, what each
//! one means, and its two spellings (Rust's `t::enum_value("Currency").port_only()`,
//! TypeScript's `t.enumValue("Currency").portOnly()`).
//!
//! Defined once, here. The two readers (`node_def` for the Rust macro's input,
//! `svc-frontend-ts`'s `pin` for TypeScript) look every word up in a [`Spelling`] and only
//! read arguments in their own syntax; what a word does to a pin, and which rules it can
//! break, is [`type_of`] and [`apply`]. The two SDKs are checked against the spellings
//! word for word, in both directions: `runtime/sdk/tests/pin_language.rs` for the Rust
//! builders, `compiler/frontend-ts/tests/pin_language.rs` for `@svc/sdk`'s `index.js` and
//! `index.d.ts`. A new modifier is a row here, a method in each SDK, and an arm of
//! [`apply`]; a reader that forgets it fails to compile (the `match`es are exhaustive).

use svc_types::TypeRef;
use svc_types::manifest::{PinDefinition, PinKind};

/// What a type builder makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builds {
    String,
    Number,
    Boolean,
    Any,
    /// A generic object; given a name (TypeScript's `t.object("Order")`), a structure.
    Object,
    /// A structure of the project's config, by name.
    Structure,
    /// A value of one of the project's enums, by name.
    Enum,
    /// An array of another builder's type.
    Array,
}

/// What a type builder takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuilderArgument {
    None,
    /// The name of an asset, as a string literal.
    Name,
    /// Nothing, or the name of an asset (TypeScript's `t.object(name?)`).
    OptionalName,
    /// Another pin builder.
    Pin,
}

/// What a modifier changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modifier {
    /// The pin may be left unwired (inputs) or unset (outputs).
    Optional,
    /// Help text the Builder shows.
    Description,
    /// The value an unwired input takes.
    Default,
    /// The pin takes a wire and no inline value.
    PortOnly,
    /// The pin takes an inline value even when port-only.
    AllowInlineValue,
    /// A field constraint, by its key (`minimum`, `maxLength`, …: `svc_types::constraints::KEYS`).
    Constraint(&'static str),
}

/// What a modifier takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModifierArgument {
    None,
    /// A string literal.
    Text,
    /// A literal of the pin's type.
    Literal,
    /// `true` or `false`.
    Flag,
    /// Nothing (meaning `true`), or `true` or `false`.
    OptionalFlag,
    /// A number literal.
    Number,
    /// A whole number literal, 0 or more.
    Count,
}

/// One word of a spelling and its meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word<M, A> {
    pub word: &'static str,
    pub means: M,
    pub takes: A,
}

pub type BuilderWord = Word<Builds, BuilderArgument>;
pub type ModifierWord = Word<Modifier, ModifierArgument>;

/// The pin language as one SDK spells it.
#[derive(Debug)]
pub struct Spelling {
    /// How a builder is written after its namespace: `t::` or `t.`.
    pub t: &'static str,
    pub seq: &'static str,
    pub type_builders: &'static [BuilderWord],
    /// The builders of sequence pins (they take no arguments); the first two, an input's
    /// and an output's, are the ones hints name.
    pub sequence_builders: &'static [&'static str],
    pub modifiers: &'static [ModifierWord],
}

const fn builder(word: &'static str, means: Builds, takes: BuilderArgument) -> BuilderWord {
    Word { word, means, takes }
}

const fn modifier(word: &'static str, means: Modifier, takes: ModifierArgument) -> ModifierWord {
    Word { word, means, takes }
}

/// A constraint modifier: `word` sets constraint `key`.
const fn constraint(word: &'static str, key: &'static str, takes: ModifierArgument) -> ModifierWord {
    Word {
        word,
        means: Modifier::Constraint(key),
        takes,
    }
}

/// The Rust SDK's spelling (`svc_sdk::pin`). Rust has no optional arguments, so
/// TypeScript's `t.object(name?)` is two functions and `.portOnly(enabled?)` is
/// `.port_only()` plus `.port_only_if(bool)`.
pub const RUST: Spelling = Spelling {
    t: "t::",
    seq: "seq::",
    type_builders: &[
        builder("string", Builds::String, BuilderArgument::None),
        builder("number", Builds::Number, BuilderArgument::None),
        builder("boolean", Builds::Boolean, BuilderArgument::None),
        builder("any", Builds::Any, BuilderArgument::None),
        builder("object", Builds::Object, BuilderArgument::None),
        builder("object_named", Builds::Structure, BuilderArgument::Name),
        builder("structure", Builds::Structure, BuilderArgument::Name),
        builder("struct", Builds::Structure, BuilderArgument::Name),
        builder("enum_value", Builds::Enum, BuilderArgument::Name),
        builder("array", Builds::Array, BuilderArgument::Pin),
    ],
    sequence_builders: &["input", "output", "in", "out"],
    modifiers: &[
        modifier("optional", Modifier::Optional, ModifierArgument::None),
        modifier("description", Modifier::Description, ModifierArgument::Text),
        modifier("default", Modifier::Default, ModifierArgument::Literal),
        modifier("port_only", Modifier::PortOnly, ModifierArgument::None),
        modifier("pin_only", Modifier::PortOnly, ModifierArgument::None),
        modifier("port_only_if", Modifier::PortOnly, ModifierArgument::Flag),
        modifier("pin_only_if", Modifier::PortOnly, ModifierArgument::Flag),
        modifier("allow_inline_value", Modifier::AllowInlineValue, ModifierArgument::None),
        modifier(
            "allow_inline_value_if",
            Modifier::AllowInlineValue,
            ModifierArgument::Flag,
        ),
        constraint("minimum", "minimum", ModifierArgument::Number),
        constraint("maximum", "maximum", ModifierArgument::Number),
        constraint("exclusive_minimum", "exclusiveMinimum", ModifierArgument::Number),
        constraint("exclusive_maximum", "exclusiveMaximum", ModifierArgument::Number),
        constraint("multiple_of", "multipleOf", ModifierArgument::Number),
        constraint("integer", "integer", ModifierArgument::None),
        constraint("min_length", "minLength", ModifierArgument::Count),
        constraint("max_length", "maxLength", ModifierArgument::Count),
        constraint("pattern", "pattern", ModifierArgument::Text),
        constraint("format", "format", ModifierArgument::Text),
        constraint("min_items", "minItems", ModifierArgument::Count),
        constraint("max_items", "maxItems", ModifierArgument::Count),
        constraint("unique_items", "uniqueItems", ModifierArgument::None),
    ],
};

/// `@svc/sdk`'s spelling (spec §2.3–2.5).
pub const TYPESCRIPT: Spelling = Spelling {
    t: "t.",
    seq: "seq.",
    type_builders: &[
        builder("string", Builds::String, BuilderArgument::None),
        builder("number", Builds::Number, BuilderArgument::None),
        builder("boolean", Builds::Boolean, BuilderArgument::None),
        builder("any", Builds::Any, BuilderArgument::None),
        builder("object", Builds::Object, BuilderArgument::OptionalName),
        builder("struct", Builds::Structure, BuilderArgument::Name),
        builder("enumValue", Builds::Enum, BuilderArgument::Name),
        builder("array", Builds::Array, BuilderArgument::Pin),
    ],
    sequence_builders: &["in", "out"],
    modifiers: &[
        modifier("optional", Modifier::Optional, ModifierArgument::None),
        modifier("description", Modifier::Description, ModifierArgument::Text),
        modifier("default", Modifier::Default, ModifierArgument::Literal),
        modifier("portOnly", Modifier::PortOnly, ModifierArgument::OptionalFlag),
        modifier("pinOnly", Modifier::PortOnly, ModifierArgument::OptionalFlag),
        modifier(
            "allowInlineValue",
            Modifier::AllowInlineValue,
            ModifierArgument::OptionalFlag,
        ),
        constraint("minimum", "minimum", ModifierArgument::Number),
        constraint("maximum", "maximum", ModifierArgument::Number),
        constraint("exclusiveMinimum", "exclusiveMinimum", ModifierArgument::Number),
        constraint("exclusiveMaximum", "exclusiveMaximum", ModifierArgument::Number),
        constraint("multipleOf", "multipleOf", ModifierArgument::Number),
        constraint("integer", "integer", ModifierArgument::None),
        constraint("minLength", "minLength", ModifierArgument::Count),
        constraint("maxLength", "maxLength", ModifierArgument::Count),
        constraint("pattern", "pattern", ModifierArgument::Text),
        constraint("format", "format", ModifierArgument::Text),
        constraint("minItems", "minItems", ModifierArgument::Count),
        constraint("maxItems", "maxItems", ModifierArgument::Count),
        constraint("uniqueItems", "uniqueItems", ModifierArgument::None),
    ],
};

impl Spelling {
    pub fn type_builder(&self, word: &str) -> Option<&'static BuilderWord> {
        self.type_builders.iter().find(|b| b.word == word)
    }

    pub fn modifier(&self, word: &str) -> Option<&'static ModifierWord> {
        self.modifiers.iter().find(|m| m.word == word)
    }

    pub fn is_sequence_builder(&self, word: &str) -> bool {
        self.sequence_builders.contains(&word)
    }

    /// The message and hint for `word`, which is no type builder.
    pub fn unknown_type_builder(&self, word: &str) -> (String, String) {
        let hint = match svc_types::assets::closest(word, self.type_builders.iter().map(|b| b.word)) {
            Some(best) => format!("did you mean `{}{best}`?", self.t),
            None => format!(
                "the type builders are {}",
                listed(self.type_builders.iter().map(|b| format!("`{}{}`", self.t, b.word)))
            ),
        };
        (format!("`{}{word}` is not a pin type builder", self.t), hint)
    }

    /// The message and hint for `word`, which is no sequence pin builder.
    pub fn unknown_sequence_builder(&self, word: &str) -> (String, String) {
        let hint = format!(
            "use {}",
            self.sequence_builders[..2]
                .iter()
                .map(|b| format!("`{}{b}()`", self.seq))
                .collect::<Vec<_>>()
                .join(" or ")
        );
        (format!("`{}{word}` is not a sequence pin builder", self.seq), hint)
    }

    /// The message and hint for `word`, which is no modifier.
    pub fn unknown_modifier(&self, word: &str) -> (String, String) {
        let hint = match svc_types::assets::closest(word, self.modifiers.iter().map(|m| m.word)) {
            Some(best) => format!("did you mean `.{best}()`?"),
            None => format!(
                "the pin modifiers are {}",
                listed(self.modifiers.iter().map(|m| format!("`.{}()`", m.word)))
            ),
        };
        (format!("`.{word}()` is not a pin modifier"), hint)
    }
}

fn listed(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

/// The argument a builder was given, read by a reader in its own syntax.
#[derive(Debug)]
pub enum BuilderValue<'a> {
    None,
    Name(String),
    Pin(&'a PinDefinition),
}

/// The type a builder makes of its argument. A reader has checked the argument's form
/// against [`BuilderWord::takes`]; a form the builder does not take is a bug of that reader.
pub fn type_of(builds: Builds, value: BuilderValue<'_>) -> Result<TypeRef, PinRule> {
    Ok(match (builds, value) {
        (Builds::String, BuilderValue::None) => TypeRef::String,
        (Builds::Number, BuilderValue::None) => TypeRef::Number,
        (Builds::Boolean, BuilderValue::None) => TypeRef::Boolean,
        (Builds::Any, BuilderValue::None) => TypeRef::Any,
        (Builds::Object, BuilderValue::None) => TypeRef::Object,
        (Builds::Object | Builds::Structure, BuilderValue::Name(name)) => TypeRef::Structure(name),
        (Builds::Enum, BuilderValue::Name(name)) => TypeRef::Enum(name),
        (Builds::Array, BuilderValue::Pin(inner)) => array_of(inner)?,
        (builds, value) => unreachable!("a reader gave {builds:?} the argument {value:?}"),
    })
}

/// The argument a modifier was given, read by a reader in its own syntax (`None` and
/// `OptionalFlag` without an argument are `Flag(true)`).
#[derive(Debug)]
pub enum ModifierValue {
    Flag(bool),
    Text(String),
    Literal(serde_json::Value),
}

/// Applies a modifier to a pin, or names the rule it breaks.
pub fn apply(pin: &mut PinDefinition, modifier: Modifier, value: ModifierValue) -> Result<(), PinRule> {
    match (modifier, value) {
        (Modifier::Optional, ModifierValue::Flag(optional)) => {
            if pin.is_sequence() {
                return Err(PinRule::SequenceCannotBe("optional"));
            }
            pin.optional = optional;
        }
        (Modifier::Description, ModifierValue::Text(text)) => pin.description = Some(text),
        (Modifier::Default, ModifierValue::Literal(value)) => {
            let PinKind::Data(pin_type) = &pin.kind else {
                return Err(PinRule::SequenceCannotBe("given a default"));
            };
            check_default(pin_type, &value)?;
            pin.default = Some(value);
        }
        (Modifier::PortOnly, ModifierValue::Flag(enabled)) => pin.port_only = enabled,
        (Modifier::AllowInlineValue, ModifierValue::Flag(enabled)) => {
            if pin.is_sequence() && enabled {
                return Err(PinRule::SequenceCannotBe("given inline values"));
            }
            pin.allow_inline_value = enabled;
        }
        (Modifier::Constraint(key), value) => {
            let PinKind::Data(pin_type) = &pin.kind else {
                return Err(PinRule::SequenceCannotBe("constrained"));
            };
            let value = match value {
                ModifierValue::Flag(b) => serde_json::Value::Bool(b),
                ModifierValue::Text(t) => serde_json::Value::String(t),
                ModifierValue::Literal(v) => v,
            };
            let before = pin.constraints.problems(pin_type);
            let mut constraints = pin.constraints.clone();
            constraints.set(key, &value).map_err(|message| PinRule::Constraint {
                message,
                hint: format!("for example `{}`", example_of(key)),
            })?;
            if let Some(p) = constraints.problems(pin_type).into_iter().find(|p| !before.contains(p)) {
                return Err(PinRule::Constraint {
                    message: p.message.replace("this field", "this pin"),
                    hint: p.hint.replace("the field", "the pin"),
                });
            }
            pin.constraints = constraints;
        }
        (modifier, value) => unreachable!("a reader gave {modifier:?} the argument {value:?}"),
    }
    if let (Some(default), Some(pin_type)) = (&pin.default, pin.type_ref())
        && let Some(broken) = svc_types::constraints::literal_breaks(pin_type, &pin.constraints, default)
    {
        return Err(PinRule::Constraint {
            message: format!(
                "the default `{default}` breaks `{}`: it {}",
                broken.constraint, broken.message
            ),
            hint: "give a default the pin's constraints accept".into(),
        });
    }
    Ok(())
}

/// A modifier call that sets `key`, for hints (in TypeScript's spelling, which is the
/// key's).
fn example_of(key: &str) -> &'static str {
    match key {
        "integer" => ".integer()",
        "uniqueItems" => ".uniqueItems()",
        "pattern" => ".pattern(\"^[A-Z]{3}$\")",
        "format" => ".format(\"email\")",
        "minLength" | "maxLength" | "minItems" | "maxItems" => ".maxLength(40)",
        _ => ".minimum(1)",
    }
}

/// A rule of pins that a definition breaks, in whichever language it is written: each
/// rule is decided once, here, and each reader only places it and spells the SDK its own
/// way (`t::array` in Rust, `t.array` in TypeScript).
#[derive(Debug, Clone, PartialEq)]
pub enum PinRule {
    /// An array of sequence pins.
    SequenceInArray,
    /// A modifier on an array's element rather than on the array.
    ModifiedElement,
    /// A modifier sequence pins cannot have: "optional", "given a default", …
    SequenceCannotBe(&'static str),
    /// A default literal that does not have the pin's type.
    DefaultMismatch { message: String, pin_type: TypeRef },
    /// A constraint that does not apply to the pin's type, cannot hold, or that the
    /// pin's default breaks.
    Constraint { message: String, hint: String },
}

impl PinRule {
    /// Whether the argument broke the rule (a default of the wrong type) rather than the
    /// builder or modifier: where a reader shows it.
    pub fn is_the_arguments(&self) -> bool {
        matches!(self, PinRule::DefaultMismatch { .. } | PinRule::Constraint { .. })
    }

    /// The message and the hint, in `spelling`'s words.
    pub fn describe(&self, spelling: &Spelling) -> (String, String) {
        let t = spelling.t;
        match self {
            PinRule::SequenceInArray => (
                "an array cannot hold sequence pins".into(),
                format!("arrays hold data: `{t}array({t}string())`"),
            ),
            PinRule::ModifiedElement => (
                "modifiers on an array's element have no effect".into(),
                format!("apply modifiers to the array itself: `{t}array({t}string()).optional()`"),
            ),
            PinRule::SequenceCannotBe(what) => (
                format!("sequence pins cannot be {what}"),
                "sequence pins only order execution; remove this modifier".into(),
            ),
            PinRule::DefaultMismatch { message, pin_type } => (
                message.clone(),
                format!("the pin is `{pin_type}`; give a default of that type"),
            ),
            PinRule::Constraint { message, hint } => (message.clone(), hint.clone()),
        }
    }
}

/// The type of an array of `inner`: data, without modifiers of its own.
pub fn array_of(inner: &PinDefinition) -> Result<TypeRef, PinRule> {
    let PinKind::Data(inner_type) = &inner.kind else {
        return Err(PinRule::SequenceInArray);
    };
    if inner.has_modifiers() {
        return Err(PinRule::ModifiedElement);
    }
    Ok(TypeRef::Array(Box::new(inner_type.clone())))
}

/// Whether `value` may be the default of a pin of type `pin_type`.
pub fn check_default(pin_type: &TypeRef, value: &serde_json::Value) -> Result<(), PinRule> {
    default_fits(pin_type, value).map_err(|message| PinRule::DefaultMismatch {
        message,
        pin_type: pin_type.clone(),
    })
}

/// Whether a default literal has the pin's type. Enum values are checked against the
/// enum by the compiler, which knows the project's enums.
fn default_fits(t: &TypeRef, v: &serde_json::Value) -> Result<(), String> {
    use serde_json::Value as J;
    match (t, v) {
        (TypeRef::Any, _) => Ok(()),
        (TypeRef::String | TypeRef::Enum(_), J::String(_)) => Ok(()),
        (TypeRef::Number, J::Number(_)) => Ok(()),
        (TypeRef::Boolean, J::Bool(_)) => Ok(()),
        (TypeRef::Array(inner), J::Array(items)) => items.iter().try_for_each(|i| default_fits(inner, i)),
        (TypeRef::Object | TypeRef::Structure(_), _) => Err("object pins cannot have a literal default".into()),
        (t, v) => Err(format!(
            "a default of `{v}` does not fit {} `{t}` pin",
            svc_types::type_ref::article(&t.to_string())
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_meaning_has_a_word_in_each_spelling() {
        for spelling in [&RUST, &TYPESCRIPT] {
            for builds in [
                Builds::String,
                Builds::Number,
                Builds::Boolean,
                Builds::Any,
                Builds::Object,
                Builds::Structure,
                Builds::Enum,
                Builds::Array,
            ] {
                let named = spelling.type_builders.iter().any(|b| {
                    b.means == builds || (builds == Builds::Structure && b.takes == BuilderArgument::OptionalName)
                });
                assert!(named, "{}: no builder makes {builds:?}", spelling.t);
            }
            for m in [
                Modifier::Optional,
                Modifier::Description,
                Modifier::Default,
                Modifier::PortOnly,
                Modifier::AllowInlineValue,
            ] {
                assert!(
                    spelling.modifiers.iter().any(|w| w.means == m),
                    "{}: no modifier {m:?}",
                    spelling.t
                );
            }
        }
    }

    #[test]
    fn words_are_unique_within_a_spelling() {
        for spelling in [&RUST, &TYPESCRIPT] {
            let mut words: Vec<&str> = spelling.type_builders.iter().map(|b| b.word).collect();
            words.sort();
            words.dedup();
            assert_eq!(words.len(), spelling.type_builders.len());
            let mut words: Vec<&str> = spelling.modifiers.iter().map(|m| m.word).collect();
            words.sort();
            words.dedup();
            assert_eq!(words.len(), spelling.modifiers.len());
        }
    }

    #[test]
    fn rules_are_decided_here() {
        let mut seq = PinDefinition::sequence();
        assert_eq!(
            apply(&mut seq, Modifier::Optional, ModifierValue::Flag(true)),
            Err(PinRule::SequenceCannotBe("optional"))
        );
        assert_eq!(
            apply(&mut seq, Modifier::AllowInlineValue, ModifierValue::Flag(true)),
            Err(PinRule::SequenceCannotBe("given inline values"))
        );
        // Turning inline values off is harmless on a sequence pin.
        assert_eq!(
            apply(&mut seq, Modifier::AllowInlineValue, ModifierValue::Flag(false)),
            Ok(())
        );
        let mut number = PinDefinition::data(TypeRef::Number);
        assert!(matches!(
            apply(&mut number, Modifier::Default, ModifierValue::Literal("x".into())),
            Err(PinRule::DefaultMismatch { .. })
        ));
        apply(&mut number, Modifier::Default, ModifierValue::Literal(3.into())).unwrap();
        assert_eq!(number.default, Some(3.into()));
        assert_eq!(
            type_of(Builds::Array, BuilderValue::Pin(&number)),
            Err(PinRule::ModifiedElement)
        );
        assert_eq!(
            type_of(Builds::Object, BuilderValue::Name("Order".into())),
            Ok(TypeRef::Structure("Order".into()))
        );
    }

    #[test]
    fn unknown_words_get_the_nearest_one() {
        assert_eq!(RUST.unknown_modifier("port_onyl").1, "did you mean `.port_only()`?");
        assert_eq!(TYPESCRIPT.unknown_modifier("portOnyl").1, "did you mean `.portOnly()`?");
        assert_eq!(TYPESCRIPT.unknown_type_builder("strng").1, "did you mean `t.string`?");
        assert_eq!(
            RUST.unknown_sequence_builder("inn").1,
            "use `seq::input()` or `seq::output()`"
        );
    }
}
