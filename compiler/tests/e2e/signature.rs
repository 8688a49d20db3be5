//! Check Signature end to end: a copy of `examples/hello` with webhook routes behind
//! GitHub's, Stripe's and Standard Webhooks' signatures, built and served, and requests
//! signed by code that shares nothing with svc's: Python's `hmac` as each provider's
//! documentation says, and the providers' own libraries (`stripe`, `standardwebhooks`,
//! through `webhook_signer.py`), which also verify what `svc test` signs. A signed
//! delivery passes, 1 MB of it too; a re-serialised body, a wrong or an old secret, an old
//! timestamp and a replayed message id are refused.

use crate::harness::{Server, client, project_binary, start_binary};
use crate::support::{edit, example_copy, svc};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

/// `examples/hello` with three webhook routes, each answering the body's length.
fn project() -> std::path::PathBuf {
    let dir = example_copy("hello", "e2e-signature");
    edit(
        &dir.join("svc.config.yaml"),
        &[(
            "enums:",
            "secrets:\n  - name: GITHUB_SECRET\n  - name: STRIPE_SECRET\n  - name: STRIPE_SECRET_NEXT\n    required: false\n  - name: WEBHOOK_SECRET\n\nenums:",
        )],
    );
    for (route, preset, secrets) in [
        ("github", "github", "[GITHUB_SECRET]"),
        ("stripe", "stripe", "[STRIPE_SECRET, STRIPE_SECRET_NEXT]"),
        ("events", "standard-webhooks", "[WEBHOOK_SECRET]"),
    ] {
        std::fs::write(
            dir.join(format!("flows/{route}.yaml")),
            format!(
                "route: hooks/{route}\nmethods: [POST]\nstart: signed\nnodes:\n  signed:\n    type: check-signature\n    preset: {preset}\n    secrets: {secrets}\n    valid: ok\n    invalid: refused\n  ok: {{ type: return-json, status: 204 }}\n  refused: {{ type: return-json, status: 401 }}\n"
            ),
        )
        .unwrap();
    }
    dir
}

/// HMAC-SHA256 of `message` under `key`, by Python's standard library, as hex and base64.
fn python_hmac(key: &[u8], message: &[u8]) -> (String, String) {
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, hmac, hashlib, base64; k = bytes.fromhex(sys.argv[1]); m = bytes.fromhex(sys.argv[2]); d = hmac.new(k, m, hashlib.sha256).digest(); print(d.hex(), base64.b64encode(d).decode())",
            &hex(key),
            &hex(message),
        ])
        .output()
        .expect("python3 runs");
    let text = String::from_utf8(out.stdout).unwrap();
    let (hex, b64) = text.trim().split_once(' ').expect("two encodings");
    (hex.to_string(), b64.to_string())
}

/// The providers' libraries, in `webhook_signer.py`: one JSON request a line.
struct Libraries {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Libraries {
    fn start() -> Libraries {
        let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/webhook_signer.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the providers' libraries (stripe, standardwebhooks: scripts/setup.sh installs them)");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Libraries { child, input, output }
    }

    fn ask(&mut self, request: Value) -> Value {
        writeln!(self.input, "{request}").unwrap();
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?} (is the library installed?)"))
    }

    /// The headers `provider`'s library sends with `body`.
    fn sign(&mut self, provider: &str, secret: &str, body: &[u8], id: &str, t: u64) -> Vec<(String, String)> {
        let answer =
            self.ask(json!({ "sign": provider, "secret": secret, "body_hex": hex(body), "id": id, "timestamp": t }));
        let headers = answer["headers"].as_object().expect("headers").clone();
        headers
            .into_iter()
            .map(|(name, value)| (name, value.as_str().unwrap().to_string()))
            .collect()
    }

    /// Whether `provider`'s library accepts `headers` for `body`.
    fn verify(&mut self, provider: &str, secret: &str, body: &[u8], headers: &[(&str, String)]) -> Value {
        let headers: serde_json::Map<String, Value> = headers.iter().map(|(n, v)| (n.to_string(), json!(v))).collect();
        self.ask(json!({ "verify": provider, "secret": secret, "body_hex": hex(body), "headers": headers }))
    }
}

impl Drop for Libraries {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

async fn post<N: AsRef<str>>(server: &Server, route: &str, body: &[u8], headers: &[(N, String)]) -> u16 {
    let mut request = client()
        .post(server.url(&format!("/demo/hello/hooks/{route}")))
        .header("content-type", "application/json")
        .body(body.to_vec());
    for (name, value) in headers {
        request = request.header(name.as_ref(), value);
    }
    request.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn webhooks_signed_as_providers_sign_pass_and_tampered_or_replayed_ones_do_not() {
    let dir = project();
    // The secrets the flows read are not unused (W0704), and a signed write route is not
    // one that "can succeed without an API key" (W0701).
    let (code, _, said) = svc(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{said}");
    assert!(!said.contains("W0704") && !said.contains("W0701"), "{said}");
    let bin = project_binary("hello-signature", &dir);
    let generated = std::fs::read_to_string(dir.join(".svc/server/src/routes/github.rs")).unwrap();
    assert!(
        generated.contains("request.bytes(&ex)") && generated.contains("check_signature"),
        "{generated}"
    );
    let (server, _) = start_binary("hello-signature", &bin, &[], &[], |setup| {
        setup.secret("GITHUB_SECRET", "It's a Secret to Everybody");
        setup.secret("STRIPE_SECRET", "whsec_old");
        setup.secret("STRIPE_SECRET_NEXT", "whsec_new");
        setup.secret("WEBHOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    });
    // Non-ASCII text and a trailing newline: the bytes as sent are what is signed.
    let body = "{\"action\": \"opened\", \"title\": \"Grüße\"}\n".as_bytes();

    // GitHub: `X-Hub-Signature-256: sha256=<hex>` over the body.
    let (hex, _) = python_hmac(b"It's a Secret to Everybody", body);
    let github = [("x-hub-signature-256", format!("sha256={hex}"))];
    assert_eq!(post(&server, "github", body, &github).await, 204);
    let reserialised = b"{\"action\":\"opened\",\"title\":\"Gr\\u00fc\\u00dfe\"}";
    assert_eq!(
        post(&server, "github", reserialised, &github).await,
        401,
        "re-serialised JSON"
    );
    assert_eq!(post::<&str>(&server, "github", body, &[]).await, 401, "unsigned");
    let (wrong, _) = python_hmac(b"another secret", body);
    assert_eq!(
        post(
            &server,
            "github",
            body,
            &[("x-hub-signature-256", format!("sha256={wrong}"))]
        )
        .await,
        401
    );

    // Stripe: `t=<t>,v1=<hex>` over `<t>.<body>`; either secret while one is rotated.
    let stripe = |secret: &str, t: u64| {
        let mut message = format!("{t}.").into_bytes();
        message.extend_from_slice(body);
        let (hex, _) = python_hmac(secret.as_bytes(), &message);
        [("stripe-signature", format!("t={t},v1={hex}"))]
    };
    assert_eq!(post(&server, "stripe", body, &stripe("whsec_old", now())).await, 204);
    assert_eq!(
        post(&server, "stripe", body, &stripe("whsec_new", now())).await,
        204,
        "the next secret"
    );
    assert_eq!(post(&server, "stripe", body, &stripe("whsec_other", now())).await, 401);
    assert_eq!(
        post(&server, "stripe", body, &stripe("whsec_old", now() - 600)).await,
        401,
        "10 minutes old"
    );

    // Standard Webhooks: `v1,<base64>` over `<id>.<t>.<body>` with the `whsec_` key; one
    // delivery once.
    let key = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
            .unwrap()
    };
    let standard = |id: &str, t: u64| {
        let mut message = format!("{id}.{t}.").into_bytes();
        message.extend_from_slice(body);
        let (_, b64) = python_hmac(&key, &message);
        [
            ("webhook-id", id.to_string()),
            ("webhook-timestamp", t.to_string()),
            ("webhook-signature", format!("v1,{b64}")),
        ]
    };
    let delivery = standard("msg_e2e_1", now());
    assert_eq!(post(&server, "events", body, &delivery).await, 204);
    assert_eq!(
        post(&server, "events", body, &delivery).await,
        401,
        "the same delivery again"
    );
    assert_eq!(post(&server, "events", body, &standard("msg_e2e_2", now())).await, 204);
    assert_eq!(
        post(&server, "events", body, &standard("msg_e2e_3", now() - 3600)).await,
        401,
        "an hour old"
    );

    // The providers' own libraries sign; svc verifies. And what `svc test` signs with
    // (`svc_runtime::signature::sign`), the libraries verify.
    let mut libraries = Libraries::start();
    let signed = libraries.sign("stripe", "whsec_new", body, "", now());
    assert_eq!(
        post(&server, "stripe", body, &signed).await,
        204,
        "stripe's library: {signed:?}"
    );
    let old = libraries.sign("stripe", "whsec_new", body, "", now() - 900);
    assert_eq!(
        post(&server, "stripe", body, &old).await,
        401,
        "15 minutes old, by stripe's library"
    );
    let standard_secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let signed = libraries.sign("standard-webhooks", standard_secret, body, "msg_library_1", now());
    assert_eq!(
        post(&server, "events", body, &signed).await,
        204,
        "standardwebhooks' library: {signed:?}"
    );
    assert_eq!(
        post(&server, "events", body, &signed).await,
        401,
        "the library's delivery again"
    );
    let megabyte = {
        let mut text = br#"{"padding": ""#.to_vec();
        text.extend(std::iter::repeat_n(b'x', 1_000_000));
        text.extend(br#""}"#);
        text
    };
    let signed = libraries.sign(
        "standard-webhooks",
        standard_secret,
        &megabyte,
        "msg_library_big",
        now(),
    );
    assert_eq!(
        post(&server, "events", &megabyte, &signed).await,
        204,
        "a 1 MB delivery"
    );
    for (provider, secret) in [("stripe", "whsec_old"), ("standard-webhooks", standard_secret)] {
        let ours = svc_runtime::signature::sign(provider, secret, body, SystemTime::now(), "msg_svc_test").unwrap();
        let verdict = libraries.verify(provider, secret, body, &ours);
        assert_eq!(
            verdict["ok"], true,
            "{provider}'s library on what svc test sends: {verdict}"
        );
    }

    // A body over the server's limit is the usual 413, not a signature check.
    let big = vec![b'x'; 2 * 1024 * 1024];
    assert_eq!(post(&server, "github", &big, &github).await, 413);

    // Counted per outcome, under the node's check.
    let metrics = client()
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("check=\"check_signature\"") && metrics.contains("outcome=\"invalid\""),
        "{metrics}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
