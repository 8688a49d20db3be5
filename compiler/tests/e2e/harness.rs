//! Building example servers and running them on free loopback ports.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use svc_runtime::apikey::{KeyRecord, unix_now};
use svc_runtime::seal::SecretsKey;
use svc_runtime::store::{SqliteStore, WorkspaceStore};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Builds `examples/<example>` with `svc build` once per test run and returns its binary.
/// The generated crate is the one `snapshots/<example>` pins (`tests/snapshots.rs` proves
/// them equal), built as a user builds it: a member of the example's `.svc/` workspace,
/// in the shared `target/`.
pub fn binary(example: &str) -> PathBuf {
    project_binary(example, &repo().join("examples").join(example))
}

/// Builds the project at `dir` with `svc build` once per test run, as `example`.
pub fn project_binary(example: &str, dir: &Path) -> PathBuf {
    static BUILT: OnceLock<Mutex<BTreeMap<String, PathBuf>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| Mutex::new(BTreeMap::new()));
    let mut built = built.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(b) = built.get(example) {
        return b.clone();
    }
    let target = repo().join("target");
    let bin = target.join("e2e-bin").join(example);
    svc_testkit::run_ok(
        Command::new(env!("CARGO_BIN_EXE_svc"))
            .arg("build")
            .arg(dir)
            .arg("-o")
            .arg(&bin)
            .env("CARGO_TARGET_DIR", &target)
            .env("NO_COLOR", "1"),
    );
    built.insert(example.to_string(), bin.clone());
    bin
}

/// A running example server; killed when dropped.
pub struct Server {
    child: Child,
    pub base: String,
    dir: PathBuf,
    reading_stderr: Arc<AtomicBool>,
}

impl Server {
    /// Leaves the server's stderr unread from its next line on, the pipe open: as a
    /// stalled log shipper leaves it.
    pub fn stop_reading_stderr(&self) {
        self.reading_stderr.store(false, Ordering::Relaxed);
    }

    /// The server's workspace store, for `svc keys --store` while it runs.
    pub fn store_path(&self) -> PathBuf {
        self.dir.join("workspace.db")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a test puts in the store before the server starts.
pub struct Setup<'a> {
    pub store: &'a SqliteStore,
    /// The secrets key, in the default key file beside the store (the server finds it).
    pub secrets_key: SecretsKey,
}

impl Setup<'_> {
    /// Creates an API key and returns it.
    pub fn key(&self, name: &str, owner: &str) -> String {
        let (key, record) = KeyRecord::issue(name, owner, unix_now(), None);
        self.store.insert_key(&record).unwrap();
        key
    }

    pub fn secret(&self, name: &str, value: &str) {
        self.store
            .set_secret(name, &self.secrets_key.seal(name, value), unix_now())
            .unwrap();
    }
}

fn scratch(example: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("svc-e2e-{example}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A new secrets key in `dir/secrets.key`, where a server finds it for `dir/workspace.db`.
fn default_key(dir: &Path) -> SecretsKey {
    svc_runtime::seal::create_key_file(&dir.join(svc_runtime::seal::DEFAULT_KEY_FILE)).unwrap()
}

/// Starts `example` with a fresh store prepared by `setup`.
pub fn start<T>(example: &str, extra_args: &[&str], setup: impl FnOnce(&Setup) -> T) -> (Server, T) {
    start_binary(example, &binary(example), extra_args, &[], setup)
}

/// Starts the server `bin` (named `example`) with `env` and a fresh store prepared by
/// `setup`.
pub fn start_binary<T>(
    example: &str,
    bin: &Path,
    extra_args: &[&str],
    env: &[(&str, &str)],
    setup: impl FnOnce(&Setup) -> T,
) -> (Server, T) {
    let dir = scratch(example);
    let store_path = dir.join("workspace.db");
    let value = {
        let store = SqliteStore::open(&store_path).unwrap();
        setup(&Setup {
            store: &store,
            secrets_key: default_key(&dir),
        })
    };
    let mut child = Command::new(bin)
        .args(["serve", "--port", "0", "--store"])
        .arg(&store_path)
        .args(extra_args)
        .env("SVC_LOG", "warn")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the server");
    let base = match listening_url(&mut child, Duration::from_secs(20)) {
        Some(url) => url,
        None => {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("`{example}` did not start: {}", String::from_utf8_lossy(&out.stderr));
        }
    };
    // Read what the server logs (from a copy of the pipe, which the child keeps open), so
    // that a long test never fills the pipe, until the test says to stop.
    let reading = Arc::new(AtomicBool::new(true));
    if let Some(pipe) = child.stderr.as_ref().and_then(|e| e.as_fd().try_clone_to_owned().ok()) {
        let reading = reading.clone();
        std::thread::spawn(move || {
            let (mut pipe, mut chunk) = (std::fs::File::from(pipe), [0u8; 8192]);
            while reading.load(Ordering::Relaxed) && pipe.read(&mut chunk).is_ok_and(|n| n > 0) {}
        });
    }
    (
        Server {
            child,
            base,
            dir,
            reading_stderr: reading,
        },
        value,
    )
}

pub use svc_compiler::flow_tests::server::listening_url;

/// Runs the server binary to completion (for start-up failures).
pub fn run_to_exit(example: &str, setup: impl FnOnce(&Setup)) -> (i32, String) {
    run_to_exit_with(example, &[], setup)
}

/// [`run_to_exit`] with `env` set for the server.
pub fn run_to_exit_with(example: &str, env: &[(&str, &str)], setup: impl FnOnce(&Setup)) -> (i32, String) {
    let bin = binary(example);
    let dir = scratch(example);
    let store_path = dir.join("workspace.db");
    setup(&Setup {
        store: &SqliteStore::open(&store_path).unwrap(),
        secrets_key: default_key(&dir),
    });
    let started = Instant::now();
    let out = Command::new(&bin)
        .args(["serve", "--port", "0", "--store"])
        .arg(&store_path)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Asks the server to stop, as a supervisor does (SIGTERM by PID).
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM");
    }

    /// The server's exit status, if it exits `within`.
    pub fn wait_for_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let until = std::time::Instant::now() + within;
        while std::time::Instant::now() < until {
            if let Some(status) = self.child.try_wait().expect("wait for the server") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// Sends `request` and reads the answer's JSON body (check the status first where it
/// matters).
pub async fn json_of(request: reqwest::RequestBuilder) -> serde_json::Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// Sends `request`; the answer's status and JSON body.
pub async fn answer_of(request: reqwest::RequestBuilder) -> (u16, serde_json::Value) {
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap())
}

/// Sends `request`; the status and JSON error of the answer, as [`error`] reads them.
pub async fn error_of(request: reqwest::RequestBuilder) -> (u16, serde_json::Value) {
    error(request.send().await.unwrap()).await
}

/// The JSON error of a response, checked for the one error shape.
pub async fn error(r: reqwest::Response) -> (u16, serde_json::Value) {
    let status = r.status().as_u16();
    assert_eq!(r.headers()["content-type"], "application/json");
    let id = r.headers()["x-request-id"].to_str().unwrap().to_string();
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["status"], status, "{body}");
    assert_eq!(body["error"]["request_id"], id, "{body}");
    (status, body)
}
