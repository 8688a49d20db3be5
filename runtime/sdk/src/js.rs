//! JavaScript's semantics, in Rust, for TypeScript nodes that svc compiles to Rust
//! (docs/sdk.md, "Compiled to Rust"; docs/runtime.md, "Nodes compiled to Rust").
//! Generated code only.
//!
//! A compiled node runs on a fast path that must answer exactly what the node's
//! JavaScript answers in the engine. Where this module cannot promise that cheaply (a
//! string with non-ASCII letters to upper-case, a value the generated code did not
//! expect), it returns [`Exit::Deopt`]: the call is then made again in the engine, from
//! the start. Compiled code has no side effects before it returns (its log lines wait in
//! a buffer), so running it twice is not observable.

use crate::failure::NodeFailure;
use std::cmp::Ordering;

/// Why a compiled node's fast path stopped.
#[derive(Debug)]
pub enum Exit {
    /// `ctx.fail(…)`: the node's answer.
    Fail(NodeFailure),
    /// Something the fast path does not decide: run the call in the engine instead.
    Deopt,
}

/// What the fast path's functions return.
pub type Flow<T> = Result<T, Exit>;

/// The environment variable that makes compiled nodes run in the engine all the same:
/// `SVC_TYPESCRIPT=engine` (to compare the two, or to rule the compiled code out).
pub const ENGINE_ENV: &str = "SVC_TYPESCRIPT";

/// Whether `SVC_TYPESCRIPT=engine` is set (read once).
pub fn engine_only() -> bool {
    static ENGINE_ONLY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENGINE_ONLY.get_or_init(|| std::env::var(ENGINE_ENV).is_ok_and(|v| v == "engine"))
}

/// `ctx.fail(message, code)`, as `throw` in the engine's prelude makes it.
pub fn fail<T>(message: String, code: Option<String>) -> Flow<T> {
    Err(Exit::Fail(NodeFailure { message, code }))
}

/// Stops the fast path: the engine runs the call.
pub fn deopt<T>() -> Flow<T> {
    Err(Exit::Deopt)
}

/// `Number::toString(x)` of ECMAScript (§6.1.6.1.20) onto `out`, as `String(x)` and a
/// template literal write a number: the shortest digits that read back as `x` (ryu's),
/// laid out in JavaScript's way (`1e+21`, `1.5e-7`, `0.000001`, `100`).
pub fn push_number(out: &mut String, x: f64) {
    if x.is_nan() {
        return out.push_str("NaN");
    }
    if x == 0.0 {
        return out.push('0');
    }
    if x.is_infinite() {
        return out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
    }
    if x < 0.0 {
        out.push('-');
    }
    // ryu writes `d.ddd`, `ddd.0` or `d.ddde±x`: read its digits and exponent back.
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(x.abs());
    let (mantissa, exponent) = match text.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // The digits without the point, on the stack (ryu writes at most 17 of them).
    let mut buf = [0u8; 32];
    let all = whole.len() + fraction.len();
    buf[..whole.len()].copy_from_slice(whole.as_bytes());
    buf[whole.len()..all].copy_from_slice(fraction.as_bytes());
    let leading = buf[..all].iter().take_while(|&&b| b == b'0').count();
    let trailing = buf[leading..all].iter().rev().take_while(|&&b| b == b'0').count();
    // ASCII digits, so always text.
    let digits = std::str::from_utf8(&buf[leading..all - trailing]).unwrap_or("0");
    // `n`: where the decimal point is, counted from the first digit.
    let n = whole.len() as i32 + exponent - leading as i32;
    let k = digits.len() as i32;
    if k <= n && n <= 21 {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        let _ = std::fmt::Write::write_fmt(out, format_args!("{}", (n - 1).abs()));
    }
}

/// `Math.round(x)`: the nearest integer, halves rounded up (towards +∞), `-0` for
/// `-0.5 ≤ x < 0`.
pub fn round(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    if (-0.5..0.0).contains(&x) {
        return -0.0;
    }
    let floor = x.floor();
    // Exact: the fraction of a double is a double.
    if x - floor >= 0.5 { floor + 1.0 } else { floor }
}

/// `Math.min(a, b)`: NaN if either is, and `-0` below `+0`.
pub fn min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        if a.is_sign_negative() { a } else { b }
    } else if a < b {
        a
    } else {
        b
    }
}

/// `Math.max(a, b)`: NaN if either is, and `+0` above `-0`.
pub fn max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        if a.is_sign_positive() { a } else { b }
    } else if a > b {
        a
    } else {
        b
    }
}

/// `Math.sign(x)`.
pub fn sign(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 { x } else { x.signum() }
}

/// `Number.isInteger(x)`.
pub fn is_integer(x: f64) -> bool {
    x.is_finite() && x.trunc() == x
}

/// A number's truthiness: `0`, `-0` and `NaN` are false.
pub fn truthy(x: f64) -> bool {
    !(x == 0.0 || x.is_nan())
}

/// `s.length`: UTF-16 code units.
pub fn length(s: &str) -> f64 {
    if s.is_ascii() {
        s.len() as f64
    } else {
        s.encode_utf16().count() as f64
    }
}

/// `a < b` and friends on strings: JavaScript compares UTF-16 code units, which orders
/// characters above U+FFFF before U+E000–U+FFFF, unlike UTF-8's byte order.
pub fn compare(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

/// `s.toUpperCase()`. ASCII only on the fast path: the engine's Unicode tables, not
/// Rust's, decide the case of other letters.
pub fn to_upper_case(s: &str) -> Flow<String> {
    if s.is_ascii() {
        Ok(s.to_ascii_uppercase())
    } else {
        deopt()
    }
}

/// `s.toLowerCase()`, as [`to_upper_case`].
pub fn to_lower_case(s: &str) -> Flow<String> {
    if s.is_ascii() {
        Ok(s.to_ascii_lowercase())
    } else {
        deopt()
    }
}

/// `s.trim()` (and `trimStart`, `trimEnd`): ASCII whitespace on the fast path.
pub fn trim(s: &str, start: bool, end: bool) -> Flow<String> {
    if !s.is_ascii() {
        return deopt();
    }
    // JavaScript's ASCII whitespace: tab, LF, VT, FF, CR, space.
    let ws = |c: char| matches!(c, '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ');
    let mut t = s;
    if start {
        t = t.trim_start_matches(ws);
    }
    if end {
        t = t.trim_end_matches(ws);
    }
    Ok(t.to_string())
}

/// The properties every plain object inherits from `Object.prototype`, which `key in
/// object` finds too.
pub const OBJECT_PROTOTYPE_KEYS: &[&str] = &[
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "__proto__",
    "constructor",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "toString",
    "valueOf",
];

/// `key in object` for an object literal with these own keys.
pub fn has_key(own: &[&str], key: &str) -> bool {
    own.contains(&key) || OBJECT_PROTOTYPE_KEYS.contains(&key)
}

/// A number for an output: JSON cannot hold NaN or an infinity, and the engine answers
/// those with its own error, so the engine is asked.
pub fn finite(x: f64) -> Flow<f64> {
    if x.is_finite() { Ok(x) } else { deopt() }
}

/// A string for an output of an enum type: its value, or the engine's answer.
pub fn enum_value<E>(text: &str, from_value: fn(&str) -> Option<E>) -> Flow<E> {
    from_value(text).ok_or(Exit::Deopt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (25.5, "25.5"),
            (2.55, "2.55"),
            (0.1 + 0.2, "0.30000000000000004"),
            (100.0, "100"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (x, text) in cases {
            let mut written = String::new();
            push_number(&mut written, *x);
            assert_eq!(written, *text, "{x:e}");
        }
    }

    #[test]
    fn math_round_rounds_halves_up() {
        assert_eq!(round(2.5), 3.0);
        assert_eq!(round(-2.5), -2.0);
        assert_eq!(round(0.49999999999999994), 0.0);
        assert!(round(-0.2).is_sign_negative());
        assert_eq!(round(4503599627370497.0), 4503599627370497.0);
    }
}
