//! A streaming JSON writer for generated responses: typed values are serialized straight
//! into the response buffer, literal parts are written as text computed when the code
//! was generated, and no intermediate `serde_json::Value` is built.

use serde::Serialize;
use std::io;

/// JSON formatting for responses: like serde_json's compact output, except that numbers
/// are written as JavaScript's `JSON.stringify` writes them (`2`, not `2.0`;
/// `9007199254740992`, not `9007199254740992.0`; `83333333333333330000`, not
/// `8.333333333333333e19`; `1e+21`; `0.000001`; `-0` as `0`). svc numbers are `f64`, the
/// spec's nodes are TypeScript, and clients and snapshot tests compare the text.
#[derive(Clone, Copy, Default)]
pub struct Format;

/// Floats whose integer value is exact in an `f64`.
const EXACT: f64 = 9_007_199_254_740_992.0;

impl serde_json::ser::Formatter for Format {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        if value.fract() == 0.0 && value.abs() < EXACT {
            // Through itoa, like serde_json's integers: `write!` would go through
            // `core::fmt`, several times slower.
            serde_json::ser::CompactFormatter.write_i64(w, value as i64)
        } else {
            // serde_json writes no NaN or infinity here: it writes `null` for them first.
            let mut text = String::with_capacity(24);
            svc_sdk::__private::js::push_number(&mut text, value);
            w.write_all(text.as_bytes())
        }
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }
}

/// Serializes `value` into `buf` with [`Format`].
pub fn write_to<T: Serialize + ?Sized>(buf: &mut Vec<u8>, value: &T) -> Result<(), serde_json::Error> {
    let mut ser = serde_json::Serializer::with_formatter(buf, Format);
    value.serialize(&mut ser)
}

/// `value` as JSON bytes with [`Format`].
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut buf = Vec::with_capacity(128);
    write_to(&mut buf, value)?;
    Ok(buf)
}

enum Frame {
    Object { first: bool },
    Array { first: bool },
}

pub struct JsonWriter {
    buf: Vec<u8>,
    stack: Vec<Frame>,
    /// The next value follows a key: no separator.
    after_key: bool,
}

impl JsonWriter {
    pub fn with_capacity(n: usize) -> Self {
        JsonWriter {
            buf: Vec::with_capacity(n),
            stack: Vec::with_capacity(4),
            after_key: false,
        }
    }

    fn before_value(&mut self) {
        if std::mem::take(&mut self.after_key) {
            return;
        }
        if let Some(Frame::Array { first }) = self.stack.last_mut()
            && !std::mem::replace(first, false)
        {
            self.buf.push(b',');
        }
    }

    pub fn begin_object(&mut self) {
        self.before_value();
        self.buf.push(b'{');
        self.stack.push(Frame::Object { first: true });
    }

    pub fn end_object(&mut self) {
        self.stack.pop();
        self.buf.push(b'}');
    }

    pub fn begin_array(&mut self) {
        self.before_value();
        self.buf.push(b'[');
        self.stack.push(Frame::Array { first: true });
    }

    pub fn end_array(&mut self) {
        self.stack.pop();
        self.buf.push(b']');
    }

    /// An object member's key, given already encoded as a JSON string (`"lineCount"`).
    pub fn key(&mut self, key_json: &str) {
        if let Some(Frame::Object { first }) = self.stack.last_mut()
            && !std::mem::replace(first, false)
        {
            self.buf.push(b',');
        }
        self.buf.extend_from_slice(key_json.as_bytes());
        self.buf.push(b':');
        self.after_key = true;
    }

    /// A value of any serializable type (`None` writes `null`).
    pub fn value<T: Serialize + ?Sized>(&mut self, value: &T) {
        self.before_value();
        let start = self.buf.len();
        if write_to(&mut self.buf, value).is_err() {
            self.buf.truncate(start);
            self.buf.extend_from_slice(b"null");
        }
    }

    /// JSON text computed ahead (a literal part of the body).
    pub fn raw(&mut self, json: &str) {
        self.before_value();
        self.buf.extend_from_slice(json.as_bytes());
    }

    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_objects_and_arrays() {
        let mut w = JsonWriter::with_capacity(64);
        w.begin_object();
        w.key("\"a\"");
        w.value(&1.5f64);
        w.key("\"b\"");
        w.begin_array();
        w.raw("\"x\"");
        w.value(&Some("y"));
        w.begin_object();
        w.end_object();
        w.value(&None::<u8>);
        w.end_array();
        w.key("\"c\"");
        w.begin_object();
        w.key("\"d\"");
        w.raw("{\"e\":[1,2]}");
        w.end_object();
        w.end_object();
        let text = String::from_utf8(w.finish()).unwrap();
        assert_eq!(text, r#"{"a":1.5,"b":["x","y",{},null],"c":{"d":{"e":[1,2]}}}"#);
        let _: serde_json::Value = serde_json::from_str(&text).unwrap();
    }

    #[test]
    fn integral_numbers_are_integers() {
        assert_eq!(
            to_vec(&serde_json::json!({"a": 2.0, "b": 2.5, "c": -3.0, "d": 1e300})).unwrap(),
            br#"{"a":2,"b":2.5,"c":-3,"d":1e+300}"#
        );
        assert_eq!(to_vec(&vec![0.1 + 0.2]).unwrap(), b"[0.30000000000000004]");
    }

    /// What `JSON.stringify` writes for each (Node.js 20), byte for byte.
    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        for (value, js) in [
            (9007199254740992.0, "9007199254740992"),
            (83333333333333330000.0, "83333333333333330000"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (-0.0, "0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-2.5e-10, "-2.5e-10"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
        ] {
            assert_eq!(String::from_utf8(to_vec(&value).unwrap()).unwrap(), js, "{value:e}");
        }
    }

    #[test]
    fn a_single_value() {
        let mut w = JsonWriter::with_capacity(8);
        w.value(&vec![1, 2]);
        assert_eq!(w.finish(), b"[1,2]");
    }
}
