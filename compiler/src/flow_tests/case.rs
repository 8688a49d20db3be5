//! One case over real HTTP: build the request the case describes, send it (`repeat`
//! times), and compare what came back with what the case expects.

use super::coverage::Step;
use super::server::Server;
use super::suite::flow_named;
use crate::project::Project;
use serde_json::Value;
use svc_frontend::flow::{KeyLocation, NodeKind, param_names};
use svc_frontend::testfile::{Case, HeaderExpect};
use svc_runtime::exchange::{ADVANCE_CLOCK_HEADER, TRACE_HEADER};

/// What one case did.
pub struct Outcome {
    /// Empty when the case passed; otherwise one explanation per difference, of the first
    /// response that differed.
    pub failures: Vec<String>,
    /// The trace of every response, for coverage.
    pub traces: Vec<Vec<Step>>,
    pub seconds: f64,
}

/// The default client address of the `n`th case: each case is its own client, so that
/// per-IP rate limits of one case do not leak into the next (198.18.0.0/15 is reserved
/// for tests).
fn default_client_ip(n: usize) -> String {
    format!("198.18.{}.{}", (n / 250) % 250, n % 250 + 1)
}

/// The requests a case sends: its route's URL, method and key location, resolved once.
pub struct Requests<'c> {
    case: &'c Case,
    server: &'c Server,
    url: String,
    method: reqwest::Method,
    key_location: Option<KeyLocation>,
    /// The route's first Check JWT: where it reads tokens, its issuer, its first audience.
    token_check: Option<(KeyLocation, String, String)>,
    /// The route's first Check Signature: its preset, and the value (from the test file)
    /// of the first secret it lists.
    signature: Option<(String, String)>,
}

impl<'c> Requests<'c> {
    pub fn new(project: &Project, server: &'c Server, case: &'c Case) -> Requests<'c> {
        let flow = flow_named(project, &case.request.route.value).expect("checked by suite::check");
        let config = project.config.as_ref().expect("a checked project has a config");
        let mut path = flow.route.value.clone();
        for param in param_names(&flow.route.value) {
            let value = case
                .request
                .params
                .iter()
                .find(|(n, _)| n.value == param)
                .map(|(_, v)| v.as_str())
                .unwrap_or_default();
            let encoded = percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC).to_string();
            path = path.replace(&format!("{{{param}}}"), &encoded);
        }
        let url = format!("{}{}", server.base, config.served_path(&path));
        let method = case
            .request
            .method
            .as_ref()
            .map(|m| m.value.clone())
            .or_else(|| flow.methods.first().map(|m| m.value.as_str().to_string()))
            .unwrap_or_else(|| "GET".into());
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let key_location = flow.nodes.iter().find_map(|n| match &n.kind {
            NodeKind::CheckApiKey(check) => Some(check.location.value.clone()),
            _ => None,
        });
        let token_check = flow.nodes.iter().find_map(|n| match &n.kind {
            NodeKind::CheckJwt(check) => Some((
                check.location.value.clone(),
                check.issuer.value.clone(),
                check.audiences.first().map(|a| a.value.clone()).unwrap_or_default(),
            )),
            _ => None,
        });
        let signature = flow.nodes.iter().find_map(|n| match &n.kind {
            NodeKind::CheckSignature(check) => {
                let secret = server.secrets.get(&check.secrets.first()?.value)?;
                Some((check.preset.value.clone(), secret.clone()))
            }
            _ => None,
        });
        Requests {
            case,
            server,
            url,
            method,
            key_location,
            token_check,
            signature,
        }
    }

    /// The `i`th request (of `case.repeat`) of the `n`th case of a run.
    pub fn build(&self, http: &reqwest::Client, n: usize, i: u32) -> reqwest::RequestBuilder {
        let case = self.case;
        let mut query = case.request.query.clone();
        let mut request = http.request(self.method.clone(), &self.url);
        for (name, value) in &case.request.headers {
            request = request.header(name, value);
        }
        if let Some(origin) = &case.request.origin {
            request = request.header("origin", origin);
        }
        let client_ip = match &case.request.client_ip {
            Some(ip) => ip.value.to_string(),
            None => default_client_ip(n),
        };
        request = request.header("x-forwarded-for", client_ip);
        if let Some(fixture) = &case.request.key {
            let key = self.server.keys.get(&fixture.value).cloned().unwrap_or_default();
            match self.key_location.as_ref().unwrap_or(&KeyLocation::HeaderXApiKey) {
                KeyLocation::HeaderXApiKey => request = request.header("x-api-key", key),
                KeyLocation::AuthorizationBearer => request = request.header("authorization", format!("Bearer {key}")),
                KeyLocation::Header(name) => request = request.header(name.as_str(), key),
                KeyLocation::Query(name) => query.push((name.clone(), key)),
                KeyLocation::Cookie(name) => request = request.header("cookie", format!("{name}={key}")),
            }
        }
        if let Some(fixture) = &case.request.token
            && let Some((location, token)) = self.token(&fixture.value)
        {
            match location {
                KeyLocation::Header(name) => request = request.header(name.as_str(), token),
                KeyLocation::Query(name) => query.push((name.clone(), token)),
                KeyLocation::Cookie(name) => request = request.header("cookie", format!("{name}={token}")),
                KeyLocation::AuthorizationBearer | KeyLocation::HeaderXApiKey => {
                    request = request.header("authorization", format!("Bearer {token}"))
                }
            }
        }
        if !query.is_empty() {
            request = request.query(&query);
        }
        let body = case.request.body.as_ref().map(|b| serde_json::to_vec(b).unwrap_or_default());
        if case.request.signed.as_ref().is_some_and(|s| s.value)
            && let Some((preset, secret)) = &self.signature
        {
            // Each request its own delivery: a repeated case is not a replay.
            let id = format!("msg_svc_test_{n}_{i}_{}", std::process::id());
            let signed = svc_runtime::signature::sign(
                preset,
                secret,
                body.as_deref().unwrap_or_default(),
                std::time::SystemTime::now(),
                &id,
            );
            for (name, value) in signed.into_iter().flatten() {
                request = request.header(name, value);
            }
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body);
        }
        if i == 0 && case.advance_seconds > 0 {
            request = request.header(ADVANCE_CLOCK_HEADER, (case.advance_seconds * 1000).to_string());
        }
        request
    }
}

impl Requests<'_> {
    /// Token fixture `name` signed now, and where the route reads it: issued by the route's
    /// Check JWT's issuer for its first audience unless the fixture says otherwise.
    fn token(&self, name: &str) -> Option<(&KeyLocation, String)> {
        let (location, issuer, audience) = self.token_check.as_ref()?;
        let signer = self.server.token_signer.as_ref()?;
        let fixture = self.server.tokens.iter().find(|t| t.name.value == name)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let mut claims = serde_json::Map::new();
        claims.insert("iss".into(), fixture.issuer.clone().unwrap_or_else(|| issuer.clone()).into());
        claims.insert("aud".into(), fixture.audience.clone().unwrap_or_else(|| audience.clone()).into());
        claims.insert("sub".into(), fixture.subject.clone().into());
        claims.insert("iat".into(), now.into());
        claims.insert("exp".into(), (now + fixture.expires_in).into());
        if !fixture.scopes.is_empty() {
            claims.insert("scope".into(), fixture.scopes.join(" ").into());
        }
        claims.extend(fixture.claims.clone());
        Some((location, signer.sign(&Value::Object(claims))))
    }
}

pub async fn run(http: &reqwest::Client, project: &Project, server: &Server, case: &Case, n: usize) -> Outcome {
    let started = std::time::Instant::now();
    let mut outcome = Outcome {
        failures: Vec::new(),
        traces: Vec::new(),
        seconds: 0.0,
    };
    let requests = Requests::new(project, server, case);
    for i in 0..case.repeat {
        let request = requests.build(http, n, i);
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                let why = svc_runtime::error::with_causes(e.to_string(), &e);
                outcome.failures.push(format!("request {}: {why}", i + 1));
                break;
            }
        };
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.unwrap_or_default();
        let trace = parse_trace(
            headers
                .get(TRACE_HEADER)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default(),
        );
        let failures = compare(case, status, &headers, &bytes, &trace);
        outcome.traces.push(trace);
        if !failures.is_empty() {
            let which = if case.repeat > 1 {
                format!("request {} of {}: ", i + 1, case.repeat)
            } else {
                String::new()
            };
            outcome
                .failures
                .extend(failures.into_iter().map(|f| format!("{which}{f}")));
            break;
        }
    }
    outcome.seconds = started.elapsed().as_secs_f64();
    outcome
}

/// `auth=valid, limit=sequence-ok (unchecked: …)` → steps (outputs without remarks).
pub fn parse_trace(header: &str) -> Vec<Step> {
    header
        .split(", ")
        .filter_map(|step| {
            let (node, output) = step.split_once('=')?;
            Some(Step {
                node: node.trim().to_string(),
                output: output.split(' ').next().unwrap_or_default().to_string(),
            })
        })
        .collect()
}

fn compare(
    case: &Case,
    status: u16,
    headers: &reqwest::header::HeaderMap,
    bytes: &[u8],
    trace: &[Step],
) -> Vec<String> {
    let mut failures = Vec::new();
    let body: Option<Value> = serde_json::from_slice(bytes).ok();
    let shown_body = || match &body {
        Some(b) => serde_json::to_string(b).unwrap_or_default(),
        None => String::from_utf8_lossy(bytes).into_owned(),
    };
    if let Some(expected) = &case.expect.status
        && expected.value != status
    {
        failures.push(format!(
            "status: expected {}, got {status}\n    body: {}",
            expected.value,
            shown_body()
        ));
    }
    if let Some(expected) = &case.expect.body {
        match &body {
            Some(actual) if actual == expected => {}
            Some(actual) => failures.push(json_difference("body", expected, actual)),
            None => failures.push(format!("body: expected JSON, got `{}`", shown_body())),
        }
    }
    for (path, expected) in &case.expect.body_contains {
        let actual = body.as_ref().and_then(|b| at_path(b, &path.value));
        match actual {
            Some(actual) if actual == expected => {}
            Some(actual) => failures.push(json_difference(&format!("body.{}", path.value), expected, actual)),
            None => failures.push(format!("body.{}: missing\n    body: {}", path.value, shown_body())),
        }
    }
    for (name, expected) in &case.expect.headers {
        let actual = headers
            .get(name.value.as_str())
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        match (expected, actual) {
            (HeaderExpect::Present, None) => failures.push(format!("header `{}`: expected, but absent", name.value)),
            (HeaderExpect::Absent, Some(v)) => {
                failures.push(format!("header `{}`: expected absent, got `{v}`", name.value))
            }
            (HeaderExpect::Equals(e), None) => {
                failures.push(format!("header `{}`: expected `{e}`, but absent", name.value))
            }
            (HeaderExpect::Equals(e), Some(v)) if *e != v => {
                failures.push(format!("header `{}`: expected `{e}`, got `{v}`", name.value))
            }
            _ => {}
        }
    }
    for (node, output) in &case.expect.trace {
        match trace.iter().find(|s| s.node == node.value) {
            Some(step) if step.output == output.value => {}
            Some(step) => failures.push(format!(
                "trace `{}`: expected `{}`, took `{}`",
                node.value, output.value, step.output
            )),
            None => failures.push(format!(
                "trace `{}`: expected `{}`, but the request never reached it (trace: {})",
                node.value,
                output.value,
                shown_trace(trace)
            )),
        }
    }
    failures
}

fn shown_trace(trace: &[Step]) -> String {
    if trace.is_empty() {
        return "no step".into();
    }
    trace
        .iter()
        .map(|s| format!("{}→{}", s.node, s.output))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The value at a dotted path (`lines.0.sku`): object keys, and array indices.
pub fn at_path<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(value, |v, part| match v {
        Value::Object(map) => map.get(part),
        Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// Where two JSON values first differ, as a path, and both sides in full (a line diff
/// when they are large).
pub fn json_difference(what: &str, expected: &Value, actual: &Value) -> String {
    let place = first_difference(expected, actual, what.to_string());
    let expected_text = serde_json::to_string_pretty(expected).unwrap_or_default() + "\n";
    let actual_text = serde_json::to_string_pretty(actual).unwrap_or_default() + "\n";
    if expected_text.lines().count() + actual_text.lines().count() <= 6 {
        return format!(
            "{place}: differs\n    expected: {}\n    actual:   {}",
            serde_json::to_string(expected).unwrap_or_default(),
            serde_json::to_string(actual).unwrap_or_default()
        );
    }
    let diff = similar::TextDiff::from_lines(&expected_text, &actual_text)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .to_string();
    let indented: Vec<String> = diff.lines().map(|l| format!("    {l}")).collect();
    format!("{place}: differs (first difference)\n{}", indented.join("\n"))
}

fn first_difference(expected: &Value, actual: &Value, at: String) -> String {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                match a.get(k) {
                    Some(av) if av != ev => return first_difference(ev, av, format!("{at}.{k}")),
                    None => return format!("{at}.{k}"),
                    _ => {}
                }
            }
            match a.keys().find(|k| !e.contains_key(*k)) {
                Some(extra) => format!("{at}.{extra}"),
                None => at,
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                if ev != av {
                    return first_difference(ev, av, format!("{at}[{i}]"));
                }
            }
            if e.len() == a.len() {
                at
            } else {
                format!("{at}[{}]", e.len().min(a.len()))
            }
        }
        _ => at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_the_first_difference() {
        let e = json!({"greeting": {"message": "Hello", "tone": "friendly"}, "user": "ada"});
        let a = json!({"greeting": {"message": "Hi", "tone": "friendly"}, "user": "ada"});
        assert_eq!(first_difference(&e, &a, "body".into()), "body.greeting.message");
        assert_eq!(
            first_difference(&json!([1, 2]), &json!([1, 2, 3]), "body".into()),
            "body[2]"
        );
        assert_eq!(
            first_difference(&json!({"a": 1}), &json!({"a": 1, "b": 2}), "body".into()),
            "body.b"
        );
        assert!(json_difference("body", &e, &a).starts_with("body.greeting.message: differs"));
    }

    #[test]
    fn paths_and_traces() {
        let v = json!({"lines": [{"sku": "A1"}]});
        assert_eq!(at_path(&v, "lines.0.sku"), Some(&json!("A1")));
        assert_eq!(at_path(&v, "lines.1.sku"), None);
        assert_eq!(
            parse_trace("auth=valid, limit=sequence-ok (unchecked: store failed, policy open)"),
            vec![
                Step {
                    node: "auth".into(),
                    output: "valid".into()
                },
                Step {
                    node: "limit".into(),
                    output: "sequence-ok".into()
                },
            ]
        );
        assert_eq!(parse_trace(""), vec![]);
        assert_eq!(default_client_ip(0), "198.18.0.1");
    }
}
