//! `svc dev` and `svc run` with the real binary, on a project made by `svc init`: the
//! server answers over a real socket, an edited flow changes what it answers, a broken
//! flow leaves the last good server running, and one node runs alone.
//!
//! Builds share the repository's `target/` with the end-to-end tests, so dependencies
//! compile once per run.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{assert_contains, edit, outcome, repo, svc_command};
use svc_runtime::apikey::{KeyRecord, unix_now};
use svc_runtime::store::{SqliteStore, WorkspaceStore};

/// A project made by `svc init` in a fresh directory named `name`.
fn init(name: &str) -> PathBuf {
    init_with(name, &[])
}

/// A project made by `svc init DIR ARGS…`.
fn init_with(name: &str, args: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("svc-cli-dev-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let status = Command::new(env!("CARGO_BIN_EXE_svc"))
        .arg("init")
        .arg(&dir)
        .args(args)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A GET over a fresh connection: (status, body).
fn get(port: u16, path: &str, key: &str) -> (u16, String) {
    try_get(port, path, key).unwrap()
}

/// A GET over a fresh connection: (status, body), or what went wrong.
fn try_get(port: u16, path: &str, key: &str) -> Result<(u16, String), String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: localhost\r\nx-api-key: {key}\r\nconnection: close\r\n\r\n"
    )
    .map_err(|e| format!("send: {e}"))?;
    let mut text = String::new();
    s.read_to_string(&mut text).map_err(|e| format!("read: {e}"))?;
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    Ok((status, body))
}

/// A flow holding this makes (debug-built) svc dev panic in checking, as a bug would.
const PANIC_MARKER: &str = "svc-test-panic-while-checking";

struct Dev {
    child: Child,
    listening: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Dev {
    fn start(dir: &Path, port: u16) -> Dev {
        use std::os::unix::process::CommandExt;
        let mut child = svc_command()
            .arg("dev")
            .arg(dir)
            .args(["--port", &port.to_string()])
            .env("CARGO_TARGET_DIR", repo().join("target"))
            .env_remove("SVC_LOG")
            .env("SVC_DEBUG_PANIC_ON_FLOW_TEXT", PANIC_MARKER)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so that the test can stop svc dev and its server at once.
            .process_group(0)
            .spawn()
            .unwrap();
        let (tx, listening) = channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("listening on ") {
                    let _ = tx.send(line);
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Dev {
            child,
            listening,
            stderr,
        }
    }

    fn wait_listening(&self, within: Duration) {
        if self.listening.recv_timeout(within).is_err() {
            panic!("svc dev did not (re)start a server:\n{}", self.stderr());
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn wait_stderr(&self, needle: &str, within: Duration) {
        let deadline = Instant::now() + within;
        while !self.stderr().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "svc dev never printed `{needle}`:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        // The whole group (svc dev, cargo, the server); `--` so that `-PGID` is not read as a signal.
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--"])
            .arg(format!("-{}", self.child.id()))
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn create_key(dir: &Path) -> String {
    std::fs::create_dir_all(dir.join(".svc")).unwrap();
    let store = SqliteStore::open(&dir.join(".svc/workspace.db")).unwrap();
    let (key, record) = KeyRecord::issue("dev", "ada", unix_now(), None);
    store.insert_key(&record).unwrap();
    key
}

/// `svc dev` on the project in `dir`, with a key made for it, once it listens: (the key,
/// its port, the running `svc dev`).
fn serve(dir: &Path) -> (String, u16, Dev) {
    let key = create_key(dir);
    let port = free_port();
    let dev = Dev::start(dir, port);
    dev.wait_listening(Duration::from_secs(900));
    (key, port, dev)
}

/// `svc dev` on a TypeScript project: the node's logs reach the trace, and a change to
/// the node's code alone restarts the server on the new bytecode without a Rust build.
#[test]
fn dev_reloads_typescript_nodes_without_a_rust_rebuild() {
    let dir = init_with("devloop-ts", &["--lang", "ts"]);
    let (key, port, dev) = serve(&dir);
    let path = "/local/devloop-ts/greeting?name=Ada&tone=formal";
    let (status, body) = get(port, path, &key);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Good day, Ada."), "{body}");
    dev.wait_stderr("    greet: greeted Ada", Duration::from_secs(10));

    // Requests sent all through the restart: each one is answered (by the old server or
    // the new one), none refused while the server is swapped.
    let asking = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let answers = {
        let (asking, key) = (asking.clone(), key.clone());
        std::thread::spawn(move || {
            let mut answers = Vec::new();
            while asking.load(std::sync::atomic::Ordering::Relaxed) {
                answers.push(try_get(port, path, &key).map(|(status, _)| status));
                std::thread::sleep(Duration::from_millis(10));
            }
            answers
        })
    };
    let node = dir.join("src/nodes/greet.ts");
    edit(&node, &[("Good day, ${name}.", "Greetings, ${name}.")]);
    dev.wait_stderr(
        "TypeScript only: the server loads the new bytecode",
        Duration::from_secs(60),
    );
    dev.wait_listening(Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(200));
    asking.store(false, std::sync::atomic::Ordering::Relaxed);
    let answers = answers.join().unwrap();
    let unanswered: Vec<&String> = answers.iter().filter_map(|a| a.as_ref().err()).collect();
    assert!(
        unanswered.is_empty(),
        "{} of {} requests not answered: {unanswered:?}",
        unanswered.len(),
        answers.len()
    );
    // 429 once the route's limit of 60 a minute is spent; never svc dev's own 503.
    assert!(answers.iter().all(|a| matches!(a, Ok(200 | 429))), "{answers:?}");
    let (status, body) = get(port, path, &key);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Greetings, Ada."), "{body}");
    assert_eq!(
        dev.stderr().matches("   Built `devloop-ts`").count(),
        1,
        "only the first start builds Rust:\n{}",
        dev.stderr()
    );
}

#[test]
fn dev_serves_rebuilds_on_a_change_and_keeps_the_last_good_server() {
    let dir = init("devloop");
    let path = "/local/devloop/greeting?name=Ada&tone=formal";
    // Started on a project with an error: no server, and svc dev says so on the port.
    let flow_path = dir.join("flows/greeting.yaml");
    let flow = std::fs::read_to_string(&flow_path).unwrap();
    std::fs::write(&flow_path, flow.replace("type: check-api-key", "type: check-api-ky")).unwrap();
    let key = create_key(&dir);
    let port = free_port();
    let dev = Dev::start(&dir, port);
    dev.wait_stderr("Waiting for a change to build again", Duration::from_secs(60));
    let (status, body) = get(port, path, &key);
    assert_eq!(status, 503, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], "dev_server_not_running");
    assert_eq!(body["error"]["status"], 503);
    assert_eq!(body["error"]["retry_after"], 1);
    assert_eq!(
        body["error"]["message"],
        "no server is running: the project has errors; fix the problems `svc dev` printed and save again"
    );
    std::fs::write(&flow_path, &flow).unwrap();
    dev.wait_listening(Duration::from_secs(900));

    let (status, body) = get(port, path, &key);
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("Good day, Ada.") && body.contains(r#""user":"ada""#),
        "{body}"
    );
    // One trace line for the run, then the node's ctx.log lines.
    dev.wait_stderr(
        "GET /local/devloop/greeting 200 [origin→allowed auth→valid limit→sequence-ok greet→next]",
        Duration::from_secs(10),
    );
    dev.wait_stderr("    greet: greeted Ada", Duration::from_secs(10));
    let (status, _) = get(port, path, "svck_not-a-key");
    assert_eq!(status, 401);
    dev.wait_stderr("401 [origin→allowed auth→invalid]", Duration::from_secs(10));

    // The dev server links svc's runtime from the shared library (docs/runtime.md).
    let manifest = std::fs::read_to_string(dir.join(".svc/dev-server/Cargo.toml")).unwrap();
    assert!(manifest.contains("svc-dylib = {"), "{manifest}");

    // Edit the flow: the server is rebuilt (rustc alone, as cargo last ran it) and
    // restarted with the new answer.
    edit(&flow_path, &[("status: 200", "status: 202")]);
    dev.wait_listening(Duration::from_secs(300));
    let (status, body) = get(port, path, &key);
    assert_eq!(status, 202, "{body}");
    assert_eq!(dev.stderr().matches("(rustc only)").count(), 1, "{}", dev.stderr());

    // Edit the node: the node crate and the server are compiled again the same way.
    let node_path = dir.join("src/nodes/greet.rs");
    let node = std::fs::read_to_string(&node_path).unwrap();
    std::fs::write(&node_path, node.replace("Good day, {name}.", "Greetings, {name}.")).unwrap();
    dev.wait_listening(Duration::from_secs(300));
    let (status, body) = get(port, path, &key);
    assert!(status == 202 && body.contains("Greetings, Ada."), "{status} {body}");
    assert_eq!(dev.stderr().matches("(rustc only)").count(), 2, "{}", dev.stderr());

    // A node that does not compile: cargo reports it, and the last good server answers.
    std::fs::write(&node_path, node.replace("Good day, {name}.", "Greetings, {nme}.")).unwrap();
    dev.wait_stderr("cannot find value `nme` in this scope", Duration::from_secs(300));
    dev.wait_stderr("src/nodes/greet.rs:", Duration::from_secs(10));
    dev.wait_stderr("last good server keeps running", Duration::from_secs(10));
    assert!(get(port, path, &key).1.contains("Greetings, Ada."));
    std::fs::write(&node_path, &node).unwrap();
    dev.wait_listening(Duration::from_secs(300));
    assert!(get(port, path, &key).1.contains("Good day, Ada."));

    // Break it: the diagnostics are printed and the last good server keeps answering.
    let edited = std::fs::read_to_string(&flow_path).unwrap();
    std::fs::write(&flow_path, edited.replace("type: check-api-key", "type: check-api-ky")).unwrap();
    dev.wait_stderr("unknown node type `check-api-ky`", Duration::from_secs(60));
    dev.wait_stderr("last good server keeps running", Duration::from_secs(10));
    let (status, _) = get(port, path, &key);
    assert_eq!(status, 202);

    // svc itself panics while checking (a bug): svc dev says so, and lives on with the
    // last good server (the multi-byte `date-time` literal once did this).
    std::fs::write(&flow_path, format!("# {PANIC_MARKER}\n{edited}")).unwrap();
    dev.wait_stderr("a bug in svc", Duration::from_secs(60));
    assert_eq!(get(port, path, &key).0, 202);

    // Fix it again: back to a new server.
    std::fs::write(&flow_path, edited.replace("status: 202", "status: 200")).unwrap();
    dev.wait_listening(Duration::from_secs(300));
    assert_eq!(get(port, path, &key).0, 200);
}

#[test]
fn run_executes_one_node_with_json_inputs() {
    run_one_node(&init("runone"), "runone");
}

/// `svc run` on a TypeScript node: the same answers as for the Rust node `svc init`
/// writes, and an exception is reported with the engine's message, exit 1.
#[test]
fn run_executes_one_typescript_node_with_json_inputs() {
    let dir = init_with("runone-ts", &["--lang", "ts"]);
    run_one_node(&dir, "runone-ts");
    let node = dir.join("src/nodes/greet.ts");
    let text = std::fs::read_to_string(&node).unwrap();
    let throwing = text.replace("  run(ctx) {", "  async run(ctx) {").replace(
        "const name = ctx.inputs.name.trim();",
        "const name = ctx.inputs.name.trim();\n    if (name === \"boom\") throw new RangeError(\"no booms\");\n    \
         if (name.startsWith(\"http://\")) {\n      \
           const r = await fetch(new URL(\"/hello?from=node\", name), { headers: { \"x-asked-by\": \"greet\" } });\n      \
           return { greeting: { message: `${r.status} ${await r.text()}`, tone: ctx.inputs.tone } };\n    }",
    );
    std::fs::write(&node, throwing).unwrap();

    // `fetch` over the runtime's HTTP client, to a real server on a loopback socket.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).unwrap();
            assert!(n > 0, "the request ended early");
            request.extend_from_slice(&buf[..n]);
        }
        let body = "from the network";
        write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        String::from_utf8_lossy(&request).to_lowercase()
    });
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(["run", "runone-ts.greet"])
        .arg(&dir)
        .args(["--input", &format!(r#"{{"name": "{origin}"}}"#)])
        .env("CARGO_TARGET_DIR", repo().join("target"))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("200 from the network"), "{stdout}");
    let request = server.join().unwrap();
    assert!(request.starts_with("get /hello?from=node http/1.1"), "{request}");
    assert!(request.contains("x-asked-by: greet"), "{request}");
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(["run", "runone-ts.greet"])
        .arg(&dir)
        .args(["--input", r#"{"name": "boom"}"#])
        .env("CARGO_TARGET_DIR", repo().join("target"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("was stopped (internal_error)") && err.contains("RangeError: no booms"),
        "{err}"
    );
}

fn run_one_node(dir: &Path, name: &str) {
    let key = format!("{name}.greet");
    let run = |input: &str| {
        let out = svc_command()
            .args(["run", &key])
            .arg(dir)
            .args(["--input", input])
            .env("CARGO_TARGET_DIR", repo().join("target"))
            .output()
            .unwrap();
        outcome(out)
    };
    let (code, out, err) = run(r#"{"name": "Ada", "tone": "formal"}"#);
    assert_eq!(code, 0, "{err}");
    let outputs: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        outputs,
        serde_json::json!({"greeting": {"message": "Good day, Ada.", "tone": "formal"}})
    );
    assert!(err.contains(&format!("[{key}] greeted Ada")), "{err}");

    // Defaults fill pins that are left out.
    let (code, out, _) = run("{}");
    assert_eq!(code, 0);
    assert!(out.contains("Hello, world!"), "{out}");

    // ctx.fail: the failure on stdout, exit 1.
    let (code, out, err) = run(r#"{"name": " "}"#);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains(r#""code": "INVALID_NAME""#), "{out}");

    // Inputs that do not fit the pins: exit 2, naming the pin.
    let (code, _, err) = run(r#"{"tone": "shouty"}"#);
    assert_eq!(code, 2);
    assert!(err.contains("input `tone`: unknown variant `shouty`"), "{err}");
    let (code, _, err) = run(r#"{"nmae": "Ada"}"#);
    assert_eq!(code, 2);
    assert!(err.contains("unknown field `nmae`"), "{err}");

    // An unknown node key is refused before anything is built.
    let (code, _, err) = run("{}");
    assert_eq!(code, 0, "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(["run", &format!("{name}.gret")])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("did you mean `{key}`?")));
}

/// A newcomer's report: `svc dev` on a port another program holds printed the error, then
/// "waiting for a change", as if an edit could free the port. It stops, and says why.
#[test]
fn dev_on_a_busy_port_stops_with_the_reason() {
    let dir = init("busy-port");
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(["dev", "--port", &port])
        .arg(&dir)
        .env("CARGO_TARGET_DIR", repo().join("target"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("in use") && stderr.contains("--port"), "{stderr}");
    assert!(!stderr.contains("waiting for a change"), "{stderr}");
}

/// A newcomer's report: `svc run` with a secret missing said "secret GREETING_TOKEN is
/// not available" and no more; a node run alone reads it from the environment, as
/// `svc dev` does, and now says so.
#[test]
fn run_names_the_environment_for_a_missing_secret() {
    let dir = init("run-secret");
    let config = dir.join("svc.config.yaml");
    edit(&config, &[("secrets: []", "secrets:\n  - { name: GREETING_TOKEN }")]);
    let node = dir.join("src/nodes/greet.rs");
    edit(
        &node,
        &[(
            "let name = ctx.inputs.name.trim();",
            "let _token = ctx.secret(\"GREETING_TOKEN\")?;\n        let name = ctx.inputs.name.trim();",
        )],
    );
    let out = svc_command()
        .args(["run", "run-secret.greet"])
        .arg(&dir)
        .args(["--input", r#"{"name": "Ada"}"#])
        .env("CARGO_TARGET_DIR", repo().join("target"))
        .env_remove("GREETING_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_contains(
        &stderr,
        &[
            "secret `GREETING_TOKEN` is not available",
            "environment variable of the same name",
        ],
    );
}
