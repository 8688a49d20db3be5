//! One node of a flow read into the model, by its type: the keys each type takes are
//! its row's in the table of built-in node types (`svc_types::builtin_nodes`), and
//! [`setting_problem`] reads one setting alone, for the Builder's inspector.

use super::model::*;
use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::yaml::{self, MapReader, Node, Value};

fn edge(r: &mut MapReader, key: &str, diags: &mut Diagnostics) -> Option<Edge> {
    let n = r.get(key)?;
    if n.is_null() {
        return None;
    }
    yaml::expect_str(n, &format!("`{key}` names the node that runs next"), diags)
        .map(|s| Spanned::new(s.to_string(), n.span))
}

/// What reading a flow says of `value` as setting `key` of a `type_name` node, the other
/// settings being a new node's: `(message, hint)`, or `None` when it reads. The Builder's
/// inspector asks this as the user types, so that its forms accept exactly what
/// `svc check` accepts (`window: minute` among them).
pub fn setting_problem(type_name: &str, key: &str, value: &serde_json::Value) -> Option<(String, String)> {
    let mut node = svc_types::builtin_nodes::node_type(type_name)?.new_node(Some("project.node"))?;
    node.insert(key.into(), value.clone());
    // JSON is YAML: the node as a flow would hold it.
    let text = serde_json::Value::Object(node).to_string();
    let mut diags = Diagnostics::new();
    let root = yaml::parse(crate::FileId(0), &text).ok()?;
    let id = Spanned::new("node".to_string(), root.span);
    if read_node(id, &root, &mut diags).is_some() && diags.is_empty() {
        return None;
    }
    diags
        .iter()
        .next()
        .map(|d| (d.message.clone(), d.help.clone()))
        .or_else(|| Some((format!("`{key}` cannot be read"), String::new())))
}

/// The keys a node of `type_name` takes: its row's ([`svc_types::builtin_nodes`]).
fn node_keys(type_name: &str) -> Option<Vec<&'static str>> {
    svc_types::builtin_nodes::node_type(type_name).map(|t| t.keys())
}

/// Reports each key of `node` that is not in `known` but close to a known key the node
/// lacks (`windows` for `window`); returns whether there was one. Other unknown keys are
/// reported by `MapReader::finish` once the node is read.
fn misspelled_keys(node: &Node, known: &[&str], what: &str, diags: &mut Diagnostics) -> bool {
    let Value::Map(entries) = &node.value else {
        return false;
    };
    let present: Vec<&str> = entries.iter().filter_map(|(k, _)| k.as_str()).collect();
    let mut found = false;
    for (k, _) in entries {
        let Some(name) = k.as_str() else { continue };
        if known.contains(&name) {
            continue;
        }
        let Some(best) = svc_types::assets::closest(name, known.iter().copied()) else {
            continue;
        };
        if present.contains(&best) {
            continue;
        }
        diags.push(
            Diagnostic::new(Code::UnknownField, k.span, format!("unknown key `{name}` in {what}"))
                .label("not recognized")
                .help(format!("did you mean `{best}`?")),
        );
        found = true;
    }
    found
}

pub(super) fn read_node(id: Spanned<String>, node: &Node, diags: &mut Diagnostics) -> Option<FlowNode> {
    let what = format!("node `{}`", id.value);
    let mut r = MapReader::new(node, what.clone(), diags)?;
    let type_node = r.required(
        "type",
        &format!(
            "every node has a `type`: one of {}",
            node_types().collect::<Vec<_>>().join(", ")
        ),
        diags,
    )?;
    let type_name = yaml::expect_str(type_node, "the node type", diags)?;
    let description = r
        .get("description")
        .and_then(|n| yaml::expect_str(n, "text", diags))
        .map(str::to_string);
    // A misspelled key (`windows:`, `allowed_origin:`) is the cause of the "missing key"
    // error that reading would give: report it, with the key meant, and only it.
    let known = node_keys(type_name);
    if let Some(known) = &known
        && misspelled_keys(node, known, &what, diags)
    {
        return None;
    }
    let kind = match type_name {
        "check-origin" => NodeKind::CheckOrigin(read_check_origin(&mut r, diags)?),
        "rate-limit" => NodeKind::RateLimit(read_rate_limit(&mut r, diags)?),
        "check-api-key" => NodeKind::CheckApiKey(read_check_api_key(&mut r, diags)?),
        "check-jwt" => NodeKind::CheckJwt(Box::new(read_check_jwt(&mut r, diags)?)),
        "check-signature" => NodeKind::CheckSignature(read_check_signature(&mut r, diags)?),
        "code" => NodeKind::Code(read_code(&mut r, diags)?),
        "return-json" => NodeKind::ReturnJson(read_return_json(&mut r, diags)?),
        other => {
            let hint = match svc_types::assets::closest(other, node_types()) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!("node types are: {}", node_types().collect::<Vec<_>>().join(", ")),
            };
            diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    type_node.span,
                    format!("unknown node type `{other}`"),
                )
                .label("unknown type")
                .help(hint),
            );
            return None;
        }
    };
    r.finish(known.as_deref().unwrap_or_default(), diags);
    Some(FlowNode { id, kind, description })
}

fn read_check_origin(r: &mut MapReader, diags: &mut Diagnostics) -> Option<CheckOrigin> {
    let help = "list the web origins allowed to call this route, for example `allowed_origins: [https://app.example.com, \"https://*.example.com\"]`";
    let origins_node = r.required("allowed_origins", help, diags)?;
    let origins = yaml::expect_str_list(origins_node, help, diags)?
        .into_iter()
        .map(|(s, span)| Spanned::new(s.to_string(), span))
        .collect::<Vec<_>>();
    if origins.is_empty() {
        diags.push(
            Diagnostic::new(Code::InvalidValue, origins_node.span, "no origin is allowed")
                .label("empty list")
                .help(help),
        );
    }
    let missing_origin = match r.get("missing_origin") {
        None => MissingOrigin::Allow,
        Some(n) => match yaml::expect_str(n, "`missing_origin` is `allow` or `block`", diags) {
            Some("allow") => MissingOrigin::Allow,
            Some("block") => MissingOrigin::Block,
            Some(other) => {
                diags.push(Diagnostic::new(Code::InvalidValue, n.span, format!("`{other}` is not a missing-origin policy")).label("unknown policy").help("`missing_origin` is `allow` (the default: requests without an Origin header are not cross-origin browser requests) or `block`"));
                MissingOrigin::Allow
            }
            None => MissingOrigin::Allow,
        },
    };
    let list = |r: &mut MapReader, key: &str, diags: &mut Diagnostics| -> Vec<String> {
        r.get(key)
            .and_then(|n| yaml::expect_str_list(n, &format!("`{key}` is a list of header names"), diags))
            .map(|v| v.into_iter().map(|(s, _)| s.to_ascii_lowercase()).collect())
            .unwrap_or_default()
    };
    let allowed_headers = list(r, "allowed_headers", diags);
    let expose_headers = r.get("expose_headers").map(|n| {
        yaml::expect_str_list(n, "`expose_headers` is a list of header names", diags)
            .map(|v| v.into_iter().map(|(s, _)| s.to_ascii_lowercase()).collect())
            .unwrap_or_default()
    });
    let allow_credentials = r
        .get("allow_credentials")
        .and_then(|n| yaml::expect_bool(n, "`allow_credentials` is `true` or `false`", diags))
        .unwrap_or(false);
    let max_age = r
        .get("max_age")
        .and_then(|n| yaml::expect_u64(n, "`max_age` is a number of seconds", diags));
    Some(CheckOrigin {
        allowed_origins: origins,
        missing_origin,
        allowed_headers,
        expose_headers,
        allow_credentials,
        max_age,
        allowed: edge(r, "allowed", diags),
        blocked: edge(r, "blocked", diags),
    })
}

/// The longest Rate Limit window: longer ones would not be refused silently at run time
/// (the limiter's clock arithmetic saturates, which let everything through), but here.
pub const MAX_WINDOW_SECS: u64 = 366 * 86_400;

/// `30s`, `1m`, `15m`, `1h`, `1d`, or `second` / `minute` / `hour` / `day`.
pub fn parse_window(s: &str) -> Option<u64> {
    let s = s.trim();
    match s {
        "second" => return Some(1),
        "minute" => return Some(60),
        "hour" => return Some(3600),
        "day" => return Some(86_400),
        _ => {}
    }
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().ok()?;
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    let secs = n.checked_mul(scale)?;
    (secs > 0).then_some(secs)
}

fn read_rate_limit(r: &mut MapReader, diags: &mut Diagnostics) -> Option<RateLimit> {
    let limit_node = r.required(
        "limit",
        "set how many requests are allowed per window: `limit: 100`",
        diags,
    );
    let limit = limit_node
        .and_then(|n| yaml::expect_u64(n, "`limit` is a number of requests", diags).map(|v| Spanned::new(v, n.span)));
    if let Some(l) = &limit
        && (l.value == 0 || l.value > 1_000_000_000)
    {
        diags.push(
            Diagnostic::new(
                Code::InvalidValue,
                l.span,
                format!("a limit of {} requests per window is out of range", l.value),
            )
            .label("out of range")
            .help("the limit is between 1 and 1,000,000,000 requests per window"),
        );
    }
    let window_help = "the window is a duration such as `30s`, `1m`, `1h` or `1d` (seconds to days)";
    let window_node = r.required("window", window_help, diags);
    let window = window_node.and_then(|n| {
        let s = match &n.value {
            Value::String(s) => s.clone(),
            _ => {
                diags.push(n.wrong_shape("a duration", window_help));
                return None;
            }
        };
        match parse_window(&s) {
            Some(secs) if secs <= MAX_WINDOW_SECS => Some(Spanned::new(secs, n.span)),
            Some(_) => {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        n.span,
                        format!("`{s}` is longer than a rate limit window can be"),
                    )
                    .label("window too long")
                    .help("the longest window is `366d`: a limit over a longer time cannot be enforced exactly"),
                );
                None
            }
            None => {
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, format!("`{s}` is not a rate limit window"))
                        .label("invalid window")
                        .help(window_help),
                );
                None
            }
        }
    });
    let by_node = r.required(
        "by",
        "choose what to count requests by: `by: ip`, `by: user` or `by: api-key`",
        diags,
    );
    let by = by_node.and_then(|n| {
        let s = yaml::expect_str(n, "`by` is `ip`, `user` or `api-key`", diags)?;
        let key = match s {
            "ip" => RateKey::Ip,
            "user" => RateKey::User,
            "api-key" => RateKey::ApiKey,
            other => {
                let hint = match svc_types::assets::closest(other, ["ip", "user", "api-key"]) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => "`by` is `ip`, `user` or `api-key`".to_string(),
                };
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, format!("cannot rate limit by `{other}`"))
                        .label("unknown dimension")
                        .help(hint),
                );
                return None;
            }
        };
        Some(Spanned::new(key, n.span))
    });
    let on_store_error = r.get("on_store_error").and_then(|n| {
        let help =
            "`on_store_error` is `local` (count in this instance), `open` (let through) or `closed` (answer 503)";
        let s = yaml::expect_str(n, help, diags)?;
        let policy = match s {
            "open" => OnStoreError::Open,
            "closed" => OnStoreError::Closed,
            "local" => OnStoreError::Local,
            other => {
                let hint = match svc_types::assets::closest(other, OnStoreError::ALL.iter().copied()) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => help.to_string(),
                };
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, format!("`{other}` is not a failure policy"))
                        .label("unknown policy")
                        .help(hint),
                );
                return None;
            }
        };
        Some(Spanned::new(policy, n.span))
    });
    let ok = edge(r, "sequence-ok", diags);
    let limited = edge(r, "sequence-limited", diags);
    Some(RateLimit {
        limit: limit?,
        window: window?,
        by: by?,
        on_store_error,
        ok,
        limited,
    })
}

fn read_check_api_key(r: &mut MapReader, diags: &mut Diagnostics) -> Option<CheckApiKey> {
    let help = "`location` is `header-x-api-key`, `authorization-bearer`, `header:<Name>` or `query:<name>`";
    // The spec's named example is the default.
    let location = read_location(r, KeyLocation::HeaderXApiKey, true, help, "an API key location", diags)?;
    Some(CheckApiKey {
        location,
        valid: edge(r, "valid", diags),
        invalid: edge(r, "invalid", diags),
    })
}

/// The tolerance Check Signature gives a signed timestamp when the node does not say.
pub const SIGNATURE_TOLERANCE_SECS: u64 = 300;

fn read_check_signature(r: &mut MapReader, diags: &mut Diagnostics) -> Option<CheckSignature> {
    use svc_types::builtin_nodes::SIGNATURE_PRESETS;
    let presets = SIGNATURE_PRESETS.join(", ");
    let preset = r
        .required("preset", &format!("`preset` names whose signatures: {presets}"), diags)
        .and_then(|n| {
            let s = yaml::expect_str(n, "a webhook provider", diags)?;
            if !SIGNATURE_PRESETS.contains(&s) {
                let hint = match svc_types::assets::closest(s, SIGNATURE_PRESETS.iter().copied()) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => format!("`preset` is one of {presets}"),
                };
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, format!("no webhook provider `{s}`"))
                        .label("unknown provider")
                        .help(hint),
                );
                return None;
            }
            Some(Spanned::new(s.to_string(), n.span))
        });
    let secrets_help = "list the secrets a signature may be made with, declared in the config: `secrets: [GITHUB_WEBHOOK_SECRET]` (two while one is rotated)";
    let secrets = r.required("secrets", secrets_help, diags).and_then(|n| {
        let list = yaml::expect_str_list(n, secrets_help, diags)?;
        if list.is_empty() {
            diags.push(
                Diagnostic::new(Code::InvalidValue, n.span, "no secret listed")
                    .label("empty")
                    .help(secrets_help),
            );
            return None;
        }
        Some(
            list.into_iter()
                .map(|(s, span)| Spanned::new(s.to_string(), span))
                .collect::<Vec<_>>(),
        )
    });
    let tolerance = match r.get("tolerance") {
        None => Some(SIGNATURE_TOLERANCE_SECS),
        Some(n) => {
            let text = match &n.value {
                Value::String(s) => Some(s.as_str()),
                _ => None,
            };
            match text.and_then(parse_window) {
                Some(secs) if (30..=3600).contains(&secs) => Some(secs),
                _ => {
                    diags.push(
                        Diagnostic::new(Code::InvalidValue, n.span, "`tolerance` is a time from 30 seconds to an hour")
                            .label("not a tolerance")
                            .help("write `tolerance: 5m` (the default), `30s`, `10m` or `1h`: how old a signed timestamp may be before it is a replay"),
                    );
                    None
                }
            }
        }
    };
    Some(CheckSignature {
        preset: preset?,
        secrets: secrets?,
        tolerance: tolerance?,
        valid: edge(r, "valid", diags),
        invalid: edge(r, "invalid", diags),
    })
}

/// A credential's `location`: `default` when the node does not say.
fn read_location(
    r: &mut MapReader,
    default: KeyLocation,
    x_api_key: bool,
    help: &str,
    what: &str,
    diags: &mut Diagnostics,
) -> Option<Spanned<KeyLocation>> {
    let Some(n) = r.get("location") else {
        return Some(Spanned::new(default, r.span()));
    };
    let s = yaml::expect_str(n, help, diags)?;
    let loc = match s {
        "header-x-api-key" if x_api_key => KeyLocation::HeaderXApiKey,
        "authorization-bearer" | "bearer" => KeyLocation::AuthorizationBearer,
        _ if s.starts_with("header:") && is_header_name(&s[7..]) => KeyLocation::Header(s[7..].to_ascii_lowercase()),
        _ if s.starts_with("query:") && is_query_name(&s[6..]) => KeyLocation::Query(s[6..].to_string()),
        _ if !x_api_key && s.starts_with("cookie:") && is_header_name(&s[7..]) => {
            KeyLocation::Cookie(s[7..].to_string())
        }
        other => {
            diags.push(
                Diagnostic::new(Code::InvalidValue, n.span, format!("`{other}` is not {what}"))
                    .label("unknown location")
                    .help(help),
            );
            return None;
        }
    };
    Some(Spanned::new(loc, n.span))
}

fn read_check_jwt(r: &mut MapReader, diags: &mut Diagnostics) -> Option<CheckJwt> {
    use svc_types::builtin_nodes::{JWT_ALGORITHMS, JWT_DEFAULT_ALGORITHMS};
    let url_help = "an `https` URL; `http` only to a loopback address (a provider run for development)";
    let location = read_location(
        r,
        KeyLocation::AuthorizationBearer,
        false,
        "`location` is `authorization-bearer` (the default), `header:<Name>`, `cookie:<name>` or `query:<name>`",
        "a token location",
        diags,
    );
    let issuer = r
        .required("issuer", "`issuer` is the `iss` your provider puts in its tokens, for example `issuer: https://id.example.com/realms/shop`", diags)
        .and_then(|n| {
            let s = yaml::expect_str(n, "the issuer URL", diags)?;
            if !svc_types::builtin_nodes::jwt_url_allowed(s) {
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, format!("the issuer `{s}` is not an https URL"))
                        .label("not https")
                        .help(format!("the issuer is {url_help}: its keys and discovery document are fetched from it")),
                );
                return None;
            }
            Some(Spanned::new(s.to_string(), n.span))
        });
    let audiences_help =
        "list the audiences a token may be issued for (its `aud`), for example `audiences: [https://api.example.com]`";
    let audiences = r.required("audiences", audiences_help, diags).and_then(|n| {
        let list = yaml::expect_str_list(n, audiences_help, diags)?;
        if list.is_empty() {
            diags.push(
                Diagnostic::new(Code::InvalidValue, n.span, "no audience listed")
                    .label("empty")
                    .help(format!(
                        "{audiences_help}: a token for another API of the same provider must not pass"
                    )),
            );
            return None;
        }
        Some(
            list.into_iter()
                .map(|(s, span)| Spanned::new(s.to_string(), span))
                .collect::<Vec<_>>(),
        )
    });
    // Where the keys come from: one of `jwks_url`, `jwks`, `secret`, else discovery.
    let mut sources = Vec::new();
    let jwks_url = r.get("jwks_url").and_then(|n| {
        sources.push(("jwks_url", n.span));
        let s = yaml::expect_str(n, "the URL of the provider's JWK set", diags)?;
        if !svc_types::builtin_nodes::jwt_url_allowed(s) {
            diags.push(
                Diagnostic::new(Code::InvalidValue, n.span, format!("`{s}` is not an https URL"))
                    .label("not https")
                    .help(format!("`jwks_url` is {url_help}")),
            );
            return None;
        }
        Some(Spanned::new(s.to_string(), n.span))
    });
    let jwks = r.get("jwks").and_then(|n| {
        sources.push(("jwks", n.span));
        let json = n.to_json();
        let keys = json.get("keys").and_then(|k| k.as_array());
        match keys {
            Some(keys) if !keys.is_empty() && keys.iter().all(|k| k.get("kty").is_some_and(|t| t.is_string())) => Some(json.to_string()),
            _ => {
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, "`jwks` is not a JWK set")
                        .label("not a JWK set")
                        .help("write the set as the provider publishes it: `jwks: { keys: [{ kty: RSA, kid: ..., n: ..., e: AQAB }] }`"),
                );
                None
            }
        }
    });
    let secret = r.get("secret").and_then(|n| {
        sources.push(("secret", n.span));
        yaml::expect_str(n, "the name of a secret declared in config", diags)
            .map(|s| Spanned::new(s.to_string(), n.span))
    });
    let pem_help = "the provider's public keys in PEM, each a `-----BEGIN PUBLIC KEY-----` block (write them as a YAML block: `public_key: |`)";
    let public_key = r.get("public_key").and_then(|n| {
        sources.push(("public_key", n.span));
        let text = yaml::expect_str(n, pem_help, diags)?;
        match super::pem::public_keys(text) {
            Ok(keys) => Some(serde_json::json!({ "keys": keys }).to_string()),
            Err(why) => {
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, format!("`public_key` is {why}"))
                        .label("not a public key svc verifies with")
                        .help(pem_help),
                );
                None
            }
        }
    });
    if let [(first, _), (second, span), ..] = sources[..] {
        diags.push(
            Diagnostic::new(Code::InvalidValue, span, format!("`{first}` and `{second}` given together"))
                .label("a second source of keys")
                .help("a Check JWT node verifies with one source of keys: the issuer's discovery (no key setting), `jwks_url`, `jwks`, `public_key`, or `secret` (HMAC)"),
        );
        return None;
    }
    let is_hmac = |a: &str| a.starts_with("HS");
    // Read on past a problem, so that every problem of the node is reported at once.
    let algorithms = match r.get("algorithms") {
        None if secret.is_some() => Some(vec![Spanned::new("HS256".to_string(), r.span())]),
        None => Some(
            JWT_DEFAULT_ALGORITHMS
                .iter()
                .map(|a| Spanned::new(a.to_string(), r.span()))
                .collect(),
        ),
        Some(n) => (|| {
            let help = format!("the algorithms are {}", JWT_ALGORITHMS.join(", "));
            let list = yaml::expect_str_list(n, &help, diags)?;
            let mut algorithms = Vec::new();
            for (name, span) in list {
                if name.eq_ignore_ascii_case("none") {
                    diags.push(
                        Diagnostic::new(Code::InvalidValue, span, "`none` is never accepted")
                            .label("an unsigned token")
                            .help("a token with `alg: none` carries no signature: anyone could write it"),
                    );
                    continue;
                }
                if !JWT_ALGORITHMS.contains(&name) {
                    let hint = match svc_types::assets::closest(name, JWT_ALGORITHMS.iter().copied()) {
                        Some(best) => format!("did you mean `{best}`? {help}"),
                        None => help.clone(),
                    };
                    diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            span,
                            format!("svc does not know the algorithm `{name}`"),
                        )
                        .label("unknown algorithm")
                        .help(hint),
                    );
                    continue;
                }
                if is_hmac(name) != secret.is_some() {
                    let (message, hint) = if secret.is_some() {
                        (
                            format!("`{name}` with `secret`"),
                            "a secret verifies HS256, HS384 or HS512 tokens; keys a provider publishes verify the others",
                        )
                    } else {
                        (
                            format!("`{name}` needs `secret`"),
                            "an HMAC algorithm verifies with a shared secret: declare one in config, set it with `svc secrets set`, and name it in `secret:` (a published key is never used as an HMAC secret)",
                        )
                    };
                    diags.push(
                        Diagnostic::new(Code::InvalidValue, span, message)
                            .label("cannot verify with these keys")
                            .help(hint),
                    );
                    continue;
                }
                algorithms.push(Spanned::new(name.to_string(), span));
            }
            (!algorithms.is_empty()).then_some(algorithms)
        })(),
    };
    let leeway = match r.get("leeway") {
        None => Some(60),
        Some(n) => (|| {
            let v = yaml::expect_u64(n, "`leeway` is the clock skew allowed, in seconds", diags)?;
            if v > 600 {
                diags.push(
                    Diagnostic::new(Code::InvalidValue, n.span, format!("a leeway of {v} seconds is more than 10 minutes"))
                        .label("out of range")
                        .help("the leeway covers clocks that differ by seconds, up to 600; a token's lifetime is its issuer's to set"),
                );
                return None;
            }
            Some(v)
        })(),
    };
    let names = |r: &mut MapReader, key: &str, diags: &mut Diagnostics| -> Option<Vec<String>> {
        match r.get(key) {
            None => Some(Vec::new()),
            Some(n) => Some(
                yaml::expect_str_list(n, &format!("`{key}` is a list of names"), diags)?
                    .into_iter()
                    .map(|(s, _)| s.to_string())
                    .collect(),
            ),
        }
    };
    let required_scopes = names(r, "required_scopes", diags)?;
    let required_claims = names(r, "required_claims", diags)?;
    let claims = r.get("claims").and_then(|n| {
        yaml::expect_str(n, "the name of a structure in config", diags).map(|s| Spanned::new(s.to_string(), n.span))
    });
    let keys = match (jwks_url, jwks.or(public_key), secret) {
        (Some(url), _, _) => JwtKeys::JwksUrl(url),
        (_, Some(set), _) => JwtKeys::Inline(set),
        (_, _, Some(secret)) => JwtKeys::Secret(secret),
        _ if !sources.is_empty() => return None,
        _ => JwtKeys::Discovery(format!(
            "{}/.well-known/openid-configuration",
            issuer.as_ref()?.value.trim_end_matches('/')
        )),
    };
    Some(CheckJwt {
        location: location?,
        issuer: issuer?,
        audiences: audiences?,
        keys,
        algorithms: algorithms?,
        leeway: leeway?,
        required_scopes,
        required_claims,
        claims,
        valid: edge(r, "valid", diags),
        invalid: edge(r, "invalid", diags),
        forbidden: edge(r, "forbidden", diags),
    })
}

fn is_header_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn is_query_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

fn read_code(r: &mut MapReader, diags: &mut Diagnostics) -> Option<CodeCall> {
    let key_node = r.required(
        "node",
        "a code node names the node it runs by key: `node: acme.price-order`",
        diags,
    )?;
    let key = yaml::expect_str(key_node, "the node key", diags)?;
    let mut inputs = Vec::new();
    let mut unreadable = Some(Vec::new());
    if let Some(inputs_node) = r.get("inputs") {
        match MapReader::new(inputs_node, "`inputs`", diags) {
            Some(mut ir) => {
                for (k, v) in ir.rest() {
                    let Some(pin) = k.as_str() else { continue };
                    match read_binding(v, diags) {
                        Some(b) => inputs.push((Spanned::new(pin.to_string(), k.span), b)),
                        None => unreadable.get_or_insert_with(Vec::new).push(pin.to_string()),
                    }
                }
            }
            None => unreadable = None,
        }
    }
    Some(CodeCall {
        node_key: Spanned::new(key.to_string(), key_node.span),
        inputs,
        unreadable_inputs: unreadable,
        next: edge(r, "next", diags),
        on_fail: edge(r, "on_fail", diags),
    })
}

/// `{ from: <reference> }`, `{ value: <literal> }`, or a bare scalar or list literal.
pub fn read_binding(node: &Node, diags: &mut Diagnostics) -> Option<Binding> {
    match &node.value {
        Value::Map(entries) => {
            let keys: Vec<&str> = entries.iter().filter_map(|(k, _)| k.as_str()).collect();
            match keys.as_slice() {
                ["from"] => read_reference(&entries[0].1, diags).map(Binding::Wire),
                ["value"] => Some(Binding::Literal(entries[0].1.clone())),
                _ => {
                    diags.push(node.wrong_shape(
                        "`{ from: … }` or `{ value: … }`",
                        "wire a value with `{ from: request.body.order }` or `{ from: node-id.output }`; write an object literal as `{ value: { … } }`",
                    ));
                    None
                }
            }
        }
        _ => Some(Binding::Literal(node.clone())),
    }
}

/// `request.<body|query|headers|params>[.<field>…]` or `<node-id>.<output>[.<field>…]`.
pub fn read_reference(node: &Node, diags: &mut Diagnostics) -> Option<Reference> {
    let help = "a reference is `request.body.<field>`, `request.query.<name>`, `request.headers.<name>`, `request.params.<name>`, or `<node-id>.<output>`, with `.<field>` to go into structures";
    let text = yaml::expect_str(node, help, diags)?;
    let invalid = |msg: String, diags: &mut Diagnostics| {
        diags.push(
            Diagnostic::new(Code::InvalidReference, node.span, msg)
                .label("invalid reference")
                .help(help),
        );
        None
    };
    let parts: Vec<&str> = text.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return invalid(format!("`{text}` has an empty segment"), diags);
    }
    let (root, rest) = match parts.as_slice() {
        ["request"] => {
            return invalid(
                "`request` alone is not a value; pick a part such as `request.body`".into(),
                diags,
            );
        }
        ["request", part, rest @ ..] => {
            let part = match *part {
                "body" => RequestPart::Body,
                "query" => RequestPart::Query,
                "headers" => RequestPart::Headers,
                "params" => RequestPart::Params,
                other => return invalid(format!("the request has no part `{other}`"), diags),
            };
            if part != RequestPart::Body && rest.is_empty() {
                return invalid(
                    format!(
                        "`request.{}` needs a name: `request.{}.<name>`",
                        part.as_str(),
                        part.as_str()
                    ),
                    diags,
                );
            }
            (RefRoot::Request(part), rest.to_vec())
        }
        [_only] => {
            return invalid(
                format!("`{text}` names a node but not one of its outputs: write `{text}.<output>`"),
                diags,
            );
        }
        [node_id, rest @ ..] => (
            RefRoot::Node(Spanned::new(node_id.to_string(), node.span)),
            rest.to_vec(),
        ),
        [] => return invalid("the reference is empty".into(), diags),
    };
    Some(Reference {
        text: text.to_string(),
        span: node.span,
        root,
        path: rest.into_iter().map(str::to_string).collect(),
    })
}

fn read_return_json(r: &mut MapReader, diags: &mut Diagnostics) -> Option<ReturnJson> {
    let status_node = r.required(
        "status",
        "a Return JSON node sets the HTTP status: `status: 200`",
        diags,
    )?;
    let status = yaml::expect_u64(
        status_node,
        "the status is an HTTP status code such as 200, 401 or 429",
        diags,
    )?;
    if !(200..=599).contains(&status) || (300..400).contains(&status) && status != 304 {
        diags.push(
            Diagnostic::new(
                Code::InvalidValue,
                status_node.span,
                format!("{status} is not a status a JSON response can have"),
            )
            .label("invalid status")
            .help("use a 2xx, 4xx or 5xx status (redirects are not JSON responses)"),
        );
        return None;
    }
    let body = r.get("body").and_then(|n| read_template(n, diags));
    let mut headers = Vec::new();
    if let Some(h) = r.get("headers")
        && let Some(mut hr) = MapReader::new(h, "`headers`", diags)
    {
        for (k, v) in hr.rest() {
            let Some(name) = k.as_str() else { continue };
            if !is_header_name(name) {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        k.span,
                        format!("`{name}` is not a valid header name"),
                    )
                    .label("invalid header")
                    .help("header names use letters, digits and `-`"),
                );
                continue;
            }
            if let Some(b) = read_binding(v, diags) {
                headers.push((Spanned::new(name.to_ascii_lowercase(), k.span), b));
            }
        }
    }
    Some(ReturnJson {
        status: Spanned::new(status as u16, status_node.span),
        body,
        headers,
    })
}

/// A body template. A mapping that is exactly `{ from: … }` is a wire and exactly
/// `{ value: … }` a literal; any other mapping is an object whose values are templates.
pub fn read_template(node: &Node, diags: &mut Diagnostics) -> Option<Template> {
    match &node.value {
        Value::Map(entries) => {
            let keys: Vec<&str> = entries.iter().filter_map(|(k, _)| k.as_str()).collect();
            match keys.as_slice() {
                ["from"] => read_reference(&entries[0].1, diags).map(Template::Wire),
                ["value"] => Some(Template::Literal(entries[0].1.clone())),
                _ => {
                    let mut fields = Vec::new();
                    for (k, v) in entries {
                        let Some(name) = k.as_str() else {
                            diags.push(k.wrong_shape("a string key", "JSON object keys are strings"));
                            continue;
                        };
                        if let Some(t) = read_template(v, diags) {
                            fields.push((Spanned::new(name.to_string(), k.span), t));
                        }
                    }
                    Some(Template::Object(fields, node.span))
                }
            }
        }
        Value::Seq(items) => Some(Template::Array(
            items.iter().filter_map(|i| read_template(i, diags)).collect(),
            node.span,
        )),
        _ => Some(Template::Literal(node.clone())),
    }
}
