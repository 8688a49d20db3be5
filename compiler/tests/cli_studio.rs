//! `svc studio` with the real binary: the Builder's API over HTTP on a copy of the hooks
//! example (two secrets) and on a project with an error. What a browser sees is tested
//! in `builder/tests/builder.test.mjs`; this is what its API promises: the guard, no secret
//! value, key or hash in any answer, positions kept beside the flow and nowhere else, and
//! diagnostics placed on the node and pin they concern.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use support::{edit, svc_command};

struct Studio {
    child: Child,
    /// The project it serves.
    dir: PathBuf,
    origin: String,
    token: String,
}

impl Studio {
    fn start(dir: &Path) -> Studio {
        let mut child = svc_command()
            .args(["studio", "--port", "0"])
            .arg(dir)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let url = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|line| line.trim().strip_prefix("Builder: ").map(str::to_string))
            .expect("svc studio prints the Builder's URL");
        std::thread::spawn(move || for _ in lines {});
        let (origin, token) = url.split_once("/?token=").expect("the URL carries a token");
        Studio {
            child,
            dir: dir.to_path_buf(),
            origin: origin.to_string(),
            token: token.to_string(),
        }
    }

    fn client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
    }

    async fn get(&self, path: &str) -> (u16, String) {
        self.call(reqwest::Method::GET, path, None).await
    }

    /// Draws a wire in create-order (`check`: only asks whether it could be drawn),
    /// against the flow's version as it is now; the status and the answer.
    async fn wire(&self, from: (&str, &str), to: (&str, &str), check: bool) -> (u16, serde_json::Value) {
        let (_, read) = self.get("/api/flows/create-order").await;
        let base = serde_json::from_str::<serde_json::Value>(&read).unwrap()["version"].clone();
        let body = serde_json::json!({ "base": base, "check": check,
            "from": { "node": from.0, "pin": from.1 }, "to": { "node": to.0, "pin": to.1 } });
        let (status, answer) = self.post("/api/flows/create-order/wire", body).await;
        (
            status,
            serde_json::from_str(&answer).unwrap_or(serde_json::Value::String(answer)),
        )
    }

    /// Asks whether a wire could be drawn, and asserts that it is refused with a message
    /// that begins with `message`.
    async fn assert_wire_refused(&self, from: (&str, &str), to: (&str, &str), message: &str) {
        let (status, answer) = self.wire(from, to, true).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["ok"], false, "{from:?} → {to:?}: {answer}");
        let said = answer["message"].as_str().unwrap_or_default();
        assert!(said.starts_with(message), "{from:?} → {to:?}: {answer}");
    }

    /// Draws a wire in create-order, which must be written as the one line `line`.
    async fn assert_wire_adds(&self, from: (&str, &str), to: (&str, &str), line: &str) {
        let file = self.dir.join("flows/create-order.yaml");
        let before = std::fs::read_to_string(&file).unwrap();
        let (status, answer) = self.wire(from, to, false).await;
        assert_eq!(status, 200, "{from:?} → {to:?}: {answer}");
        let after = std::fs::read_to_string(&file).unwrap();
        let added: Vec<&str> = after.lines().filter(|l| !before.lines().any(|o| o == *l)).collect();
        assert_eq!(added, [line], "{from:?} → {to:?}");
    }

    async fn post(&self, path: &str, body: serde_json::Value) -> (u16, String) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    async fn put(&self, path: &str, body: serde_json::Value) -> (u16, String) {
        self.call(reqwest::Method::PUT, path, Some(body)).await
    }

    /// Settings > API Keys > Create: the status and the answer.
    async fn create_key(&self, name: &str, owner: &str) -> (u16, String) {
        let body = serde_json::json!({"name": name, "owner": owner});
        self.post("/api/keys", body).await
    }

    /// A request to the Builder's API with the page's token: the status and the answer.
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<serde_json::Value>) -> (u16, String) {
        let mut request = self
            .client()
            .request(method, format!("{}{path}", self.origin))
            .header("x-svc-token", &self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer = request.send().await.unwrap();
        (answer.status().as_u16(), answer.text().await.unwrap())
    }
}

impl Drop for Studio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn copy_of(example: &str, name: &str) -> PathBuf {
    support::example_copy(example, &format!("studio-{name}"))
}

#[tokio::test]
async fn the_guard_refuses_what_is_not_the_printed_url() {
    let dir = copy_of("hooks", "guard");
    let studio = Studio::start(&dir);
    let client = studio.client();
    // The printed URL: the token moves into a cookie, and the browser to the bare address.
    let r = client
        .get(format!("{}/?token={}", studio.origin, studio.token))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let value = cookie.split(';').next().unwrap().to_string();
    let page = client
        .get(format!("{}/", studio.origin))
        .header("cookie", &value)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'self'")
    );
    assert!(page.text().await.unwrap().contains("svc Builder"));
    // No token, a wrong one, another Host, another site.
    let api = format!("{}/api/project", studio.origin);
    assert_eq!(client.get(&api).send().await.unwrap().status(), 401);
    let wrong = client
        .get(&api)
        .header("x-svc-token", "0".repeat(48))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let port = studio.origin.rsplit(':').next().unwrap();
    let rebound = client
        .get(&api)
        .header("cookie", &value)
        .header("host", format!("attacker.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
    let foreign = client
        .post(format!("{}/api/keys", studio.origin))
        .header("cookie", &value)
        .header("origin", "https://attacker.example")
        .json(&serde_json::json!({"name": "x", "owner": "y"}))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let error: serde_json::Value = foreign.json().await.unwrap();
    assert_eq!(error["error"]["status"], 403);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn secrets_keys_and_hashes_never_come_back() {
    let dir = copy_of("hooks", "secrets");
    let studio = Studio::start(&dir);
    let value = "whsec_the-value-nobody-may-read-back-42";
    let (status, body) = studio
        .put(
            "/api/secrets/WEBHOOK_SIGNING_KEY",
            serde_json::json!({ "value": value }),
        )
        .await;
    assert_eq!(status, 204, "{body}");
    // Only declared secrets can be set.
    let (status, _) = studio
        .put("/api/secrets/NOT_DECLARED", serde_json::json!({ "value": "x" }))
        .await;
    assert_eq!(status, 404);
    let (status, secrets) = studio.get("/api/secrets").await;
    assert_eq!(status, 200);
    let secrets: serde_json::Value = serde_json::from_str(&secrets).unwrap();
    let rows = secrets["secrets"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "every declared secret: {secrets}");
    assert_eq!(rows[0]["name"], "WEBHOOK_SIGNING_KEY");
    assert_eq!(rows[0]["set"], true);
    assert_eq!(rows[1]["set"], false);
    assert_eq!(rows[2]["name"], "GITHUB_WEBHOOK_SECRET");
    assert_eq!(rows[2]["set"], false);
    // A key, shown once.
    let (status, made) = studio.create_key("ci", "alice").await;
    assert_eq!(status, 201, "{made}");
    let made: serde_json::Value = serde_json::from_str(&made).unwrap();
    let key = made["key"].as_str().unwrap().to_string();
    // A second key of that name is refused, as `svc keys create` refuses it.
    let (status, again) = studio.create_key("ci", "bob").await;
    assert_eq!(status, 409, "{again}");
    for path in ["/api/secrets", "/api/keys", "/api/project"] {
        let (_, text) = studio.get(path).await;
        assert!(!text.contains(value), "{path} shows the secret value");
        assert!(!text.contains(&key), "{path} shows the key");
        assert!(!text.to_lowercase().contains("hash"), "{path} shows a hash: {text}");
    }
    // Sealed at rest, as `svc secrets set` seals it.
    let store = std::fs::read(dir.join(".svc/workspace.db")).unwrap();
    assert!(
        !store.windows(value.len()).any(|w| w == value.as_bytes()),
        "the value is sealed in the store"
    );
    // Rotated: a new key, the old one revoked.
    let (status, rotated) = studio.post("/api/keys/ci/rotate", serde_json::json!({})).await;
    assert_eq!(status, 201, "{rotated}");
    let (_, keys) = studio.get("/api/keys").await;
    let keys: serde_json::Value = serde_json::from_str(&keys).unwrap();
    let statuses = each(&keys["keys"], "status");
    assert_eq!(statuses.iter().filter(|s| **s == "active").count(), 1, "{keys}");
    assert_eq!(statuses.iter().filter(|s| **s == "revoked").count(), 1, "{keys}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn positions_are_kept_beside_the_flow_and_nowhere_else() {
    let dir = copy_of("hooks", "layout");
    let studio = Studio::start(&dir);
    let flow_before = std::fs::read(dir.join("flows/sign.yaml")).unwrap();
    let (status, _) = studio
        .put(
            "/api/layout/sign",
            serde_json::json!({"positions": {"auth": {"x": 10.4, "y": 20.6}}}),
        )
        .await;
    assert_eq!(status, 204);
    let saved = std::fs::read_to_string(dir.join("flows/sign.layout.json")).unwrap();
    assert!(saved.contains("\"x\": 10") && saved.contains("\"y\": 21"), "{saved}");
    assert_eq!(std::fs::read(dir.join("flows/sign.yaml")).unwrap(), flow_before);
    let (_, back) = studio.get("/api/layout/sign").await;
    let back: serde_json::Value = serde_json::from_str(&back).unwrap();
    assert_eq!(back["positions"]["auth"], serde_json::json!({"x": 10, "y": 21}));
    // Only flows that exist, by name: no path leaves flows/.
    for route in ["nope", "..%2Fsvc.config", "..", ".hidden"] {
        let (status, _) = studio
            .put(&format!("/api/layout/{route}"), serde_json::json!({"positions": {}}))
            .await;
        assert_eq!(status, 404, "{route}");
    }
    let (status, _) = studio
        .put(
            "/api/layout/sign",
            serde_json::json!({"positions": {"auth": {"x": "left"}}}),
        )
        .await;
    assert_eq!(status, 400);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The page reads the project when its revision changes: `/api/project` carries the
/// revision it was read at, `/api/project/revision?after=R` answers as soon as a file
/// changes (here, a flow edited while the request waits), and positions are no change.
#[tokio::test]
async fn the_revision_answers_when_a_file_changes_and_not_for_positions() {
    let dir = copy_of("hooks", "revision");
    let studio = Studio::start(&dir);
    let revision_of = |answer: &str| serde_json::from_str::<serde_json::Value>(answer).unwrap()["revision"].clone();
    let (_, project) = studio.get("/api/project").await;
    let read_at = revision_of(&project);
    let (status, now) = studio.get("/api/project/revision").await;
    assert_eq!(status, 200, "{now}");
    assert_eq!(revision_of(&now), read_at, "nothing changed since the model was read");
    let after = read_at.as_str().unwrap().to_string();

    // Positions are the Builder's, not the project's: they change no revision (a wait
    // would run 20 s, so this asks at once, without `after`).
    studio
        .put(
            "/api/layout/sign",
            serde_json::json!({"positions": {"auth": {"x": 1, "y": 2}}}),
        )
        .await;
    let (_, now) = studio.get("/api/project/revision").await;
    assert_eq!(revision_of(&now), read_at, "a layout file is no change");

    let flow = dir.join("flows/sign.yaml");
    let edited = std::fs::read_to_string(&flow)
        .unwrap()
        .replace("limit: 30,", "limit: 31,");
    let started = std::time::Instant::now();
    let path = format!("/api/project/revision?after={after}");
    let waiting = studio.get(&path);
    let edit = async {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        std::fs::write(&flow, &edited).unwrap();
    };
    let ((status, changed), ()) = tokio::join!(waiting, edit);
    assert_eq!(status, 200, "{changed}");
    assert_ne!(revision_of(&changed), read_at, "the edit is a new revision");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "answered when the file changed: {:?}",
        started.elapsed()
    );
    let (_, project) = studio.get("/api/project").await;
    assert_eq!(revision_of(&project), revision_of(&changed));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Edits made in the Builder change the flow file's text only where they edit, and never
/// overwrite a file that changed since the Builder read it.
#[tokio::test]
async fn flow_edits_are_minimal_and_never_overwrite_a_newer_file() {
    let dir = copy_of("shop", "edit");
    let file = dir.join("flows/create-order.yaml");
    // A comment above the node, as a person would write one.
    let with_comment = std::fs::read_to_string(&file).unwrap().replace(
        "  limit:\n    type: rate-limit",
        "  # Per key: a client may not flood the pricing.\n  limit:\n    type: rate-limit",
    );
    std::fs::write(&file, &with_comment).unwrap();
    let studio = Studio::start(&dir);
    let (status, read) = studio.get("/api/flows/create-order").await;
    assert_eq!(status, 200);
    let read: serde_json::Value = serde_json::from_str(&read).unwrap();
    assert_eq!(read["text"], with_comment.as_str());
    let base = read["version"].as_str().unwrap().to_string();

    let set_limit = serde_json::json!({
        "base": base,
        "edits": [{ "op": "set", "path": ["nodes", "limit", "limit"], "value": 50 }],
    });
    let (status, answer) = studio.post("/api/flows/create-order/edit", set_limit.clone()).await;
    assert_eq!(status, 200, "{answer}");
    let saved = std::fs::read_to_string(&file).unwrap();
    let changed: Vec<(&str, &str)> = with_comment
        .lines()
        .zip(saved.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(changed, [("    limit: 100", "    limit: 50")]);
    assert_eq!(with_comment.lines().count(), saved.lines().count());
    assert!(saved.contains("  # Per key: a client may not flood the pricing.\n  limit:\n"));

    // The same base again: the file has moved on, so nothing is written, and the answer
    // carries the file as it is.
    let (status, answer) = studio.post("/api/flows/create-order/edit", set_limit).await;
    assert_eq!(status, 409, "{answer}");
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["current"]["text"], saved.as_str());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), saved);

    // An edit that cannot be made is refused, with which and why, and writes nothing.
    let version = answer["current"]["version"].as_str().unwrap();
    let (status, answer) = studio
        .post(
            "/api/flows/create-order/edit",
            serde_json::json!({ "base": version, "edits": [
                { "op": "set", "path": ["nodes", "limit", "window"], "value": "30s" },
                { "op": "remove", "path": ["nodes", "nope"] },
            ] }),
        )
        .await;
    assert_eq!(status, 422, "{answer}");
    assert!(answer.contains("edit 2 of 2: `nodes.nope` is not there"), "{answer}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), saved);
    for route in ["nope", "..", ".hidden", "create-order.layout"] {
        let (status, _) = studio.get(&format!("/api/flows/{route}")).await;
        assert_eq!(status, 404, "{route}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The text at `key` of each item of the list `list`.
fn each<'a>(list: &'a serde_json::Value, key: &str) -> Vec<&'a str> {
    let items = list.as_array().expect("a list");
    items.iter().map(|item| item[key].as_str().expect("text")).collect()
}

/// What drawing a wire must do.
enum Drawn {
    /// Refused, with a message that begins with this.
    Refused(&'static str),
    /// Written as this one added line.
    Written(&'static str),
}

/// Wires drawn in the Builder are checked by the checker's own rules before anything is
/// written, and written as the line a person would add.
#[tokio::test]
async fn wires_are_checked_as_svc_check_checks_them_then_written_as_one_line() {
    let dir = copy_of("shop", "wire");
    let file = dir.join("flows/create-order.yaml");
    let original = std::fs::read_to_string(&file).unwrap();
    let studio = Studio::start(&dir);
    // Drawing a refused wire anyway writes nothing.
    let (status, _) = studio
        .wire(("price", "quote.total"), ("decide", "currency"), false)
        .await;
    assert_eq!(status, 422);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    // From Start: a request input, and its sequence output.
    for (from, to) in [
        (("(start)", "body.currency"), ("decide", "currency")),
        (("(start)", "start"), ("auth", "exec")),
    ] {
        let (_, answer) = studio.wire(from, to, true).await;
        assert_eq!(answer["ok"], true, "{from:?} → {to:?}: {answer}");
    }
    // Each wire refused with the checker's message (or the start of it), or written as
    // one added line where it belongs.
    use Drawn::{Refused, Written};
    let wires = [
        // A number into an enum input.
        (
            ("price", "quote.total"),
            ("decide", "currency"),
            Refused(
                "`price.quote.total` is `number`, but input `currency` of `shop.decide-status` is `enum-value:Currency`",
            ),
        ),
        // A value into `exec`, and an edge into a value.
        (("price", "quote"), ("decide", "exec"), Refused("")),
        (("limit", "sequence-ok"), ("decide", "total"), Refused("")),
        // From Start, a request input of the wrong type.
        (
            ("(start)", "body.currency"),
            ("decide", "total"),
            Refused("`request.body.currency` is `enum-value:Currency`"),
        ),
        // Into Return JSON: a structure is not a header value (the checker's rule).
        (
            ("price", "quote"),
            ("created", "headers.x-quote"),
            Refused("`price.quote` is `object:Quote`, but a header value must be text"),
        ),
        // A number into a number input: in the node's inputs.
        (
            ("price", "quote.total"),
            ("decide", "review_above"),
            Written("      review_above: { from: price.quote.total }"),
        ),
        // A body field of Return JSON takes any value.
        (
            ("price", "line_count"),
            ("created", "body.lines"),
            Written("      lines: { from: price.line_count }"),
        ),
    ];
    for (from, to, drawn) in wires {
        match drawn {
            Refused(message) => studio.assert_wire_refused(from, to, message).await,
            Written(line) => studio.assert_wire_adds(from, to, line).await,
        }
    }
    let wired = std::fs::read_to_string(&file).unwrap();
    assert_eq!(wired.lines().count(), original.lines().count() + 2);
    let body_at = wired.find("\n    body:\n").unwrap();
    assert!(
        wired[body_at..].contains("      lines: { from: price.line_count }"),
        "{wired}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_project_with_errors_opens_with_its_diagnostics_on_their_nodes() {
    let dir = copy_of("shop", "errors");
    let flow = dir.join("flows/create-order.yaml");
    edit(&flow, &[("node: shop.price-order", "node: shop.pric-order")]);
    let studio = Studio::start(&dir);
    let (status, model) = studio.get("/api/project").await;
    assert_eq!(status, 200);
    let model: serde_json::Value = serde_json::from_str(&model).unwrap();
    assert!(model["project"]["errors"].as_u64().unwrap() >= 1);
    let unknown = model["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "E0401")
        .expect("the unknown node key is reported, as svc check reports it");
    assert_eq!(unknown["file"], "flows/create-order.yaml");
    assert_eq!(unknown["route"], "create-order");
    assert_eq!(unknown["node"], "price");
    // What could be read is drawn: both routes, every node of the broken one.
    let routes = model["routes"].as_array().unwrap();
    assert_eq!(routes.len(), 2);
    let nodes = routes[0]["nodes"].as_array().unwrap();
    assert!(nodes.iter().any(|n| n["id"] == "price"));

    // A node svc cannot read is drawn all the same, marked, with its problem on it, its
    // settings and its edges as written, and an output for what other nodes read of it.
    edit(&flow, &[("location: header-x-api-key", "location: cookie:session")]);
    let (_, model) = studio.get("/api/project").await;
    let model: serde_json::Value = serde_json::from_str(&model).unwrap();
    let problem = model["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "E0105");
    assert_eq!(problem.expect("the bad location is reported")["node"], "auth");
    let route = &model["routes"][0];
    let auth = route["nodes"].as_array().unwrap().iter().find(|n| n["id"] == "auth");
    let auth = auth.expect("the node svc could not read is still in the model");
    assert_eq!(
        (&auth["type"], &auth["unreadable"]),
        (&"check-api-key".into(), &true.into())
    );
    assert_eq!(auth["settings"][0]["value"], "cookie:session");
    assert_eq!(each(&auth["outputs"], "id"), ["valid", "invalid", "user"]);
    let edge = route["wires"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["from"]["node"] == "auth" && w["from"]["pin"] == "valid");
    assert_eq!(edge.expect("its edge as written")["to"]["node"], "limit");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A project cloned from anyone is opened in the Builder: no read or write leaves it,
/// whatever links it plants. Every write path (an edit, undo, a node added, a wire, a
/// new route, a node dragged) with its old fixed temporary name planted as a link to a
/// file outside; every read path with a link to a secret outside.
#[cfg(unix)]
#[tokio::test]
async fn a_cloned_project_cannot_make_the_builder_read_or_write_outside_it() {
    use std::os::unix::fs::symlink;
    let dir = copy_of("shop", "planted-links");
    let outside = support::scratch_dir("studio-planted-links-outside");
    let (victim, secret) = (outside.join("bashrc"), outside.join("secret"));
    std::fs::write(&victim, "keep me\n").unwrap();
    std::fs::write(&secret, "s3cret-outside\n").unwrap();
    let flows = dir.join("flows");
    for planted in [
        "create-order.yaml.svc-tmp",
        "create-order.layout.json.tmp",
        ".fresh.yaml.svc-new",
        "start-export.layout.json",
    ] {
        symlink(&victim, flows.join(planted)).unwrap();
    }
    symlink(&secret, flows.join("link.yaml")).unwrap();
    let studio = Studio::start(&dir);
    let untouched = || assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");

    // Writes: each lands in the project, none through a planted link.
    let version = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap()["version"].clone();
    let (_, read) = studio.get("/api/flows/create-order").await;
    let base = version(&read);
    let edit = serde_json::json!({ "base": base,
        "edits": [{ "op": "set", "path": ["nodes", "limit", "limit"], "value": 50 }] });
    let (status, answer) = studio.post("/api/flows/create-order/edit", edit).await;
    assert_eq!(status, 200, "{answer}");
    untouched();
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let undo = serde_json::json!({ "base": answer["version"], "text": answer["previous"]["text"] });
    let (status, answer) = studio.put("/api/flows/create-order", undo).await;
    assert_eq!(status, 200, "{answer}");
    let add = serde_json::json!({ "action": "add", "base": version(&answer), "type": "return-json" });
    let (status, answer) = studio.post("/api/flows/create-order/node", add).await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = studio
        .put(
            "/api/layout/create-order",
            serde_json::json!({"positions": {"auth": {"x": 1, "y": 2}}}),
        )
        .await;
    assert_eq!(status, 204, "{answer}");
    let new_route = serde_json::json!({ "name": "fresh", "route": "fresh", "methods": ["GET"] });
    let (status, answer) = studio.post("/api/flows", new_route).await;
    assert_eq!(status, 201, "{answer}");
    untouched();
    assert!(
        std::fs::read_to_string(flows.join("fresh.yaml"))
            .unwrap()
            .contains("route: fresh")
    );

    // A layout file that is itself a link is neither read nor written.
    let (status, answer) = studio.get("/api/layout/start-export").await;
    assert_eq!(status, 403, "{answer}");
    assert!(answer.contains("symbolic link"), "{answer}");
    let (status, _) = studio
        .put("/api/layout/start-export", serde_json::json!({"positions": {}}))
        .await;
    assert_eq!(status, 403);
    untouched();

    // Reads: a linked flow is refused with a message, and its target's text is in no
    // answer (the project, its diagnostics, the code).
    let (status, answer) = studio.get("/api/flows/link").await;
    assert_eq!(status, 403, "{answer}");
    assert!(answer.contains("`flows/link.yaml` is a symbolic link"), "{answer}");
    let edit = serde_json::json!({ "base": "x", "edits": [] });
    let (status, _) = studio.post("/api/flows/link/edit", edit).await;
    assert_eq!(status, 403);
    let (status, project) = studio.get("/api/project").await;
    assert_eq!(status, 200);
    assert!(!project.contains("s3cret-outside"), "{project}");
    assert!(
        project.contains("symbolic link that leads out of the project"),
        "{project}"
    );
    let (_, code) = studio.get("/api/code/link").await;
    assert!(!code.contains("s3cret-outside"), "{code}");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "s3cret-outside\n");
    drop(studio);

    // `flows/` itself a link out of the project.
    let elsewhere = outside.join("flows");
    std::fs::rename(&flows, &elsewhere).unwrap();
    symlink(&elsewhere, &flows).unwrap();
    let studio = Studio::start(&dir);
    let (status, answer) = studio.get("/api/flows/create-order").await;
    assert_eq!(status, 403, "{answer}");
    assert!(answer.contains("`flows/` is a symbolic link"), "{answer}");
    let new_route = serde_json::json!({ "name": "other", "route": "other", "methods": ["GET"] });
    let (status, _) = studio.post("/api/flows", new_route).await;
    assert_eq!(status, 403);
    assert!(!elsewhere.join("other.yaml").exists());
    let (_, project) = studio.get("/api/project").await;
    assert!(
        !project.contains("\"create-order\""),
        "the linked flows are not read: {project}"
    );
    drop(studio);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&outside);
}

/// The Builder's connections are held to a generated server's limits: a head drip-fed
/// past its deadline is closed, connections past the cap are answered 503 at once, and
/// the page answers throughout.
#[tokio::test]
async fn slow_and_idle_clients_cannot_hold_the_builder() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = copy_of("hello", "slow-clients");
    let studio = Studio::start(&dir);
    let addr = studio.origin.trim_start_matches("http://").to_string();
    let started = std::time::Instant::now();
    let mut drip = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut idle = Vec::new();
    for _ in 0..140 {
        idle.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    // Past the cap (128): a 503 at once.
    let mut refused = 0;
    for c in idle.iter_mut().skip(120) {
        let mut answer = vec![0u8; 64];
        if let Ok(Ok(n)) = tokio::time::timeout(std::time::Duration::from_secs(2), c.read(&mut answer)).await
            && answer[..n].starts_with(b"HTTP/1.1 503")
        {
            refused += 1;
        }
    }
    assert!(refused >= 10, "{refused} of the connections past the cap were refused");
    // One byte a second: the head deadline (5 s) closes it.
    let closed = loop {
        if drip.write_all(b"G").await.is_err() {
            break true;
        }
        let mut byte = [0u8; 1];
        if let Ok(read) = tokio::time::timeout(std::time::Duration::from_secs(1), drip.read(&mut byte)).await {
            break matches!(read, Ok(0) | Err(_));
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            break false;
        }
    };
    assert!(closed, "a drip-fed head was still open after {:?}", started.elapsed());
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    // The idle ones are closed too, and the page answers.
    drop(idle);
    let (status, _) = studio.get("/api/project").await;
    assert_eq!(status, 200);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--addr 0` binds every interface: the warning is decided on the bound socket, and the
/// printed URL is one that reaches it.
#[test]
fn the_exposure_warning_follows_the_bound_address() {
    let dir = copy_of("hello", "exposure");
    let mut child = svc_command()
        .args(["studio", "--port", "0", "--addr", "0"])
        .arg(&dir)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        let done = line.contains("Builder: ");
        seen.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = seen.join("\n");
    assert!(text.contains("warning: the Builder listens on 0.0.0.0:"), "{text}");
    assert!(text.contains("Builder: http://127.0.0.1:"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a write must be: JSON (or sent with the script's header), with no field the API
/// does not know, and a new route whose every part can be written as it is.
#[tokio::test]
async fn writes_are_json_with_known_fields_and_routes_that_inject_nothing() {
    let dir = copy_of("hello", "write-shapes");
    let studio = Studio::start(&dir);
    let client = studio.client();
    let cookie = format!("svc_builder={}", studio.token);
    let url = format!("{}/api/keys", studio.origin);
    // A form's post, with the cookie: refused before anything is done.
    let form = client
        .post(&url)
        .header("cookie", &cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("name=x&owner=y")
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), 415);
    let bare = client.post(&url).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(bare.status(), 415);
    let json = client
        .post(&url)
        .header("cookie", &cookie)
        .header("content-type", "application/json; charset=utf-8")
        .body(r#"{"name": "x", "owner": "y"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(json.status(), 201, "{:?}", json.text().await);
    // Unknown fields are refused.
    let (status, _) = studio
        .post(
            "/api/keys",
            serde_json::json!({"name": "x", "owner": "y", "admin": true}),
        )
        .await;
    assert_eq!(status, 400);
    // A new route: no line break, space or unknown method reaches the file.
    for (route, methods) in [
        ("fresh\nsecrets: [X]", vec!["GET"]),
        ("fresh path", vec!["GET"]),
        ("fresh", vec!["GET\nsecrets: [X]"]),
        ("fresh", vec!["get"]),
        ("fresh", vec!["TRACE"]),
    ] {
        let body = serde_json::json!({ "name": "fresh", "route": route, "methods": methods });
        let (status, answer) = studio.post("/api/flows", body).await;
        assert_eq!(status, 400, "{route:?} {methods:?}: {answer}");
        assert!(!dir.join("flows/fresh.yaml").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
