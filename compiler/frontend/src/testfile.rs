//! Flow test files (`tests/*.yaml`): API key, token and secret fixtures, and cases, each a
//! request (or a repeated one) and what must come back. Read like flows: every problem
//! is a located diagnostic, all of them at once. What a test names in the project (a
//! route, a node of its trace) is checked by `svc test` against the checked project.

use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::flow::{Spanned, parse_window};
use crate::source::FileId;
use crate::yaml::{self, MapReader, Node, Value, expect_str};

/// One test file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TestFile {
    pub keys: Vec<KeyFixture>,
    pub tokens: Vec<TokenFixture>,
    pub secrets: Vec<(Spanned<String>, String)>,
    pub cases: Vec<Case>,
}

/// An API key created in the throwaway store before the cases run; cases send it by name.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyFixture {
    pub name: Spanned<String>,
    pub owner: String,
}

/// A bearer token `svc test` signs for the run, with a test key the server is given in
/// place of the route's Check JWT keys; cases send it by name.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenFixture {
    pub name: Spanned<String>,
    /// Its `sub`.
    pub subject: String,
    /// Its `scope` (space-separated), when given.
    pub scopes: Vec<String>,
    /// More claims, as written (they win over the ones svc sets).
    pub claims: serde_json::Map<String, serde_json::Value>,
    /// Seconds from now to its `exp`; negative for a token already expired.
    pub expires_in: i64,
    /// Its `iss` and `aud`, when not the route's Check JWT's issuer and first audience.
    pub issuer: Option<String>,
    pub audience: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub name: Spanned<String>,
    pub request: TestRequest,
    /// How many times the request is sent; `expect` holds for every one.
    pub repeat: u32,
    /// Seconds to move the rate limiters' clock forward before the first request.
    pub advance_seconds: u64,
    pub expect: Expect,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TestRequest {
    /// The flow: its path under `flows/` without `.yaml`.
    pub route: Spanned<String>,
    /// Default: the flow's first method.
    pub method: Option<Spanned<String>>,
    /// Values of the route's `{parameters}`.
    pub params: Vec<(Spanned<String>, String)>,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub body: Option<serde_json::Value>,
    /// Sent as the `Origin` header.
    pub origin: Option<String>,
    /// The client's address, sent as `X-Forwarded-For` from a trusted proxy.
    pub client_ip: Option<Spanned<std::net::IpAddr>>,
    /// A key fixture, sent where the flow's Check API Key reads keys.
    pub key: Option<Spanned<String>>,
    /// A token fixture, sent where the flow's Check JWT reads tokens.
    pub token: Option<Spanned<String>>,
    /// Signed as the flow's Check Signature's provider signs, now, with the first secret
    /// it lists (its value from `secrets:`).
    pub signed: Option<Spanned<bool>>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Expect {
    pub status: Option<Spanned<u16>>,
    /// The whole body, exactly.
    pub body: Option<serde_json::Value>,
    /// Values at dotted paths of the body (`greeting.message`, `lines.0.sku`).
    pub body_contains: Vec<(Spanned<String>, serde_json::Value)>,
    pub headers: Vec<(Spanned<String>, HeaderExpect)>,
    /// Which way named checks and nodes went (`auth: valid`), in the server's trace.
    pub trace: Vec<(Spanned<String>, Spanned<String>)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum HeaderExpect {
    Present,
    Absent,
    Equals(String),
}

const TOP_KEYS: &[&str] = &["$schema", "keys", "tokens", "secrets", "cases"];
const TOKEN_KEYS: &[&str] = &["subject", "scopes", "claims", "expires_in", "issuer", "audience"];
const CASE_KEYS: &[&str] = &["name", "request", "repeat", "advance", "expect"];
const REQUEST_KEYS: &[&str] = &[
    "route",
    "method",
    "params",
    "query",
    "headers",
    "body",
    "origin",
    "client_ip",
    "key",
    "token",
    "signed",
];
const EXPECT_KEYS: &[&str] = &["status", "body", "body_contains", "headers", "trace"];
const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];

/// Reads one test file. Returns `None` when it is not a test file at all.
pub fn load(file: FileId, text: &str, diags: &mut Diagnostics) -> Option<TestFile> {
    let root = yaml::parse_reporting(file, text, diags)?;
    let mut top = MapReader::new(&root, "the test file", diags)?;
    let mut out = TestFile::default();
    if let Some(keys) = top.get("keys") {
        out.keys = read_keys(keys, diags);
    }
    if let Some(tokens) = top.get("tokens") {
        out.tokens = read_tokens(tokens, diags);
    }
    if let Some(secrets) = top.get("secrets") {
        out.secrets = pairs(secrets, "`secrets`", diags);
    }
    match top.required(
        "cases",
        "list the cases: `cases: [{ name: …, request: …, expect: … }]`",
        diags,
    ) {
        Some(Node {
            value: Value::Seq(items),
            ..
        }) => {
            for item in items {
                if let Some(case) = read_case(item, diags) {
                    out.cases.push(case);
                }
            }
        }
        Some(other) => diags.push(other.wrong_shape("a list of cases", "write `cases:` followed by `- name: …` items")),
        None => {}
    }
    let _ = top.get("$schema");
    top.finish(TOP_KEYS, diags);
    let mut seen: Vec<&Spanned<String>> = Vec::new();
    for case in &out.cases {
        if let Some(first) = seen.iter().find(|n| n.value == case.name.value) {
            diags.push(
                Diagnostic::new(
                    Code::DuplicateTestCase,
                    case.name.span,
                    format!("two cases are named `{}`", case.name.value),
                )
                .label("second case with this name")
                .help(format!(
                    "the first is at line {}; give each case its own name, so that reports can tell them apart",
                    first.span.line
                )),
            );
        } else {
            seen.push(&case.name);
        }
    }
    Some(out)
}

fn string(node: &Node, help: &str, diags: &mut Diagnostics) -> Option<Spanned<String>> {
    expect_str(node, help, diags).map(|s| Spanned::new(s.to_string(), node.span))
}

/// A scalar written as text: strings as they are, numbers and booleans as YAML wrote them.
fn scalar_text(node: &Node, what: &str, diags: &mut Diagnostics) -> Option<String> {
    match &node.value {
        Value::String(_) | Value::Int(_) | Value::Float(_) | Value::Bool(_) => Some(node.scalar_text()),
        _ => {
            diags.push(node.wrong_shape("a string, number or boolean", format!("{what} is one value")));
            None
        }
    }
}

/// `name: value` pairs of scalars.
fn pairs(node: &Node, what: &str, diags: &mut Diagnostics) -> Vec<(Spanned<String>, String)> {
    let Some(mut map) = MapReader::new(node, what, diags) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in map.rest() {
        let Some(name) = k.as_str() else { continue };
        if let Some(value) = scalar_text(v, what, diags) {
            out.push((Spanned::new(name.to_string(), k.span), value));
        }
    }
    out
}

fn read_keys(node: &Node, diags: &mut Diagnostics) -> Vec<KeyFixture> {
    let Some(mut map) = MapReader::new(node, "`keys`", diags) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in map.rest() {
        let Some(name) = k.as_str() else { continue };
        let Some(mut fixture) = MapReader::new(v, format!("the key fixture `{name}`"), diags) else {
            continue;
        };
        let owner = fixture
            .required("owner", "say who the key belongs to: `{ owner: alice }`", diags)
            .and_then(|o| expect_str(o, "the owner is a name, such as `alice`", diags))
            .map(str::to_string);
        fixture.finish(&["owner"], diags);
        if let Some(owner) = owner {
            out.push(KeyFixture {
                name: Spanned::new(name.to_string(), k.span),
                owner,
            });
        }
    }
    out
}

fn read_tokens(node: &Node, diags: &mut Diagnostics) -> Vec<TokenFixture> {
    let Some(mut map) = MapReader::new(node, "`tokens`", diags) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in map.rest() {
        let Some(name) = k.as_str() else { continue };
        let Some(mut fixture) = MapReader::new(v, format!("the token fixture `{name}`"), diags) else {
            continue;
        };
        let subject = fixture
            .required(
                "subject",
                "say whose token it is: `{ subject: alice }` (its `sub`)",
                diags,
            )
            .and_then(|o| expect_str(o, "the subject is a name, such as `alice`", diags))
            .map(str::to_string);
        let scopes = match fixture.get("scopes") {
            Some(n) => yaml::expect_str_list(n, "`scopes` is a list, such as `[orders:read]`", diags)
                .map(|l| l.into_iter().map(|(s, _)| s.to_string()).collect())
                .unwrap_or_default(),
            None => Vec::new(),
        };
        let claims = match fixture.get("claims") {
            Some(n) => match n.to_json() {
                serde_json::Value::Object(m) => m,
                _ => {
                    diags.push(n.wrong_shape("a mapping of claims", "`claims: { email: alice@example.com }`"));
                    serde_json::Map::new()
                }
            },
            None => serde_json::Map::new(),
        };
        let expires_in = match fixture.get("expires_in") {
            None => 3600,
            Some(n) => {
                let text = n.as_str().unwrap_or_default();
                let (sign, duration) = match text.strip_prefix('-') {
                    Some(rest) => (-1, rest),
                    None => (1, text),
                };
                match parse_window(duration) {
                    Some(seconds) => sign * seconds as i64,
                    None => {
                        diags.push(
                            Diagnostic::new(Code::InvalidValue, n.span, "`expires_in` is not a duration")
                                .label("here")
                                .help("a duration such as `1h`, or `-5m` for a token that expired five minutes ago"),
                        );
                        3600
                    }
                }
            }
        };
        let text = |fixture: &mut MapReader, key: &str, diags: &mut Diagnostics| {
            fixture
                .get(key)
                .and_then(|n| {
                    expect_str(
                        n,
                        &format!("`{key}` is a URL or a name, as the token carries it"),
                        diags,
                    )
                })
                .map(str::to_string)
        };
        let issuer = text(&mut fixture, "issuer", diags);
        let audience = text(&mut fixture, "audience", diags);
        fixture.finish(TOKEN_KEYS, diags);
        if let Some(subject) = subject {
            out.push(TokenFixture {
                name: Spanned::new(name.to_string(), k.span),
                subject,
                scopes,
                claims,
                expires_in,
                issuer,
                audience,
            });
        }
    }
    out
}

fn read_case(node: &Node, diags: &mut Diagnostics) -> Option<Case> {
    let mut map = MapReader::new(node, "a case", diags)?;
    let name = map
        .required("name", "name the case: it is what the report shows", diags)
        .and_then(|n| {
            string(
                n,
                "a case's name is a sentence, such as `answers 401 without a key`",
                diags,
            )
        });
    let what = match &name {
        Some(n) => format!("the case `{}`", n.value),
        None => "a case".to_string(),
    };
    let request = map
        .required(
            "request",
            "say what to send: `request: { route: greeting, query: { name: Ada } }`",
            diags,
        )
        .and_then(|r| read_request(r, &what, diags));
    let repeat = match map.get("repeat") {
        Some(n) => match &n.value {
            Value::Int(i) if (1..=10_000).contains(i) => *i as u32,
            _ => {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        n.span,
                        "`repeat` must be a whole number from 1 to 10000",
                    )
                    .label("here")
                    .help("send the request this many times: `repeat: 5`"),
                );
                1
            }
        },
        None => 1,
    };
    let advance_seconds = match map.get("advance") {
        Some(n) => match n.as_str().and_then(parse_window) {
            Some(s) => s,
            None => {
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, "`advance` is not a duration")
                        .label("here")
                        .help("move the rate limiters' clock forward by a duration such as `30s`, `1m` or `1h`"),
                );
                0
            }
        },
        None => 0,
    };
    let expect = map
        .required("expect", "say what must come back: `expect: { status: 200 }`", diags)
        .and_then(|e| read_expect(e, &what, diags));
    map.finish(CASE_KEYS, diags);
    Some(Case {
        name: name?,
        request: request?,
        repeat,
        advance_seconds,
        expect: expect?,
    })
}

fn read_request(node: &Node, what: &str, diags: &mut Diagnostics) -> Option<TestRequest> {
    let mut map = MapReader::new(node, format!("the request of {what}"), diags)?;
    let route = map
        .required(
            "route",
            "name the flow to call, by its file name: `route: greeting` for flows/greeting.yaml",
            diags,
        )
        .and_then(|r| string(r, "the route is a flow's file name without `.yaml`", diags));
    let mut request = TestRequest {
        route: Spanned::new(String::new(), node.span),
        method: None,
        params: Vec::new(),
        query: Vec::new(),
        headers: Vec::new(),
        body: None,
        origin: None,
        client_ip: None,
        key: None,
        token: None,
        signed: None,
    };
    if let Some(m) = map.get("method")
        && let Some(method) = string(m, "a method such as `GET` or `POST`", diags)
    {
        if METHODS.contains(&method.value.as_str()) {
            request.method = Some(method);
        } else {
            diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    m.span,
                    format!("`{}` is not a method a route can have", method.value),
                )
                .label("here")
                .help(format!("one of {}", METHODS.join(", "))),
            );
        }
    }
    if let Some(p) = map.get("params") {
        request.params = pairs(p, "`params`", diags);
    }
    if let Some(q) = map.get("query") {
        request.query = pairs(q, "`query`", diags)
            .into_iter()
            .map(|(k, v)| (k.value, v))
            .collect();
    }
    if let Some(h) = map.get("headers") {
        request.headers = pairs(h, "`headers`", diags)
            .into_iter()
            .map(|(k, v)| (k.value, v))
            .collect();
    }
    if let Some(b) = map.get("body") {
        request.body = Some(b.to_json());
    }
    if let Some(o) = map.get("origin") {
        request.origin = string(o, "an origin such as `https://app.example.com`", diags).map(|s| s.value);
    }
    if let Some(ip) = map.get("client_ip")
        && let Some(text) = string(ip, "an IP address such as `203.0.113.7`", diags)
    {
        match text.value.parse() {
            Ok(addr) => request.client_ip = Some(Spanned::new(addr, text.span)),
            Err(_) => diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    text.span,
                    format!("`{}` is not an IP address", text.value),
                )
                .label("here")
                .help("write an IPv4 or IPv6 address, such as `203.0.113.7` or `2001:db8::1`"),
            ),
        }
    }
    if let Some(k) = map.get("key") {
        request.key = string(k, "the name of a key fixture from `keys:`", diags);
    }
    if let Some(t) = map.get("token") {
        request.token = string(t, "the name of a token fixture from `tokens:`", diags);
    }
    if let Some(s) = map.get("signed") {
        match s.value {
            Value::Bool(b) => request.signed = Some(Spanned::new(b, s.span)),
            _ => diags.push(
                Diagnostic::new(Code::InvalidValue, s.span, "`signed` is `true` or `false`")
                    .label("not a boolean")
                    .help("`signed: true` signs the request as the route's Check Signature expects it"),
            ),
        }
    }
    map.finish(REQUEST_KEYS, diags);
    request.route = route?;
    Some(request)
}

fn read_expect(node: &Node, what: &str, diags: &mut Diagnostics) -> Option<Expect> {
    let mut map = MapReader::new(node, format!("the expectations of {what}"), diags)?;
    let mut expect = Expect::default();
    if let Some(s) = map.get("status") {
        match &s.value {
            Value::Int(code) if (100..=599).contains(code) => expect.status = Some(Spanned::new(*code as u16, s.span)),
            _ => diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    s.span,
                    "`status` must be an HTTP status code from 100 to 599",
                )
                .label("here")
                .help("for example `status: 201`"),
            ),
        }
    }
    if let Some(b) = map.get("body") {
        expect.body = Some(b.to_json());
    }
    if let Some(c) = map.get("body_contains")
        && let Some(mut paths) = MapReader::new(c, "`body_contains`", diags)
    {
        for (k, v) in paths.rest() {
            if let Some(path) = k.as_str() {
                expect
                    .body_contains
                    .push((Spanned::new(path.to_string(), k.span), v.to_json()));
            }
        }
    }
    if let Some(h) = map.get("headers") {
        for (name, value) in pairs(h, "`headers`", diags) {
            let header = match value.as_str() {
                "present" => HeaderExpect::Present,
                "absent" => HeaderExpect::Absent,
                _ => HeaderExpect::Equals(value),
            };
            expect
                .headers
                .push((Spanned::new(name.value.to_ascii_lowercase(), name.span), header));
        }
    }
    if let Some(t) = map.get("trace")
        && let Some(mut steps) = MapReader::new(t, "`trace`", diags)
    {
        for (node_id, outcome) in steps.rest() {
            let (Some(id), Some(outcome)) = (
                node_id.as_str(),
                string(
                    outcome,
                    "the output the node took, such as `valid` or `sequence-limited`",
                    diags,
                ),
            ) else {
                continue;
            };
            expect.trace.push((Spanned::new(id.to_string(), node_id.span), outcome));
        }
    }
    map.finish(EXPECT_KEYS, diags);
    Some(expect)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Option<TestFile>, Vec<String>) {
        let mut diags = Diagnostics::new();
        let file = load(FileId(0), text, &mut diags);
        let codes = diags
            .iter()
            .map(|d| format!("{}@{}:{}", d.code.as_str(), d.primary.span.line, d.primary.span.column))
            .collect();
        (file, codes)
    }

    #[test]
    fn reads_every_feature() {
        let (file, codes) = read(
            r#"
keys:
  alice: { owner: alice }
secrets:
  TOKEN: s3cret
cases:
  - name: limited after five
    repeat: 5
    advance: 1m
    request:
      route: greeting
      method: GET
      params: { id: 42 }
      query: { name: Ada, page: 2 }
      headers: { X-Trace: abc }
      origin: https://app.example.com
      client_ip: 203.0.113.7
      key: alice
      body: { a: [1, 2] }
    expect:
      status: 200
      body: { ok: true }
      body_contains: { greeting.message: Good day }
      headers: { retry-after: absent, RateLimit: present, content-type: application/json }
      trace: { auth: valid }
"#,
        );
        assert_eq!(codes, Vec::<String>::new());
        let file = file.unwrap();
        assert_eq!(file.keys[0].owner, "alice");
        assert_eq!(file.secrets[0].1, "s3cret");
        let case = &file.cases[0];
        assert_eq!((case.repeat, case.advance_seconds), (5, 60));
        assert_eq!(case.request.params[0].1, "42");
        assert_eq!(
            case.request.query,
            vec![("name".into(), "Ada".into()), ("page".into(), "2".into())]
        );
        assert_eq!(case.request.body, Some(serde_json::json!({"a": [1, 2]})));
        assert_eq!(case.expect.status.as_ref().unwrap().value, 200);
        assert_eq!(
            case.expect.headers[1],
            (
                Spanned::new("ratelimit".into(), case.expect.headers[1].0.span),
                HeaderExpect::Present
            )
        );
        assert_eq!(case.expect.trace[0].1.value, "valid");
    }

    #[test]
    fn every_problem_is_located() {
        let (_, codes) = read(
            r#"cases:
  - name: a
    request: { route: g, method: FETCH, client_ip: nope }
    expect: { status: 42, bogus: 1 }
    repeat: 0
  - name: a
    request: { method: GET }
    advance: soon
"#,
        );
        assert_eq!(
            codes,
            vec![
                "E0105@3:34", // FETCH
                "E0105@3:52", // nope
                "E0105@5:13", // repeat: 0
                "E0105@4:23", // status: 42
                "E0103@4:27", // bogus
                "E0104@7:14", // no route
                "E0105@8:14", // advance: soon
                "E0104@6:5",  // no expect
            ]
        );
    }
}
