//! A streaming JSON writer for generated responses: typed values are serialized straight
//! into the response buffer, literal parts are written as text computed when the code
//! was generated, and no intermediate `serde_json::Value` is built.

use serde::Serialize;

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
        if let Some(Frame::Array { first }) = self.stack.last_mut() {
            if !std::mem::replace(first, false) {
                self.buf.push(b',');
            }
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
        if let Some(Frame::Object { first }) = self.stack.last_mut() {
            if !std::mem::replace(first, false) {
                self.buf.push(b',');
            }
        }
        self.buf.extend_from_slice(key_json.as_bytes());
        self.buf.push(b':');
        self.after_key = true;
    }

    /// A value of any serializable type (`None` writes `null`).
    pub fn value<T: Serialize + ?Sized>(&mut self, value: &T) {
        self.before_value();
        let start = self.buf.len();
        if serde_json::to_writer(&mut self.buf, value).is_err() {
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
    fn a_single_value() {
        let mut w = JsonWriter::with_capacity(8);
        w.value(&vec![1, 2]);
        assert_eq!(w.finish(), b"[1,2]");
    }
}
