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
/// `SVC_TYPESCRIPT=engine` (to compare the two, or to rule the compiled code out); or
/// never, `SVC_TYPESCRIPT=compiled` (a call the compiled code leaves to the engine then
/// answers 500 [`DEOPT`]: to see which inputs leave the fast path).
pub const ENGINE_ENV: &str = "SVC_TYPESCRIPT";

/// The error code of a call the compiled code left to the engine, under
/// `SVC_TYPESCRIPT=compiled`.
pub const DEOPT: &str = "node_left_compiled_code";

fn engine_setting() -> &'static str {
    static SETTING: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SETTING.get_or_init(|| std::env::var(ENGINE_ENV).unwrap_or_default())
}

/// Whether `SVC_TYPESCRIPT=engine` is set (read once).
pub fn engine_only() -> bool {
    engine_setting() == "engine"
}

/// Whether `SVC_TYPESCRIPT=compiled` is set (read once).
pub fn compiled_only() -> bool {
    engine_setting() == "compiled"
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

/// Strings longer than this (in UTF-16 code units) are left to the engine, which has its
/// own memory limit: `"x".repeat(1e9)` must not allocate a gigabyte on the fast path.
const LONGEST_BUILT: f64 = (1 << 24) as f64;

/// ECMAScript's ToIntegerOrInfinity of a number: NaN is 0, the rest truncated.
fn integer_or_infinity(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.trunc() + 0.0 }
}

/// The byte offset in `s` of the UTF-16 index `index` (at most `s`'s length), or `None`
/// when it falls between the two halves of a surrogate pair: the engine's string would
/// hold half a character there, which no Rust string can.
fn byte_offset(s: &str, index: usize) -> Option<usize> {
    if s.is_ascii() {
        return Some(index.min(s.len()));
    }
    let mut units = 0;
    for (offset, c) in s.char_indices() {
        if units == index {
            return Some(offset);
        }
        units += c.len_utf16();
        if units > index {
            return None;
        }
    }
    Some(s.len())
}

/// `s.slice(start, end)`: UTF-16 indices, negative ones counted from the end.
pub fn slice(s: &str, start: f64, end: Option<f64>) -> Flow<String> {
    let len = length(s);
    let clamp = |i: f64| {
        let i = integer_or_infinity(i);
        if i < 0.0 { (len + i).max(0.0) } else { i.min(len) }
    };
    let (from, to) = (clamp(start), end.map_or(len, clamp));
    if from >= to {
        return Ok(String::new());
    }
    match (byte_offset(s, from as usize), byte_offset(s, to as usize)) {
        (Some(a), Some(b)) => Ok(s[a..b].to_string()),
        _ => deopt(),
    }
}

/// `s.charAt(index)`: the UTF-16 code unit at `index`, or `""` beyond the ends.
pub fn char_at(s: &str, index: f64) -> Flow<String> {
    let i = integer_or_infinity(index);
    if i < 0.0 || i >= length(s) {
        return Ok(String::new());
    }
    match byte_offset(s, i as usize) {
        // Half of a character above U+FFFF is not text: the engine decides.
        Some(at) => match s[at..].chars().next() {
            Some(c) if c.len_utf16() == 1 => Ok(c.to_string()),
            _ => deopt(),
        },
        None => deopt(),
    }
}

/// `s.split(separator)`, for a string separator. An empty one splits into UTF-16 code
/// units, which is text only when `s` has no character above U+FFFF.
pub fn split(s: &str, separator: &str) -> Flow<Vec<String>> {
    if separator.is_empty() {
        if s.chars().any(|c| c.len_utf16() > 1) {
            return deopt();
        }
        return Ok(s.chars().map(String::from).collect());
    }
    Ok(s.split(separator).map(str::to_string).collect())
}

/// `s.padStart(length, fill)` (`start`) or `s.padEnd(…)`; `fill` is `" "` by default.
pub fn pad(s: &str, target: f64, fill: &str, start: bool) -> Flow<String> {
    let len = length(s);
    let target = integer_or_infinity(target);
    if target <= len || fill.is_empty() {
        return Ok(s.to_string());
    }
    // A non-ASCII fill may be cut in the middle of a character; a huge one is the
    // engine's to refuse.
    if !fill.is_ascii() || target > LONGEST_BUILT {
        return deopt();
    }
    let missing = (target - len) as usize;
    let filler: String = fill.bytes().cycle().take(missing).map(char::from).collect();
    Ok(if start { filler + s } else { s.to_string() + &filler })
}

/// `s.repeat(count)`: a negative or infinite count is the engine's RangeError.
pub fn repeat(s: &str, count: f64) -> Flow<String> {
    let n = integer_or_infinity(count);
    if n < 0.0 || n.is_infinite() || length(s) * n > LONGEST_BUILT {
        return deopt();
    }
    Ok(s.repeat(n as usize))
}

/// `array.join(separator)` of strings.
pub fn join(items: &[String], separator: &str) -> String {
    items.join(separator)
}

/// `array.join(separator)` of numbers, each written as `String(x)` writes it.
pub fn join_numbers(items: &[f64], separator: &str) -> String {
    let mut out = String::new();
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        push_number(&mut out, *x);
    }
    out
}

/// `array.includes(x)` of numbers: SameValueZero, so NaN finds NaN and `0` finds `-0`.
pub fn includes_number(items: &[f64], x: f64) -> bool {
    items.iter().any(|y| *y == x || (y.is_nan() && x.is_nan()))
}

/// `x.toFixed(digits)` (ECMAScript §21.1.3.3): `digits` decimals, the nearest decimal to
/// `x`'s exact binary value with ties away from zero, `String(x)` from 1e21 on. Digits
/// outside 0–100 are the engine's RangeError.
pub fn to_fixed(x: f64, digits: f64) -> Flow<String> {
    let f = integer_or_infinity(digits);
    if !(0.0..=100.0).contains(&f) {
        return deopt();
    }
    let f = f as usize;
    if !x.is_finite() || x.abs() >= 1e21 {
        let mut out = String::new();
        push_number(&mut out, x);
        return Ok(out);
    }
    // Every double below 1e21 is written exactly by 1,100 decimals (its binary fraction
    // ends within 1,074 of them), so the digits past the `f`th decide the rounding.
    let exact = format!("{:.1100}", x.abs());
    let (whole, fraction) = exact.split_once('.').unwrap_or((&exact, ""));
    let (kept, dropped) = fraction.split_at(f);
    let mut digits: Vec<u8> = whole.bytes().chain(kept.bytes()).collect();
    let dropped = dropped.as_bytes();
    if dropped.first().is_some_and(|&d| d >= b'5') {
        // Half or more (a tie goes to the larger magnitude): carry one into the digits.
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let whole_len = digits.len() - f;
    let mut out = String::with_capacity(digits.len() + 2);
    // `-0.00` for small negatives, as JavaScript writes them; `-0` itself is `0`.
    if x < 0.0 {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&digits[..whole_len]).unwrap_or("0"));
    if f > 0 {
        out.push('.');
        out.push_str(std::str::from_utf8(&digits[whole_len..]).unwrap_or(""));
    }
    Ok(out)
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

    fn ok<T>(flow: Flow<T>) -> T {
        match flow {
            Ok(v) => v,
            Err(_) => panic!("the fast path gave up"),
        }
    }

    /// Each expected string is what Node.js 20 prints for the same call.
    #[test]
    fn to_fixed_writes_what_javascript_writes() {
        let cases: &[(f64, f64, &str)] = &[
            (1.005, 2.0, "1.00"),
            (1.5, 0.0, "2"),
            (2.5, 0.0, "3"),
            (-2.5, 0.0, "-3"),
            (1.45, 1.0, "1.4"),
            (0.5, 0.0, "1"),
            (-0.0, 2.0, "0.00"),
            (-0.0001, 2.0, "-0.00"),
            (0.000001234, 2.0, "0.00"),
            (123.456, 1.0, "123.5"),
            (9.995, 2.0, "9.99"),
            (99.995, 2.0, "100.00"),
            (0.1, 20.0, "0.10000000000000000555"),
            (1e21, 2.0, "1e+21"),
            (f64::NAN, 2.0, "NaN"),
            (-1.5, 2.5, "-1.50"),
            (33.333333333333336, 1.0, "33.3"),
        ];
        for (x, f, text) in cases {
            assert_eq!(ok(to_fixed(*x, *f)), *text, "({x}).toFixed({f})");
        }
        assert!(to_fixed(1.0, 101.0).is_err());
        assert!(to_fixed(1.0, -1.0).is_err());
    }

    #[test]
    fn strings_are_cut_by_utf16_code_units_or_left_to_the_engine() {
        assert_eq!(ok(slice("hello", 1.0, None)), "ello");
        assert_eq!(ok(slice("hello", -3.0, Some(-1.0))), "ll");
        assert_eq!(ok(slice("héllo", 1.0, Some(3.0))), "él");
        assert_eq!(ok(slice("a😀b", 1.0, Some(3.0))), "😀");
        assert!(slice("a😀b", 2.0, None).is_err());
        assert_eq!(ok(slice("abc", 2.0, Some(1.0))), "");
        assert_eq!(ok(char_at("abc", 1.0)), "b");
        assert_eq!(ok(char_at("abc", 3.0)), "");
        assert_eq!(ok(char_at("abc", -1.0)), "");
        assert_eq!(ok(char_at("é😀", 0.0)), "é");
        assert!(char_at("😀", 0.0).is_err());
        assert_eq!(ok(split("a b  c", " ")), ["a", "b", "", "c"]);
        assert_eq!(ok(split("", " ")), [""]);
        assert_eq!(ok(split("héllo", "")), ["h", "é", "l", "l", "o"]);
        assert!(split("😀", "").is_err());
        assert_eq!(ok(pad("42", 6.0, "0", true)), "000042");
        assert_eq!(ok(pad("42", 5.0, "ab", false)), "42aba");
        assert_eq!(ok(pad("42", 1.0, "0", true)), "42");
        assert_eq!(ok(pad("é", 3.0, " ", true)), "  é");
        assert!(pad("x", 3.0, "é", true).is_err());
        assert_eq!(ok(repeat("ab", 2.5)), "abab");
        assert_eq!(ok(repeat("ab", f64::NAN)), "");
        assert!(repeat("ab", -1.0).is_err());
        assert!(repeat("ab", f64::INFINITY).is_err());
        assert!(repeat("ab", 1e9).is_err());
        assert_eq!(join_numbers(&[1.0, 0.5, -0.0, 1e21], ","), "1,0.5,0,1e+21");
        assert!(includes_number(&[f64::NAN], f64::NAN));
        assert!(includes_number(&[-0.0], 0.0));
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
