//! Field constraints: what a valid value of a structure field, or of a request query or
//! header input, is, beyond its type. The names and meanings are JSON Schema 2020-12's
//! (`minimum`, `maxLength`, `pattern`, `format`, …), so that `svc.config.yaml`, the
//! OpenAPI document, editors and the Builder all read the same words.
//!
//! On a field whose type is an array, the array keywords (`minItems`, `maxItems`,
//! `uniqueItems`) apply to the array and every other keyword to each item (JSON Schema
//! would write those under `items`; the two sets never overlap, so one list is enough).
//!
//! The value checks here (numbers, lengths, formats) are shared by the compiler, which
//! checks every literal of a flow against them, and by generated servers, which check
//! every request at the edge. `pattern` is matched by the caller: the compiler and the
//! runtime use one linear-time engine (the `regex` crate, built with
//! [`PATTERN_SIZE_LIMIT`]), kept out of this crate because every node crate links it.

use crate::TypeRef;
use serde::{Deserialize, Serialize};
use serde_json::Number;
use std::fmt;

/// The constraints of one field or input. Every key is optional. Written (and read) as
/// JSON Schema writes them: the keys that are set, in [`KEYS`] order, each read as
/// [`Constraints::set`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Constraints {
    pub minimum: Option<Number>,
    pub maximum: Option<Number>,
    pub exclusive_minimum: Option<Number>,
    pub exclusive_maximum: Option<Number>,
    pub multiple_of: Option<Number>,
    /// A whole number (JSON Schema's `"type": "integer"`).
    pub integer: bool,
    /// In Unicode code points, as JSON Schema counts.
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    /// A regular expression the string must contain a match of (unanchored, as in JSON
    /// Schema: write `^…$` to match the whole string).
    pub pattern: Option<String>,
    pub format: Option<Format>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
}

impl Serialize for Constraints {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let settings = self.settings();
        let mut map = serializer.serialize_map(Some(settings.len()))?;
        for (key, value) in &settings {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Constraints {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Flattened into a field or a pin: the other keys (`name`, `type`, …) are theirs.
        let map = serde_json::Map::deserialize(deserializer)?;
        let mut c = Constraints::default();
        for (key, value) in map.iter().filter(|(key, _)| Takes::of(key).is_some()) {
            c.set(key, value).map_err(serde::de::Error::custom)?;
        }
        Ok(c)
    }
}

/// The largest compiled `pattern`, in bytes of the engine's program, in `svc check` and
/// in servers alike: a pattern is written by the project's author, but `a{1000}{1000}`
/// is one line too.
pub const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// Every constraint key, as written in the config (and in JSON Schema).
pub const KEYS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "integer",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
];

/// The keys that apply to numbers, to strings and to arrays.
pub const NUMBER_KEYS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "integer",
];
pub const STRING_KEYS: &[&str] = &["minLength", "maxLength", "pattern", "format"];
pub const ARRAY_KEYS: &[&str] = &["minItems", "maxItems", "uniqueItems"];

/// What a constraint key takes: each reader (the config's YAML, a pin modifier's JSON)
/// reads a value of this kind its own way, then sets it with [`Constraints::put`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A number: the limits and `multipleOf`.
    Number,
    /// A whole number, 0 or more: lengths and item counts.
    Count,
    /// `true` or `false`: `integer`, `uniqueItems`.
    Flag,
    /// A regular expression, as a string.
    Pattern,
    /// A format's name.
    Format,
}

impl Takes {
    /// What `key` takes, or `None` when it is not one of [`KEYS`].
    pub fn of(key: &str) -> Option<Takes> {
        Some(match key {
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => Takes::Number,
            "minLength" | "maxLength" | "minItems" | "maxItems" => Takes::Count,
            "integer" | "uniqueItems" => Takes::Flag,
            "pattern" => Takes::Pattern,
            "format" => Takes::Format,
            _ => return None,
        })
    }
}

/// A constraint's value, of the kind its key [`Takes`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Setting {
    Number(Number),
    Count(u64),
    Flag(bool),
    Pattern(String),
    Format(Format),
}

/// A string format svc checks. JSON Schema's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Format {
    #[serde(rename = "email")]
    Email,
    #[serde(rename = "uri")]
    Uri,
    #[serde(rename = "uuid")]
    Uuid,
    #[serde(rename = "date")]
    Date,
    #[serde(rename = "date-time")]
    DateTime,
    #[serde(rename = "ipv4")]
    Ipv4,
    #[serde(rename = "ipv6")]
    Ipv6,
}

impl Format {
    pub const ALL: &'static [Format] = &[
        Format::Email,
        Format::Uri,
        Format::Uuid,
        Format::Date,
        Format::DateTime,
        Format::Ipv4,
        Format::Ipv6,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Format::Email => "email",
            Format::Uri => "uri",
            Format::Uuid => "uuid",
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
        }
    }

    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// Whether `s` is a value of this format.
    pub fn matches(self, s: &str) -> bool {
        match self {
            Format::Email => formats::is_email(s),
            Format::Uri => formats::is_uri(s),
            Format::Uuid => formats::is_uuid(s),
            Format::Date => formats::is_date(s),
            Format::DateTime => formats::is_date_time(s),
            Format::Ipv4 => s.parse::<std::net::Ipv4Addr>().is_ok(),
            Format::Ipv6 => s.parse::<std::net::Ipv6Addr>().is_ok(),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A constraint a value breaks: its key and what it asks, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Broken {
    /// The constraint's key (`minimum`, `format`, …).
    pub constraint: &'static str,
    /// What the constraint asks, for a message: `must be at least 1`.
    pub message: String,
}

/// A constraint that cannot hold, or does not apply to its field's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The key the problem is reported at.
    pub key: &'static str,
    pub message: String,
    pub hint: String,
}

impl Constraints {
    pub fn is_empty(&self) -> bool {
        self == &Constraints::default()
    }

    /// The constraints that are set, each with its key, in [`KEYS`] order.
    pub fn settings(&self) -> Vec<(&'static str, Setting)> {
        use Setting as S;
        let all = [
            ("minimum", self.minimum.clone().map(S::Number)),
            ("maximum", self.maximum.clone().map(S::Number)),
            ("exclusiveMinimum", self.exclusive_minimum.clone().map(S::Number)),
            ("exclusiveMaximum", self.exclusive_maximum.clone().map(S::Number)),
            ("multipleOf", self.multiple_of.clone().map(S::Number)),
            ("integer", self.integer.then_some(S::Flag(true))),
            ("minLength", self.min_length.map(S::Count)),
            ("maxLength", self.max_length.map(S::Count)),
            ("pattern", self.pattern.clone().map(S::Pattern)),
            ("format", self.format.map(S::Format)),
            ("minItems", self.min_items.map(S::Count)),
            ("maxItems", self.max_items.map(S::Count)),
            ("uniqueItems", self.unique_items.then_some(S::Flag(true))),
        ];
        all.into_iter().filter_map(|(key, value)| Some((key, value?))).collect()
    }

    /// The keys that are set, in [`KEYS`] order.
    pub fn keys(&self) -> Vec<&'static str> {
        self.settings().into_iter().map(|(key, _)| key).collect()
    }

    /// What is wrong with these constraints on a value of type `ty`: keys that do not
    /// apply to it, and limits that no value can meet. `pattern` is compiled by the
    /// caller (see the module's doc).
    pub fn problems(&self, ty: &TypeRef) -> Vec<Problem> {
        let mut out = Vec::new();
        let (item, is_array) = match ty {
            TypeRef::Array(inner) => (inner.as_ref(), true),
            other => (other, false),
        };
        let applies = |keys: &[&'static str], ok: bool, what: &str, out: &mut Vec<Problem>| {
            if ok {
                return;
            }
            for key in self.keys().into_iter().filter(|k| keys.contains(k)) {
                out.push(Problem {
                    key,
                    message: format!("`{key}` applies to {what}, and this field is `{}`", ty.raw()),
                    hint: format!("remove `{key}`, or give the field a type it applies to"),
                });
            }
        };
        let (numbers, strings) = (*item == TypeRef::Number, *item == TypeRef::String);
        applies(NUMBER_KEYS, numbers, "numbers", &mut out);
        applies(STRING_KEYS, strings, "strings", &mut out);
        applies(ARRAY_KEYS, is_array, "arrays", &mut out);
        // Limits are compared only where they apply: one problem per key, not two.
        if numbers {
            self.number_problems(&mut out);
        }
        if strings {
            length_problem(
                self.min_length,
                self.max_length,
                "minLength",
                "maxLength",
                "string",
                &mut out,
            );
        }
        if is_array {
            length_problem(
                self.min_items,
                self.max_items,
                "minItems",
                "maxItems",
                "array",
                &mut out,
            );
        }
        out
    }

    fn number_problems(&self, out: &mut Vec<Problem>) {
        let f = |n: &Option<Number>| n.as_ref().and_then(Number::as_f64);
        let low = f(&self.minimum)
            .map(|v| (v, false))
            .into_iter()
            .chain(f(&self.exclusive_minimum).map(|v| (v, true)));
        let high: Vec<(f64, bool)> = f(&self.maximum)
            .map(|v| (v, false))
            .into_iter()
            .chain(f(&self.exclusive_maximum).map(|v| (v, true)))
            .collect();
        for (lo, lo_exclusive) in low {
            for &(hi, hi_exclusive) in &high {
                let empty = if lo_exclusive || hi_exclusive {
                    lo >= hi
                } else {
                    lo > hi
                };
                if empty {
                    out.push(Problem {
                        key: if hi_exclusive { "exclusiveMaximum" } else { "maximum" },
                        message: format!(
                            "no number is both {} and {}",
                            bound_words(lo, lo_exclusive, true),
                            bound_words(hi, hi_exclusive, false)
                        ),
                        hint: "the lower limit must be below the upper one".into(),
                    });
                }
            }
        }
        if let Some(m) = f(&self.multiple_of)
            && m.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
        {
            out.push(Problem {
                key: "multipleOf",
                message: format!("`multipleOf` is {m}; it must be greater than 0"),
                hint: "for example `multipleOf: 0.01` for cents".into(),
            });
        }
    }

    /// Sets constraint `key` to `value`. A key that is not one of [`KEYS`], or a value of
    /// another kind than the key [`Takes`], is a reader's mistake: it changes nothing.
    pub fn put(&mut self, key: &str, value: Setting) {
        use Setting as S;
        match (key, value) {
            ("minimum", S::Number(n)) => self.minimum = Some(n),
            ("maximum", S::Number(n)) => self.maximum = Some(n),
            ("exclusiveMinimum", S::Number(n)) => self.exclusive_minimum = Some(n),
            ("exclusiveMaximum", S::Number(n)) => self.exclusive_maximum = Some(n),
            ("multipleOf", S::Number(n)) => self.multiple_of = Some(n),
            ("integer", S::Flag(b)) => self.integer = b,
            ("minLength", S::Count(n)) => self.min_length = Some(n),
            ("maxLength", S::Count(n)) => self.max_length = Some(n),
            ("minItems", S::Count(n)) => self.min_items = Some(n),
            ("maxItems", S::Count(n)) => self.max_items = Some(n),
            ("uniqueItems", S::Flag(b)) => self.unique_items = b,
            ("pattern", S::Pattern(p)) => self.pattern = Some(p),
            ("format", S::Format(f)) => self.format = Some(f),
            (key, value) => debug_assert!(false, "`{key}` does not take {value:?}"),
        }
    }

    /// Sets constraint `key` (one of [`KEYS`]) to `value`, as a pin modifier does
    /// (`t.number().minimum(1)`): a number for the limits, a count for lengths and item
    /// counts, a string for `pattern` and `format`, `true` for `integer` and
    /// `uniqueItems`. Returns what `value` should have been when it is not that.
    pub fn set(&mut self, key: &str, value: &serde_json::Value) -> Result<(), String> {
        use serde_json::Value as J;
        let setting = match (Takes::of(key), value) {
            (None, _) => return Err(format!("`{key}` is not a constraint")),
            // `1.0` is written `1`, as JavaScript writes it: one manifest for both SDKs.
            (Some(Takes::Number), J::Number(n)) => Setting::Number(match n.as_f64() {
                Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
                    Number::from(f as i64)
                }
                _ => n.clone(),
            }),
            (Some(Takes::Number), _) => return Err(format!("`{key}` takes a number")),
            (Some(Takes::Count), value) => Setting::Count(
                value
                    .as_u64()
                    .ok_or_else(|| format!("`{key}` takes a count: a whole number, 0 or more"))?,
            ),
            (Some(Takes::Flag), J::Bool(b)) => Setting::Flag(*b),
            (Some(Takes::Flag), _) => return Err(format!("`{key}` takes `true` or `false`")),
            (Some(Takes::Pattern), J::String(p)) => Setting::Pattern(p.clone()),
            (Some(Takes::Pattern), _) => return Err("`pattern` takes a regular expression, as a string".into()),
            (Some(Takes::Format), value) => {
                let name = value.as_str().unwrap_or_default();
                Setting::Format(Format::parse(name).ok_or_else(|| {
                    let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                    format!("unknown format `{name}`: svc checks {}", names.join(", "))
                })?)
            }
        };
        self.put(key, setting);
        Ok(())
    }

    /// Whether every value that meets `self` also meets `target`, as far as can be told
    /// key by key (a pattern implies only itself): a wire from a value checked against
    /// `self` into a pin that asks `target` needs no check of its own.
    pub fn implies(&self, target: &Constraints) -> bool {
        let f = |n: &Option<Number>| n.as_ref().and_then(Number::as_f64);
        // The lowest value `self` admits, and whether that bound is exclusive.
        let low = |c: &Constraints| -> Option<(f64, bool)> {
            match (f(&c.minimum), f(&c.exclusive_minimum)) {
                (Some(m), Some(e)) if e >= m => Some((e, true)),
                (Some(m), _) => Some((m, false)),
                (None, Some(e)) => Some((e, true)),
                (None, None) => None,
            }
        };
        let high = |c: &Constraints| -> Option<(f64, bool)> {
            match (f(&c.maximum), f(&c.exclusive_maximum)) {
                (Some(m), Some(e)) if e <= m => Some((e, true)),
                (Some(m), _) => Some((m, false)),
                (None, Some(e)) => Some((e, true)),
                (None, None) => None,
            }
        };
        let low_ok = match (low(target), low(self)) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some((t, t_ex)), Some((s, s_ex))) => s > t || (s == t && (s_ex || !t_ex)),
        };
        let high_ok = match (high(target), high(self)) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some((t, t_ex)), Some((s, s_ex))) => s < t || (s == t && (s_ex || !t_ex)),
        };
        let multiple_ok = match (f(&target.multiple_of), f(&self.multiple_of)) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(t), Some(s)) => is_multiple_of(s, t),
        };
        let at_least = |t: Option<u64>, s: Option<u64>| t.is_none_or(|t| s.is_some_and(|s| s >= t));
        let at_most = |t: Option<u64>, s: Option<u64>| t.is_none_or(|t| s.is_some_and(|s| s <= t));
        low_ok
            && high_ok
            && multiple_ok
            && (!target.integer || self.integer || f(&self.multiple_of).is_some_and(|m| m.fract() == 0.0))
            && at_least(target.min_length, self.min_length)
            && at_most(target.max_length, self.max_length)
            && (target.pattern.is_none() || target.pattern == self.pattern)
            && (target.format.is_none() || target.format == self.format)
            && at_least(target.min_items, self.min_items)
            && at_most(target.max_items, self.max_items)
            && (!target.unique_items || self.unique_items)
    }

    /// The first number constraint `v` breaks.
    pub fn check_number(&self, v: f64) -> Option<Broken> {
        let f = |n: &Option<Number>| n.as_ref().and_then(Number::as_f64);
        (self.integer.then(|| check::integer(v)).flatten())
            .or_else(|| check::minimum(v, f(&self.minimum)?))
            .or_else(|| check::exclusive_minimum(v, f(&self.exclusive_minimum)?))
            .or_else(|| check::maximum(v, f(&self.maximum)?))
            .or_else(|| check::exclusive_maximum(v, f(&self.exclusive_maximum)?))
            .or_else(|| check::multiple_of(v, f(&self.multiple_of)?))
    }

    /// The first string constraint `s` breaks, `pattern` aside (the caller matches it).
    pub fn check_string(&self, s: &str) -> Option<Broken> {
        (self.min_length.and_then(|n| check::min_length(s, n)))
            .or_else(|| check::max_length(s, self.max_length?))
            .or_else(|| check::format(s, self.format?))
    }

    /// The first array constraint an array of `len` items breaks; `distinct` says
    /// whether its items are pairwise different (only asked for under `uniqueItems`).
    pub fn check_items(&self, len: usize, distinct: impl FnOnce() -> bool) -> Option<Broken> {
        (self.min_items.and_then(|n| check::min_items(len, n)))
            .or_else(|| check::max_items(len, self.max_items?))
            .or_else(|| self.unique_items.then(|| check::unique_items(distinct())).flatten())
    }

    /// The constraints in words, for documentation (`at least 1, a whole number`).
    pub fn describe(&self) -> String {
        let f = |n: &Option<Number>| n.as_ref().and_then(Number::as_f64);
        let mut parts = Vec::new();
        if self.integer {
            parts.push("a whole number".to_string());
        }
        if let Some(m) = f(&self.minimum) {
            parts.push(bound_words(m, false, true));
        }
        if let Some(m) = f(&self.exclusive_minimum) {
            parts.push(bound_words(m, true, true));
        }
        if let Some(m) = f(&self.maximum) {
            parts.push(bound_words(m, false, false));
        }
        if let Some(m) = f(&self.exclusive_maximum) {
            parts.push(bound_words(m, true, false));
        }
        if let Some(m) = f(&self.multiple_of) {
            parts.push(format!("a multiple of {}", number_text(m)));
        }
        match (self.min_length, self.max_length) {
            (Some(lo), Some(hi)) => parts.push(format!("{lo} to {hi} characters")),
            (Some(lo), None) => parts.push(format!("at least {lo} characters")),
            (None, Some(hi)) => parts.push(format!("at most {hi} characters")),
            (None, None) => {}
        }
        if let Some(p) = &self.pattern {
            parts.push(format!("matching `{p}`"));
        }
        if let Some(format) = self.format {
            parts.push(format_words(format).to_string());
        }
        match (self.min_items, self.max_items) {
            (Some(lo), Some(hi)) => parts.push(format!("{lo} to {hi} items")),
            (Some(lo), None) => parts.push(format!("at least {lo} item{}", plural(lo))),
            (None, Some(hi)) => parts.push(format!("at most {hi} item{}", plural(hi))),
            (None, None) => {}
        }
        if self.unique_items {
            parts.push("no item repeated".into());
        }
        parts.join(", ")
    }
}

/// The first constraint a JSON literal of type `ty` breaks (a pin's default), `pattern`
/// aside: the caller matches it, with its engine.
pub fn literal_breaks(ty: &TypeRef, c: &Constraints, v: &serde_json::Value) -> Option<Broken> {
    use serde_json::Value as J;
    let item = |v: &J| match v {
        J::Number(n) => c.check_number(n.as_f64()?),
        J::String(s) => c.check_string(s),
        _ => None,
    };
    match (ty, v) {
        (TypeRef::Array(_), J::Array(items)) => {
            let distinct = || {
                let texts: Vec<String> = items.iter().map(J::to_string).collect();
                texts.iter().collect::<std::collections::BTreeSet<_>>().len() == texts.len()
            };
            c.check_items(items.len(), distinct)
                .or_else(|| items.iter().find_map(item))
        }
        _ => item(v),
    }
}

/// Whether `v` is a multiple of `m`, tolerating the binary rounding of decimal steps
/// (`0.3` is a multiple of `0.1`), as JSON Schema validators do.
pub fn is_multiple_of(v: f64, m: f64) -> bool {
    if m <= 0.0 || !v.is_finite() {
        return false;
    }
    let q = v / m;
    if !q.is_finite() {
        return false;
    }
    (q - q.round()).abs() <= 1e-9 * q.abs().max(1.0)
}

/// A number as a person writes it: `1`, `0.5`, `1000000`.
pub fn number_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn length_problem(
    min: Option<u64>,
    max: Option<u64>,
    min_key: &'static str,
    max_key: &'static str,
    what: &str,
    out: &mut Vec<Problem>,
) {
    if let (Some(lo), Some(hi)) = (min, max)
        && lo > hi
    {
        out.push(Problem {
            key: max_key,
            message: format!("`{min_key}` {lo} is above `{max_key}` {hi}: no {what} fits"),
            hint: "the lower limit must not be above the upper one".into(),
        });
    }
}

fn bound_words(v: f64, exclusive: bool, lower: bool) -> String {
    let v = number_text(v);
    match (lower, exclusive) {
        (true, false) => format!("at least {v}"),
        (true, true) => format!("greater than {v}"),
        (false, false) => format!("at most {v}"),
        (false, true) => format!("less than {v}"),
    }
}

/// One check per keyword: what a value breaks, if anything. Generated servers call
/// these one by one (straight-line code per field); the compiler calls them through
/// [`Constraints`] for literals. Both therefore word a broken constraint alike.
pub mod check {
    use super::{Broken, Format, bound_words, format_words, is_multiple_of, number_text, plural};

    fn bound(constraint: &'static str, limit: f64, exclusive: bool, lower: bool) -> Broken {
        Broken {
            constraint,
            message: format!("must be {}", bound_words(limit, exclusive, lower)),
        }
    }

    pub fn minimum(v: f64, limit: f64) -> Option<Broken> {
        (v < limit).then(|| bound("minimum", limit, false, true))
    }

    pub fn exclusive_minimum(v: f64, limit: f64) -> Option<Broken> {
        (v <= limit).then(|| bound("exclusiveMinimum", limit, true, true))
    }

    pub fn maximum(v: f64, limit: f64) -> Option<Broken> {
        (v > limit).then(|| bound("maximum", limit, false, false))
    }

    pub fn exclusive_maximum(v: f64, limit: f64) -> Option<Broken> {
        (v >= limit).then(|| bound("exclusiveMaximum", limit, true, false))
    }

    pub fn multiple_of(v: f64, step: f64) -> Option<Broken> {
        (!is_multiple_of(v, step)).then(|| Broken {
            constraint: "multipleOf",
            message: format!("must be a multiple of {}", number_text(step)),
        })
    }

    pub fn integer(v: f64) -> Option<Broken> {
        (v.fract() != 0.0 || !v.is_finite()).then(|| Broken {
            constraint: "integer",
            message: "must be a whole number".into(),
        })
    }

    /// Lengths count Unicode code points, as JSON Schema does; the byte length bounds
    /// the count, so most strings are decided without counting.
    pub fn min_length(s: &str, n: u64) -> Option<Broken> {
        let short = (s.len() as u64) < n || (s.chars().count() as u64) < n;
        short.then(|| Broken {
            constraint: "minLength",
            message: format!("must be at least {n} character{} long", plural(n)),
        })
    }

    pub fn max_length(s: &str, n: u64) -> Option<Broken> {
        let long = (s.len() as u64) > n && (s.chars().count() as u64) > n;
        long.then(|| Broken {
            constraint: "maxLength",
            message: format!("must be at most {n} character{} long", plural(n)),
        })
    }

    pub fn format(s: &str, format: Format) -> Option<Broken> {
        (!format.matches(s)).then(|| Broken {
            constraint: "format",
            message: format!("must be {}", format_words(format)),
        })
    }

    /// `matched`: whether the string contains a match of `pattern` (the caller's engine).
    pub fn pattern(matched: bool, pattern: &str) -> Option<Broken> {
        (!matched).then(|| Broken {
            constraint: "pattern",
            message: format!("must match `{pattern}`"),
        })
    }

    pub fn min_items(len: usize, n: u64) -> Option<Broken> {
        ((len as u64) < n).then(|| Broken {
            constraint: "minItems",
            message: format!("must have at least {n} item{}", plural(n)),
        })
    }

    pub fn max_items(len: usize, n: u64) -> Option<Broken> {
        ((len as u64) > n).then(|| Broken {
            constraint: "maxItems",
            message: format!("must have at most {n} item{}", plural(n)),
        })
    }

    pub fn unique_items(distinct: bool) -> Option<Broken> {
        (!distinct).then(|| Broken {
            constraint: "uniqueItems",
            message: "must not repeat an item".into(),
        })
    }
}

fn format_words(format: Format) -> &'static str {
    match format {
        Format::Email => "an e-mail address",
        Format::Uri => "an absolute URI",
        Format::Uuid => "a UUID",
        Format::Date => "a date (YYYY-MM-DD)",
        Format::DateTime => "a date and time (RFC 3339)",
        Format::Ipv4 => "an IPv4 address",
        Format::Ipv6 => "an IPv6 address",
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The format checks, each the grammar its RFC gives, written out by hand so that no
/// input can make one slow: every check is one pass over the string.
pub mod formats {
    /// RFC 5321's Mailbox, as JSON Schema's `email`: a dot-atom local part (at most 64
    /// characters) or a quoted one, `@`, and a domain of LDH labels or an address literal.
    /// One pass over the bytes with a table: servers run it on every request.
    pub fn is_email(s: &str) -> bool {
        let b = s.as_bytes();
        let Some(at) = b.iter().rposition(|&c| c == b'@') else {
            return false;
        };
        let local = &b[..at];
        if local.is_empty() || local.len() > 64 {
            return false;
        }
        let local_ok = match local {
            [b'"', quoted @ .., b'"'] if local.len() >= 2 => quoted.iter().all(|c| (b' '..=b'~').contains(c)),
            _ => is_dot_atom(local),
        };
        local_ok && is_mail_domain(&s[at + 1..])
    }

    /// RFC 5322's atext: letters, digits and ``!#$%&'*+-/=?^_`{|}~``.
    const ATEXT: [bool; 256] = {
        let mut table = [false; 256];
        let mut c = 0;
        while c < 256 {
            let b = c as u8;
            table[c] = b.is_ascii_alphanumeric()
                || matches!(b, b'!' | b'#'..=b'\'' | b'*' | b'+' | b'-' | b'/' | b'=' | b'?' | b'^'..=b'`' | b'{'..=b'~');
            c += 1;
        }
        table
    };

    /// Atoms of atext joined by single dots.
    fn is_dot_atom(b: &[u8]) -> bool {
        let mut after_dot = true;
        for &c in b {
            if c == b'.' {
                if after_dot {
                    return false;
                }
                after_dot = true;
            } else if ATEXT[c as usize] {
                after_dot = false;
            } else {
                return false;
            }
        }
        !after_dot
    }

    fn is_mail_domain(text: &str) -> bool {
        if let Some(literal) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            return literal.parse::<std::net::Ipv4Addr>().is_ok()
                || literal
                    .strip_prefix("IPv6:")
                    .is_some_and(|v6| v6.parse::<std::net::Ipv6Addr>().is_ok());
        }
        is_hostname(text)
    }

    /// LDH labels of 1 to 63 characters, not starting or ending with `-`, at most 253 in
    /// all; one pass.
    pub fn is_hostname(d: &str) -> bool {
        let b = d.as_bytes();
        if b.is_empty() || b.len() > 253 {
            return false;
        }
        let (mut len, mut prev) = (0usize, b'.');
        for &c in b {
            if c == b'.' {
                if len == 0 || prev == b'-' {
                    return false;
                }
                len = 0;
            } else if c.is_ascii_alphanumeric() || (c == b'-' && len > 0) {
                len += 1;
                if len > 63 {
                    return false;
                }
            } else {
                return false;
            }
            prev = c;
        }
        len > 0 && prev != b'-'
    }

    /// RFC 3986's URI (absolute, with a scheme): `scheme ":" …` where the rest holds
    /// only characters a URI may contain, every `%` starting an escape, `#` at most once.
    pub fn is_uri(s: &str) -> bool {
        let Some(colon) = s.find(':') else {
            return false;
        };
        let scheme = &s[..colon];
        let scheme_ok = scheme.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        if !scheme_ok {
            return false;
        }
        let rest = &s.as_bytes()[colon + 1..];
        let mut i = 0;
        let mut hashes = 0;
        while i < rest.len() {
            let b = rest[i];
            if b == b'%' {
                if i + 2 >= rest.len() || !rest[i + 1].is_ascii_hexdigit() || !rest[i + 2].is_ascii_hexdigit() {
                    return false;
                }
                i += 3;
                continue;
            }
            if b == b'#' {
                hashes += 1;
            }
            let allowed = b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&b);
            if !allowed || hashes > 1 {
                return false;
            }
            i += 1;
        }
        true
    }

    /// RFC 4122's textual form: 8-4-4-4-12 hexadecimal digits, either case.
    pub fn is_uuid(s: &str) -> bool {
        let b = s.as_bytes();
        b.len() == 36
            && b.iter().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => *c == b'-',
                _ => c.is_ascii_hexdigit(),
            })
    }

    /// RFC 3339's full-date: `YYYY-MM-DD`, a day that exists.
    pub fn is_date(s: &str) -> bool {
        is_date_bytes(s.as_bytes())
    }

    /// [`is_date`] on bytes: every format check reads bytes, never slices text by a byte
    /// index (which panics inside a multi-byte character).
    fn is_date_bytes(b: &[u8]) -> bool {
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return false;
        }
        let (Some(year), Some(month), Some(day)) = (digits(&b[0..4]), digits(&b[5..7]), digits(&b[8..10])) else {
            return false;
        };
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return false,
        };
        (1..=days).contains(&day)
    }

    /// RFC 3339's date-time: full-date `T` partial-time (fractions of a second allowed)
    /// and an offset (`Z` or `±HH:MM`). `T` and `Z` may be lowercase, as the RFC allows.
    pub fn is_date_time(s: &str) -> bool {
        let b = s.as_bytes();
        if b.len() < 20 || !is_date_bytes(&b[..10]) || !matches!(b[10], b'T' | b't') {
            return false;
        }
        let time = &b[11..];
        if time.len() < 9 || time[2] != b':' || time[5] != b':' {
            return false;
        }
        let (Some(h), Some(m), Some(sec)) = (digits(&time[0..2]), digits(&time[3..5]), digits(&time[6..8])) else {
            return false;
        };
        // 60: a leap second.
        if h > 23 || m > 59 || sec > 60 {
            return false;
        }
        let mut rest = &time[8..];
        if let Some(frac) = rest.strip_prefix(b".") {
            let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return false;
            }
            rest = &frac[n..];
        }
        match rest {
            [b'Z' | b'z'] => true,
            [b'+' | b'-', oh @ ..] if oh.len() == 5 && oh[2] == b':' => {
                matches!((digits(&oh[0..2]), digits(&oh[3..5])), (Some(h), Some(m)) if h <= 23 && m <= 59)
            }
            _ => false,
        }
    }

    fn digits(b: &[u8]) -> Option<u32> {
        if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(b.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key, set, is written in KEYS order and read back the same; a value of the
    /// wrong kind is refused as a pin modifier refuses it; other keys (a field's own) are
    /// left to whoever flattens the constraints in.
    #[test]
    fn written_and_read_as_json_schema_writes_them() {
        let all = serde_json::json!({
            "minimum": 1, "maximum": 9.5, "exclusiveMinimum": 0, "exclusiveMaximum": 10,
            "multipleOf": 0.5, "integer": true, "minLength": 1, "maxLength": 3,
            "pattern": "^[A-Z]+$", "format": "email", "minItems": 1, "maxItems": 4, "uniqueItems": true,
        });
        let read: Constraints = serde_json::from_value(all.clone()).unwrap();
        let written = serde_json::to_value(&read).unwrap();
        assert_eq!(written, all);
        let keys: Vec<&String> = written.as_object().unwrap().keys().collect();
        assert_eq!(keys, KEYS);
        assert_eq!(read.keys(), KEYS);
        let e = serde_json::from_str::<Constraints>(r#"{"minLength": -1}"#).unwrap_err();
        assert!(e.to_string().contains("`minLength` takes a count"), "{e}");
        assert_eq!(
            c(r#"{"name": "sku", "type": "string", "integer": false}"#),
            Constraints::default()
        );
        assert_eq!(serde_json::to_string(&Constraints::default()).unwrap(), "{}");
    }

    fn c(json: &str) -> Constraints {
        serde_json::from_str(json).unwrap()
    }

    /// Every check is total over text: each valid example of each format, with a
    /// multi-byte character (2, 3 and 4 bytes) put in at every position and put in place
    /// of every character, and cut at every character, is checked without a panic (a
    /// `date-time` with `é` at byte 10 once sliced text inside a character). The
    /// fuzz target `constraints` (compiler/fuzz) goes on from here with arbitrary bytes.
    #[test]
    fn every_check_is_total_over_multi_byte_text() {
        let examples = [
            "ada@example.com",
            "\"a b\"@[127.0.0.1]",
            "x@[IPv6:::1]",
            "https://example.com/a?b=%20#c",
            "123e4567-e89b-12d3-a456-426614174000",
            "2024-01-01",
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:00:00.123+01:00",
            "192.168.0.1",
            "2001:db8::1",
        ];
        let every = c(r#"{"minLength": 3, "maxLength": 30}"#);
        let mut checked = 0;
        for example in examples {
            let chars: Vec<(usize, char)> = example.char_indices().collect();
            let mut variants = Vec::new();
            for wide in ["é", "€", "😀"] {
                for at in (0..=example.len()).filter(|&i| example.is_char_boundary(i)) {
                    variants.push(format!("{}{wide}{}", &example[..at], &example[at..]));
                }
                for &(at, ch) in &chars {
                    variants.push(format!("{}{wide}{}", &example[..at], &example[at + ch.len_utf8()..]));
                }
            }
            variants.extend(chars.iter().map(|&(at, _)| example[..at].to_string()));
            for text in &variants {
                for &format in Format::ALL {
                    let _ = format.matches(text);
                    let _ = check::format(text, format);
                    let with_format = Constraints {
                        format: Some(format),
                        ..every.clone()
                    };
                    let _ = with_format.check_string(text);
                    let _ = literal_breaks(&TypeRef::String, &with_format, &serde_json::json!(text));
                }
                checked += 1;
            }
        }
        assert!(checked > 1000, "{checked}");
        assert!(!Format::DateTime.matches("2024-01-0éT00:00:00Z"));
        assert!(!Format::Date.matches("2024-01-0é"));
    }

    #[test]
    fn reads_json_schema_names_and_writes_them_back() {
        let k = c(r#"{"minimum":1,"maxLength":5,"format":"date-time","uniqueItems":true}"#);
        assert_eq!(k.keys(), ["minimum", "maxLength", "format", "uniqueItems"]);
        assert_eq!(
            serde_json::to_string(&k).unwrap(),
            r#"{"minimum":1,"maxLength":5,"format":"date-time","uniqueItems":true}"#
        );
    }

    #[test]
    fn problems_name_keys_that_do_not_apply_and_limits_no_value_meets() {
        let keys = |k: &Constraints, t: &str| -> Vec<&'static str> {
            k.problems(&TypeRef::parse(t).unwrap()).iter().map(|p| p.key).collect()
        };
        assert_eq!(keys(&c(r#"{"minLength":1}"#), "number"), ["minLength"]);
        assert_eq!(keys(&c(r#"{"minimum":1}"#), "string"), ["minimum"]);
        assert_eq!(keys(&c(r#"{"minItems":1}"#), "string"), ["minItems"]);
        assert!(keys(&c(r#"{"minItems":1,"minimum":0}"#), "number:array").is_empty());
        assert_eq!(keys(&c(r#"{"minimum":5,"maximum":4}"#), "number"), ["maximum"]);
        assert!(keys(&c(r#"{"minimum":5,"maximum":5}"#), "number").is_empty());
        assert_eq!(
            keys(&c(r#"{"minimum":5,"exclusiveMaximum":5}"#), "number"),
            ["exclusiveMaximum"]
        );
        assert_eq!(keys(&c(r#"{"multipleOf":0}"#), "number"), ["multipleOf"]);
        assert_eq!(keys(&c(r#"{"minLength":3,"maxLength":2}"#), "string"), ["maxLength"]);
        assert_eq!(keys(&c(r#"{"minItems":3,"maxItems":2}"#), "string:array"), ["maxItems"]);
    }

    #[test]
    fn numbers() {
        let k = c(r#"{"minimum":1,"maximum":50,"integer":true}"#);
        assert_eq!(k.check_number(1.0), None);
        assert_eq!(k.check_number(0.0).unwrap().constraint, "minimum");
        assert_eq!(k.check_number(0.0).unwrap().message, "must be at least 1");
        assert_eq!(k.check_number(51.0).unwrap().constraint, "maximum");
        assert_eq!(k.check_number(1.5).unwrap().constraint, "integer");
        let k = c(r#"{"exclusiveMinimum":0,"multipleOf":0.01}"#);
        assert_eq!(k.check_number(0.0).unwrap().constraint, "exclusiveMinimum");
        assert_eq!(k.check_number(0.3), None);
        assert_eq!(k.check_number(19.99), None);
        assert_eq!(k.check_number(0.005).unwrap().message, "must be a multiple of 0.01");
    }

    #[test]
    fn strings_count_code_points() {
        let k = c(r#"{"minLength":2,"maxLength":3}"#);
        assert_eq!(k.check_string("éé"), None);
        assert_eq!(k.check_string("é").unwrap().constraint, "minLength");
        assert_eq!(k.check_string("abcd").unwrap().constraint, "maxLength");
    }

    #[test]
    fn items() {
        let k = c(r#"{"minItems":1,"maxItems":2,"uniqueItems":true}"#);
        assert_eq!(k.check_items(1, || true), None);
        assert_eq!(k.check_items(0, || true).unwrap().constraint, "minItems");
        assert_eq!(k.check_items(3, || true).unwrap().constraint, "maxItems");
        assert_eq!(k.check_items(2, || false).unwrap().constraint, "uniqueItems");
    }

    #[test]
    fn formats() {
        use Format::*;
        let yes = [
            (Email, "ada@example.com"),
            (Email, "a.b+c@x-y.example"),
            (Email, "!#$%&'*+-/=?^_`{|}~@a.b"),
            (Email, "\"john doe\"@example.com"),
            (Email, "a@[127.0.0.1]"),
            (Email, "a@localhost"),
            (Uri, "https://shop.example.com/a?b=c#d"),
            (Uri, "urn:isbn:0451450523"),
            (Uri, "http://[::1]:80/%20"),
            (Uuid, "123e4567-e89b-12d3-a456-426614174000"),
            (Uuid, "123E4567-E89B-12D3-A456-426614174000"),
            (Date, "2024-02-29"),
            (Date, "2000-02-29"),
            (DateTime, "2024-02-29T12:00:00Z"),
            (DateTime, "2024-02-29t12:00:00.123456+05:30"),
            (DateTime, "1990-12-31T23:59:60z"),
            (Ipv4, "192.168.0.1"),
            (Ipv6, "::1"),
            (Ipv6, "2001:db8::8a2e:370:7334"),
        ];
        for (f, s) in yes {
            assert!(f.matches(s), "{f} should accept {s:?}");
        }
        let no = [
            (Email, "ada"),
            (Email, "ada@"),
            (Email, "@example.com"),
            (Email, "a..b@example.com"),
            (Email, "a@-x.com"),
            (Email, "a b@example.com"),
            (Uri, "/relative/path"),
            (Uri, "1http://x"),
            (Uri, "http://x/%zz"),
            (Uri, "http://x/%2"),
            (Uri, "http://x/a b"),
            (Uri, "http://x/#a#b"),
            (Uuid, "123e4567e89b12d3a456426614174000"),
            (Uuid, "123e4567-e89b-12d3-a456-42661417400g"),
            (Date, "2023-02-29"),
            (Date, "1900-02-29"),
            (Date, "2024-13-01"),
            (Date, "2024-1-01"),
            (DateTime, "2024-02-29 12:00:00Z"),
            (DateTime, "2024-02-29T24:00:00Z"),
            (DateTime, "2024-02-29T12:00:00"),
            (DateTime, "2024-02-29T12:00:00.Z"),
            (DateTime, "2024-02-29T12:00:00+0530"),
            (Ipv4, "192.168.0.01"),
            (Ipv4, "256.1.1.1"),
            (Ipv6, "1::2::3"),
        ];
        for (f, s) in no {
            assert!(!f.matches(s), "{f} should refuse {s:?}");
        }
    }

    #[test]
    fn set_takes_each_key_as_a_pin_modifier_writes_it() {
        let mut k = Constraints::default();
        k.set("minimum", &1.into()).unwrap();
        k.set("integer", &true.into()).unwrap();
        k.set("format", &"email".into()).unwrap();
        k.set("maxItems", &3.into()).unwrap();
        assert_eq!(k, c(r#"{"minimum":1,"integer":true,"format":"email","maxItems":3}"#));
        assert_eq!(
            k.set("minLength", &(-1).into()).unwrap_err(),
            "`minLength` takes a count: a whole number, 0 or more"
        );
        assert!(
            k.set("format", &"mail".into())
                .unwrap_err()
                .starts_with("unknown format `mail`")
        );
        assert_eq!(k.set("minimum", &"1".into()).unwrap_err(), "`minimum` takes a number");
    }

    #[test]
    fn implies_compares_key_by_key() {
        let implies = |a: &str, b: &str| c(a).implies(&c(b));
        assert!(implies("{}", "{}"));
        assert!(implies(r#"{"minimum":1}"#, "{}"));
        assert!(!implies("{}", r#"{"minimum":1}"#));
        assert!(implies(r#"{"minimum":2}"#, r#"{"minimum":1}"#));
        assert!(!implies(r#"{"minimum":0}"#, r#"{"minimum":1}"#));
        assert!(implies(r#"{"exclusiveMinimum":1}"#, r#"{"minimum":1}"#));
        assert!(!implies(r#"{"minimum":1}"#, r#"{"exclusiveMinimum":1}"#));
        assert!(implies(
            r#"{"maximum":5,"exclusiveMaximum":5}"#,
            r#"{"exclusiveMaximum":5}"#
        ));
        assert!(implies(r#"{"multipleOf":4}"#, r#"{"multipleOf":2,"integer":true}"#));
        assert!(!implies(r#"{"multipleOf":0.5}"#, r#"{"integer":true}"#));
        assert!(implies(
            r#"{"minLength":2,"maxLength":4}"#,
            r#"{"minLength":1,"maxLength":5}"#
        ));
        assert!(!implies(r#"{"maxLength":6}"#, r#"{"maxLength":5}"#));
        assert!(implies(r#"{"pattern":"^a"}"#, r#"{"pattern":"^a"}"#));
        assert!(!implies(r#"{"pattern":"^ab"}"#, r#"{"pattern":"^a"}"#));
        assert!(implies(
            r#"{"format":"email","maxItems":2,"uniqueItems":true}"#,
            r#"{"format":"email","maxItems":3}"#
        ));
        assert!(!implies("{}", r#"{"uniqueItems":true}"#));
    }
}
