//! Reading typed requests: JSON bodies and query parameters, with a 4xx JSON error that
//! names the offending field.

use crate::error::ApiError;
use http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;

/// A request body that a route may leave unread (rejected by a protection, or a route
/// without a body). hyper closes a connection whose request body was dropped before it
/// arrived in full, and the client then pays a new TCP (and TLS) handshake; so when this
/// is dropped with the body still arriving, a task reads and discards the rest, at most
/// [`DRAIN_LIMIT`] bytes within [`DRAIN_TIME`], and the connection lives on. Beyond
/// either bound the body is dropped and the connection closed, as before.
pub struct DrainOnDrop(Option<axum::body::Body>);

/// How much of an unread body is read to keep its connection alive.
pub const DRAIN_LIMIT: usize = 64 * 1024;
/// How long an unread body may take to arrive.
pub const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(2);

impl DrainOnDrop {
    pub fn new(body: axum::body::Body) -> Self {
        DrainOnDrop(Some(body))
    }

    /// The body, to be read after all.
    pub fn take(mut self) -> axum::body::Body {
        self.0.take().unwrap_or_default()
    }
}

impl Drop for DrainOnDrop {
    fn drop(&mut self) {
        use http_body::Body as _;
        use http_body_util::BodyExt;
        let Some(mut body) = self.0.take() else { return };
        if body.is_end_stream() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(tokio::time::timeout(DRAIN_TIME, async move {
            let mut seen = 0;
            while let Some(Ok(frame)) = body.frame().await {
                seen += frame.data_ref().map_or(0, |d| d.len());
                if seen > DRAIN_LIMIT {
                    return;
                }
            }
        }));
    }
}

/// Reads a JSON body's bytes, at most `limit` (413 beyond; 415 for a non-JSON
/// `Content-Type`).
pub async fn read_bytes(
    headers: &HeaderMap,
    body: axum::body::Body,
    limit: usize,
) -> Result<axum::body::Bytes, ApiError> {
    if let Some(ct) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) {
        let mime = ct.split(';').next().unwrap_or("").trim();
        let json_suffix = mime.len() >= 5 && mime.as_bytes()[mime.len() - 5..].eq_ignore_ascii_case(b"+json");
        if !(mime.eq_ignore_ascii_case("application/json") || json_suffix) {
            let mime = mime.to_ascii_lowercase();
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                format!("the body must be JSON (Content-Type: application/json), not `{mime}`"),
            ));
        }
    }
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is larger than {limit} bytes"),
        )
    };
    if headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n > limit)
    {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        // `to_bytes` reports the limit as a "length limit" error; anything else is a broken body.
        if std::error::Error::source(&e).is_some_and(|s| s.to_string().contains("length limit"))
            || e.to_string().contains("length limit")
        {
            too_large()
        } else {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_body",
                "the request body could not be read",
            )
        }
    })
}

/// Reads a JSON body of type `T`, at most `limit` bytes.
///
/// - more than `limit` bytes: 413
/// - a `Content-Type` that is not JSON: 415
/// - empty, not JSON, or not of type `T`: 400 with `field` set to the path of the first
///   field that does not fit (`lines[2].quantity`)
pub async fn read_json<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: axum::body::Body,
    limit: usize,
) -> Result<T, ApiError> {
    let bytes = read_bytes(headers, body, limit).await?;
    parse_json(&bytes)
}

/// Parses JSON bytes into `T`, naming the field that does not fit.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_body",
            "the request needs a JSON body",
        ));
    }
    // The common case first, at full speed; tracking the path costs only on failure.
    if let Ok(value) = serde_json::from_slice::<T>(bytes) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let result: Result<T, _> = serde_path_to_error::deserialize(&mut de);
    let value = match result {
        Ok(v) => v,
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let message = describe(&inner);
            let mut error = ApiError::new(StatusCode::BAD_REQUEST, "invalid_body", message);
            if path != "." && !path.is_empty() {
                error = error.field(path);
            }
            return Err(error);
        }
    };
    de.end().map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_body",
            "the body has trailing characters after the JSON value",
        )
    })?;
    Ok(value)
}

/// serde_json's message without its "at line 1 column 42" suffix (the field says where).
fn describe(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.find(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// How a query parameter or header is read: its declared type's scalar kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    String,
    Number,
    Boolean,
    /// An enum: the text is its wire value.
    Enum,
}

fn scalar_json(raw: &str, kind: Scalar) -> Option<serde_json::Value> {
    match kind {
        Scalar::String | Scalar::Enum => Some(serde_json::Value::String(raw.to_string())),
        Scalar::Number => raw
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .and_then(serde_json::Number::from_f64)
            .map(serde_json::Value::Number),
        Scalar::Boolean => match raw.trim() {
            "true" | "1" => Some(serde_json::Value::Bool(true)),
            "false" | "0" => Some(serde_json::Value::Bool(false)),
            _ => None,
        },
    }
}

/// A value of the right kind that does not deserialize: for enums, serde's message lists
/// the allowed values.
fn invalid_value(what: &str, name: &str, kind: Scalar, e: &serde_json::Error) -> ApiError {
    let mut error = invalid_param(what, name, kind);
    if kind == Scalar::Enum {
        error.message = format!("the {what} `{name}` has an {e}");
    }
    error
}

fn invalid_param(what: &str, name: &str, kind: Scalar) -> ApiError {
    let expected = match kind {
        Scalar::String => "text",
        Scalar::Number => "a number",
        Scalar::Boolean => "`true` or `false`",
        Scalar::Enum => "one of the allowed values",
    };
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "invalid_parameter",
        format!("the {what} `{name}` must be {expected}"),
    )
    .field(format!("{what}.{name}"))
}

/// A request's query parameters, parsed once.
#[derive(Debug, Default, Clone)]
pub struct Query(Vec<(String, String)>);

impl Query {
    pub fn parse(raw: Option<&str>) -> Query {
        Query(
            raw.map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
                .unwrap_or_default(),
        )
    }

    /// One parameter: `None` when absent; 400 when present twice or not of its type.
    pub fn one<T: DeserializeOwned>(&self, name: &str, kind: Scalar) -> Result<Option<T>, ApiError> {
        let mut values = self.0.iter().filter(|(k, _)| k == name);
        let Some((_, raw)) = values.next() else { return Ok(None) };
        if values.next().is_some() {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_parameter",
                format!("the query parameter `{name}` is given more than once"),
            )
            .field(format!("query.{name}")));
        }
        let value = scalar_json(raw, kind).ok_or_else(|| invalid_param("query", name, kind))?;
        serde_json::from_value(value)
            .map(Some)
            .map_err(|e| invalid_value("query", name, kind, &e))
    }

    /// A repeated parameter (`?tag=a&tag=b`): every value, in order.
    pub fn all<T: DeserializeOwned>(&self, name: &str, kind: Scalar) -> Result<Option<Vec<T>>, ApiError> {
        let mut out = Vec::new();
        for (_, raw) in self.0.iter().filter(|(k, _)| k == name) {
            let value = scalar_json(raw, kind).ok_or_else(|| invalid_param("query", name, kind))?;
            out.push(serde_json::from_value(value).map_err(|e| invalid_value("query", name, kind, &e))?);
        }
        Ok(if out.is_empty() { None } else { Some(out) })
    }
}

/// A required value that is absent: 400.
pub fn required<T>(value: Option<T>, what: &str, name: &str) -> Result<T, ApiError> {
    value.ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "missing_parameter",
            format!("the {what} `{name}` is required"),
        )
        .field(format!("{what}.{name}"))
    })
}

/// A header's value as a typed scalar: `None` when absent, 400 when not of its type.
pub fn header_value<T: DeserializeOwned>(headers: &HeaderMap, name: &str, kind: Scalar) -> Result<Option<T>, ApiError> {
    let Some(value) = headers.get(name) else {
        return Ok(None);
    };
    let raw = value.to_str().map_err(|_| invalid_param("header", name, kind))?;
    let json = scalar_json(raw, kind).ok_or_else(|| invalid_param("header", name, kind))?;
    serde_json::from_value(json)
        .map(Some)
        .map_err(|e| invalid_value("header", name, kind, &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Line {
        sku: String,
        quantity: f64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Order {
        lines: Vec<Line>,
    }

    #[test]
    fn names_the_field() {
        let e =
            parse_json::<Order>(br#"{"lines":[{"sku":"a","quantity":1},{"sku":"b","quantity":"two"}]}"#).unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert_eq!(e.field.as_deref(), Some("lines[1].quantity"));
        assert!(e.message.contains("invalid type: string \"two\""), "{}", e.message);
        let e = parse_json::<Order>(br#"{"lines":[{"sku":"a"}]}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("lines[0]"));
        assert!(e.message.contains("missing field `quantity`"));
        let e = parse_json::<Order>(br#"{"lines":[],"extra":1}"#).unwrap_err();
        assert!(e.message.contains("unknown field `extra`"));
        assert!(parse_json::<Order>(b"{").is_err());
        assert!(
            parse_json::<Order>(b"")
                .unwrap_err()
                .message
                .contains("needs a JSON body")
        );
        assert!(parse_json::<Order>(br#"{"lines":[]} x"#).is_err());
    }

    #[test]
    fn deep_nesting_is_a_400_not_a_stack_overflow() {
        // serde_json's `unbounded_depth` feature is on (see Cargo.toml); the limit of 128
        // levels must still hold for request bodies.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse_json::<serde_json::Value>(deep.as_bytes()).unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert!(e.message.contains("recursion limit exceeded"), "{}", e.message);
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Tone {
        #[serde(rename = "friendly")]
        Friendly,
        #[serde(rename = "arr")]
        Pirate,
    }

    #[test]
    fn enum_parameters_name_their_values() {
        let q = Query::parse(Some("tone=arr&bad=loud"));
        assert_eq!(q.one::<Tone>("tone", Scalar::Enum).unwrap(), Some(Tone::Pirate));
        let e = q.one::<Tone>("bad", Scalar::Enum).unwrap_err();
        assert!(
            e.message
                .contains("unknown variant `loud`, expected `friendly` or `arr`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn query_parameters() {
        let q = Query::parse(Some("page=2&flag=true&tag=a&tag=b&bad=x&dup=1&dup=2"));
        assert_eq!(q.one::<f64>("page", Scalar::Number).unwrap(), Some(2.0));
        assert_eq!(q.one::<bool>("flag", Scalar::Boolean).unwrap(), Some(true));
        assert_eq!(q.one::<f64>("missing", Scalar::Number).unwrap(), None);
        assert_eq!(
            q.all::<String>("tag", Scalar::String).unwrap(),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(
            q.one::<f64>("bad", Scalar::Number).unwrap_err().field.as_deref(),
            Some("query.bad")
        );
        assert!(q.one::<f64>("dup", Scalar::Number).is_err());
    }
}
