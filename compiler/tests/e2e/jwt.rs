//! Check JWT against a real identity provider: `jwt_provider.py` (PyJWT, on a loopback
//! port) publishes an OpenID Connect discovery document and a JWK set and signs the
//! tokens; a copy of `examples/hello` gains a route protected by Check JWT (discovery,
//! a scope, a claims structure, a Rate Limit by the token's subject) and one by an HMAC
//! secret. Every attack JWT libraries' advisories list is a request here.

use crate::harness::{Server, client, error, project_binary, start_binary};
use crate::support::{edit, example_copy, listening_address};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The provider, stopped by PID when dropped.
struct Provider {
    child: Child,
    base: String,
}

impl Provider {
    fn start() -> Provider {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/jwt_provider.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the identity provider (PyJWT with cryptography: scripts/setup.sh installs them)");
        let base = listening_address(&mut child);
        Provider { child, base }
    }

    fn issuer(&self) -> String {
        format!("{}/realms/demo", self.base)
    }

    async fn post(&self, path: &str, body: Value) -> String {
        let answer = client()
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(answer.status().is_success(), "the provider refused {path}: {body}");
        answer.text().await.unwrap()
    }

    /// A token signed by the provider: `request` as `/mint` takes it.
    async fn mint(&self, request: Value) -> String {
        self.post("/mint", request).await
    }

    async fn stats(&self) -> Value {
        client()
            .get(format!("{}/stats", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// Claims that pass: issuer, audience, a lifetime, the scope and the claims structure.
fn claims(provider: &Provider, subject: &str) -> Value {
    json!({
        "iss": provider.issuer(),
        "aud": "hello-api",
        "sub": subject,
        "exp": now() + 300,
        "iat": now(),
        "scope": "openid profile",
        "email": format!("{subject}@example.com"),
    })
}

fn with(mut claims: Value, changes: Value) -> Value {
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            claims.as_object_mut().unwrap().remove(k);
        } else {
            claims[k] = v.clone();
        }
    }
    claims
}

/// `examples/hello` with `GET /demo/hello/me` behind Check JWT (the provider's discovery),
/// `GET /demo/hello/shared` behind an HMAC secret, and `GET /demo/hello/pem` behind the
/// provider's RSA and EC keys given in PEM.
fn project(provider: &Provider, label: &str) -> PathBuf {
    let dir = example_copy("hello", label);
    edit(
        &dir.join("svc.config.yaml"),
        &[(
            "enums:",
            "structures:\n  - name: Profile\n    fields:\n      - { name: email, type: string, required: true }\n\nsecrets:\n  - name: JWT_SECRET\n\nenums:",
        )],
    );
    let issuer = provider.issuer();
    std::fs::write(
        dir.join("flows/me.yaml"),
        format!(
            "route: me\nmethods: [GET]\nstart: token\nnodes:\n  token:\n    type: check-jwt\n    issuer: {issuer}\n    audiences: [hello-api]\n    required_scopes: [profile]\n    claims: Profile\n    valid: limit\n    invalid: denied\n    forbidden: no-scope\n  limit:\n    type: rate-limit\n    limit: 3\n    window: 1m\n    by: user\n    sequence-ok: ok\n    sequence-limited: too-many\n  ok:\n    type: return-json\n    status: 200\n    body:\n      subject: {{ from: token.subject }}\n      email: {{ from: token.claims.email }}\n  denied: {{ type: return-json, status: 401 }}\n  no-scope: {{ type: return-json, status: 403 }}\n  too-many: {{ type: return-json, status: 429 }}\n"
        ),
    )
    .unwrap();
    let pem = |kid: &str| {
        let url = format!("{}/pem/{kid}", provider.base);
        std::process::Command::new("python3")
            .args([
                "-c",
                "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())",
                &url,
            ])
            .output()
            .map(|o| String::from_utf8(o.stdout).unwrap())
            .unwrap()
    };
    let keys = format!("{}{}", pem("rsa"), pem("ec")).replace('\n', "\n      ");
    std::fs::write(
        dir.join("flows/pem.yaml"),
        format!(
            "route: pem\nmethods: [GET]\nstart: token\nnodes:\n  token:\n    type: check-jwt\n    issuer: {issuer}\n    audiences: [hello-api]\n    algorithms: [RS256, ES256]\n    public_key: |\n      {keys}\n    valid: ok\n    invalid: denied\n  ok:\n    type: return-json\n    status: 200\n    body:\n      subject: {{ from: token.subject }}\n  denied: {{ type: return-json, status: 401 }}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("flows/shared.yaml"),
        format!(
            "route: shared\nmethods: [GET]\nstart: token\nnodes:\n  token:\n    type: check-jwt\n    issuer: {issuer}\n    audiences: [hello-api]\n    secret: JWT_SECRET\n    valid: ok\n    invalid: denied\n  ok:\n    type: return-json\n    status: 200\n    body:\n      subject: {{ from: token.subject }}\n  denied: {{ type: return-json, status: 401 }}\n"
        ),
    )
    .unwrap();
    dir
}

async fn get(server: &Server, path: &str, token: &str) -> reqwest::Response {
    client()
        .get(server.url(path))
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await
        .unwrap()
}

/// The status of `GET /me` with `token`, and for a refusal its challenge.
async fn me(server: &Server, token: &str) -> (u16, Option<String>) {
    let answer = get(server, "/demo/hello/me", token).await;
    let challenge = answer
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string());
    let status = answer.status().as_u16();
    if status >= 400 {
        error(answer).await;
    }
    (status, challenge)
}

async fn refused(server: &Server, token: &str, what: &str) {
    let (status, challenge) = me(server, token).await;
    assert_eq!(status, 401, "{what}: answered {status}");
    assert_eq!(
        challenge.as_deref(),
        Some("Bearer realm=\"demo/hello\", error=\"invalid_token\""),
        "{what}"
    );
}

/// Until `check` holds (a key set fetched in the background), within `within`.
async fn until<F: std::future::Future<Output = bool>>(what: &str, within: Duration, mut check: impl FnMut() -> F) {
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn tokens_of_a_real_provider_pass_and_every_known_attack_is_refused() {
    let provider = Provider::start();
    let dir = project(&provider, "e2e-jwt");
    let bin = project_binary("hello-jwt", &dir);
    let generated = std::fs::read_to_string(dir.join(".svc/server/src/routes/me.rs")).unwrap();
    assert!(
        generated.contains(".check_jwt::<") && generated.contains("crate::assets::Profile,"),
        "{generated}"
    );
    let (server, _) = start_binary("hello-jwt", &bin, &[], &[], |setup| {
        setup.secret("JWT_SECRET", "a shared secret of the issuer and svc")
    });
    let c = client();

    // The keys are fetched at start-up: a token of each algorithm passes, its subject and
    // its claims read through the structure.
    let token = provider.mint(json!({ "claims": claims(&provider, "alice") })).await;
    until("the keys fetched", Duration::from_secs(20), || async {
        me(&server, &token).await.0 == 200
    })
    .await;
    let body: Value = get(&server, "/demo/hello/me", &token).await.json().await.unwrap();
    assert_eq!(body, json!({ "subject": "alice", "email": "alice@example.com" }));
    for (key, alg, subject) in [("rsa", "PS256", "ps"), ("ec", "ES256", "es"), ("ed", "EdDSA", "ed")] {
        let token = provider
            .mint(json!({ "key": key, "alg": alg, "claims": claims(&provider, subject) }))
            .await;
        assert_eq!(me(&server, &token).await.0, 200, "{alg}");
    }

    // No token: a challenge without an error code (RFC 6750 §3.1).
    let answer = c.get(server.url("/demo/hello/me")).send().await.unwrap();
    assert_eq!(answer.headers()["www-authenticate"], "Bearer realm=\"demo/hello\"");
    assert_eq!(error(answer).await.0, 401);

    // A valid token without the route's scope: 403 and `insufficient_scope`.
    let token = provider
        .mint(json!({ "claims": with(claims(&provider, "dan"), json!({ "scope": "openid" })) }))
        .await;
    assert_eq!(
        me(&server, &token).await,
        (
            403,
            Some("Bearer realm=\"demo/hello\", error=\"insufficient_scope\", scope=\"profile\"".into())
        )
    );
    // `scp` as an array (Okta, Entra ID) grants it too.
    let token = provider
        .mint(json!({ "claims": with(claims(&provider, "erin"), json!({ "scope": null, "scp": ["profile"] })) }))
        .await;
    assert_eq!(me(&server, &token).await.0, 200);

    // Rate Limit `by: user` counts per subject.
    let bob = provider.mint(json!({ "claims": claims(&provider, "bob") })).await;
    for _ in 0..3 {
        assert_eq!(me(&server, &bob).await.0, 200);
    }
    assert_eq!(me(&server, &bob).await.0, 429);
    let bob_again = provider
        .mint(json!({ "key": "ec", "alg": "ES256", "claims": claims(&provider, "bob") }))
        .await;
    assert_eq!(
        me(&server, &bob_again).await.0,
        429,
        "a new token of the same subject shares its limit"
    );
    let carol = provider.mint(json!({ "claims": claims(&provider, "carol") })).await;
    assert_eq!(me(&server, &carol).await.0, 200);

    // The registered claims.
    let base = claims(&provider, "mallory");
    for (what, changes) in [
        ("expired", json!({ "exp": now() - 120 })),
        ("not yet valid", json!({ "nbf": now() + 600 })),
        ("no exp", json!({ "exp": null })),
        ("another issuer", json!({ "iss": "https://evil.example.com/" })),
        ("another audience", json!({ "aud": "other-api" })),
        ("no subject", json!({ "sub": null })),
        ("claims that do not fit the structure", json!({ "email": null })),
        ("a claim of the wrong type", json!({ "email": 42 })),
    ] {
        let token = provider.mint(json!({ "claims": with(base.clone(), changes) })).await;
        refused(&server, &token, what).await;
    }
    // Within the leeway (60 s), an expired token still passes; an audience list naming
    // the route's passes.
    let token = provider
        .mint(json!({ "claims": with(claims(&provider, "frank"), json!({ "exp": now() - 10 })) }))
        .await;
    assert_eq!(me(&server, &token).await.0, 200);
    let token = provider
        .mint(json!({ "claims": with(claims(&provider, "gina"), json!({ "aud": ["other-api", "hello-api"] })) }))
        .await;
    assert_eq!(me(&server, &token).await.0, 200);

    // `alg: none`, unsigned, with and without a signature part.
    let header = base64_url(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = base64_url(serde_json::to_string(&base).unwrap().as_bytes());
    refused(&server, &format!("{header}.{payload}."), "alg none, no signature").await;
    refused(&server, &format!("{header}.{payload}.c2ln"), "alg none, a signature").await;
    // Algorithm confusion: HS256 keyed with the published RSA (and EC) public key.
    for key in ["rsa", "ec"] {
        let token = provider
            .mint(json!({ "hmac_with_public_key": key, "claims": base }))
            .await;
        refused(&server, &token, &format!("HS256 keyed with the {key} public key")).await;
    }
    // A token signed with a key the provider does not publish, named by `jku`, `x5u` or
    // `jwk` (never followed, never trusted), or with a `kid` that is a path or a URL.
    let attacker = format!("{}/attacker/jwks.json", provider.base);
    for headers in [
        json!({ "jku": attacker }),
        json!({ "x5u": attacker }),
        json!({ "kid": "../../../../etc/passwd" }),
        json!({ "kid": attacker }),
    ] {
        let token = provider
            .mint(json!({ "key": "attacker", "alg": "ES256", "claims": base, "headers": headers }))
            .await;
        refused(&server, &token, &headers.to_string()).await;
    }
    assert_eq!(
        provider.stats().await["other_paths"],
        json!([]),
        "a header's URL was fetched"
    );
    // A signature that does not hold.
    let valid = provider.mint(json!({ "claims": claims(&provider, "hank") })).await;
    let (signed, signature) = valid.rsplit_once('.').unwrap();
    let flipped = if signature.starts_with('A') { "B" } else { "A" };
    refused(
        &server,
        &format!("{signed}.{flipped}{}", &signature[1..]),
        "a changed signature",
    )
    .await;
    // Claims given twice: JSON parsers keep either one.
    let twice = format!(
        "{}.{}",
        base64_url(br#"{"alg":"RS256","typ":"JWT","kid":"rsa"}"#),
        base64_url(
            format!(
                r#"{{"iss":"{}","aud":"hello-api","sub":"ivan","sub":"admin","exp":{},"scope":"profile","email":"i@example.com"}}"#,
                provider.issuer(),
                now() + 300
            )
            .as_bytes()
        )
    );
    let token = provider.mint(json!({ "raw": twice })).await;
    refused(&server, &token, "a claim given twice").await;
    // base64 with padding, or a character outside base64url.
    let (head, rest) = valid.split_once('.').unwrap();
    refused(&server, &format!("{head}=.{rest}"), "padding").await;
    refused(&server, &format!("{}+{}", &valid[..10], &valid[11..]), "a `+`").await;
    // A 100 kB token: refused (as a header too large, or a token too long), and the
    // server goes on serving.
    let huge = format!("{head}.{}.{}", "A".repeat(100 * 1024), signature);
    let answer = get(&server, "/demo/hello/me", &huge).await;
    assert!(matches!(answer.status().as_u16(), 401 | 431), "{}", answer.status());
    assert_eq!(me(&server, &carol).await.0, 200);
    // A token verified before is remembered until it expires, never past it: one expiring
    // in 2 s (past `exp` by less than the 60 s leeway) passes, then is refused.
    let short = provider
        .mint(json!({ "claims": with(claims(&provider, "nina"), json!({ "exp": now() - 58 })) }))
        .await;
    assert_eq!(me(&server, &short).await.0, 200);
    tokio::time::sleep(Duration::from_secs(3)).await;
    refused(&server, &short, "a remembered token past its expiry").await;

    // A flood of made-up `kid`s fetches the set at most once per 5 s.
    let before = provider.stats().await["certs"].as_u64().unwrap();
    for i in 0..30 {
        let token = provider
            .mint(json!({ "claims": base, "headers": { "kid": format!("made-up-{i}") } }))
            .await;
        assert_eq!(me(&server, &token).await.0, 401);
    }
    let fetched = provider.stats().await["certs"].as_u64().unwrap() - before;
    assert!(fetched <= 1, "{fetched} fetches for 30 unknown kids");

    // Rotation: a new key is picked up without a restart; the old one, no longer
    // published, is refused once the set is fetched again.
    let new_kid = provider.post("/rotate", json!({ "drop": ["rsa"] })).await;
    let rotated = provider
        .mint(json!({ "key": new_kid, "claims": claims(&provider, "judy") }))
        .await;
    until("the new key picked up", Duration::from_secs(15), || async {
        me(&server, &rotated).await.0 == 200
    })
    .await;
    let old = provider
        .mint(json!({ "key": "rsa", "claims": claims(&provider, "kim") }))
        .await;
    refused(&server, &old, "a rotated-out key").await;
    // A token verified (and remembered) before, signed with the key no longer published.
    refused(&server, &carol, "a token remembered from before the rotation").await;

    // The provider down: the keys fetched before keep working.
    provider.post("/down", json!({})).await;
    let token = provider
        .mint(json!({ "key": "ec", "alg": "ES256", "claims": claims(&provider, "liam") }))
        .await;
    assert_eq!(me(&server, &token).await.0, 200);
    provider.post("/up", json!({})).await;

    // HMAC, with the secret set with `svc secrets`: passes; with another secret, or an
    // RS256 token on the HMAC route, refused.
    let shared = |claims: Value, secret: &str| json!({ "alg": "HS256", "secret": secret, "claims": claims });
    let token = provider
        .mint(shared(
            claims(&provider, "mona"),
            "a shared secret of the issuer and svc",
        ))
        .await;
    let answer = get(&server, "/demo/hello/shared", &token).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.json::<Value>().await.unwrap(), json!({ "subject": "mona" }));
    let token = provider
        .mint(shared(
            claims(&provider, "mona"),
            "another secret, as long as the shared one",
        ))
        .await;
    assert_eq!(get(&server, "/demo/hello/shared", &token).await.status(), 401);
    assert_eq!(get(&server, "/demo/hello/shared", &valid).await.status(), 401);

    // Keys given in PEM: tokens of both keys pass, whatever `kid` they name; a key not
    // given does not.
    for (key, alg) in [("rsa", "RS256"), ("ec", "ES256")] {
        let token = provider
            .mint(json!({ "key": key, "alg": alg, "claims": claims(&provider, "pem") }))
            .await;
        assert_eq!(get(&server, "/demo/hello/pem", &token).await.status(), 200, "{alg}");
    }
    let token = provider
        .mint(json!({ "key": "attacker", "alg": "ES256", "claims": claims(&provider, "pem") }))
        .await;
    assert_eq!(get(&server, "/demo/hello/pem", &token).await.status(), 401);

    // Metrics count each way; no token anywhere in them.
    let metrics = c
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for series in [
        r#"svc_protection_outcomes_total{route="me",node="token",check="check_jwt",outcome="valid"}"#,
        r#"svc_protection_outcomes_total{route="me",node="token",check="check_jwt",outcome="invalid"}"#,
        r#"svc_protection_outcomes_total{route="me",node="token",check="check_jwt",outcome="forbidden"}"#,
        r#"svc_jwks_fetches_total{outcome="ok"}"#,
    ] {
        assert!(metrics.contains(series), "{series} in\n{metrics}");
    }
    assert!(!metrics.contains(&valid[..20]));
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn with_the_provider_down_at_start_tokens_are_refused_until_it_answers() {
    let provider = Provider::start();
    provider.post("/down", json!({})).await;
    let dir = project(&provider, "e2e-jwt-down");
    // Its own name: the issuer (the provider's port) differs from the other test's.
    let bin = project_binary("hello-jwt-down", &dir);
    let (server, _) = start_binary("hello-jwt-down", &bin, &[], &[], |setup| {
        setup.secret("JWT_SECRET", "s")
    });
    let token = provider.mint(json!({ "claims": claims(&provider, "alice") })).await;
    // Refused with a 401, not a 5xx, while no key was ever fetched.
    for _ in 0..3 {
        refused(&server, &token, "no keys yet").await;
    }
    // Each failed fetch counted.
    until("a failed fetch counted", Duration::from_secs(20), || async {
        let metrics = client()
            .get(server.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        metrics.contains(r#"svc_jwks_fetches_total{outcome="error"}"#)
            && !metrics.contains(r#"svc_jwks_fetches_total{outcome="error"} 0"#)
    })
    .await;
    provider.post("/up", json!({})).await;
    until(
        "the keys fetched once the provider answers",
        Duration::from_secs(30),
        || async { me(&server, &token).await.0 == 200 },
    )
    .await;
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
