//! The server a test run talks to: the project's own binary, on a free loopback port,
//! with a fresh store in a temporary directory holding the fixtures of one test file.
//! API keys exist only in that store (as hashes) and in this process's memory.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use svc_frontend::testfile::TestFile;
use svc_runtime::apikey::{KeyRecord, unix_now};
use svc_runtime::store::{SqliteStore, WorkspaceStore};

/// A running server; stopped (killed and reaped) when dropped, its store removed.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    dir: PathBuf,
    /// Key fixture name → the key itself.
    pub keys: BTreeMap<String, String>,
    /// What token fixtures are signed with, when the file has any: the server verifies
    /// every Check JWT with its public key instead of the route's own keys.
    pub token_signer: Option<svc_runtime::jwt::TestSigner>,
    /// The file's token fixtures.
    pub tokens: Vec<svc_frontend::testfile::TokenFixture>,
    /// The file's secrets: name → value (what `signed: true` signs with).
    pub secrets: BTreeMap<String, String>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

/// How the server runs.
pub enum Mode {
    /// `serve --test-mode`: traces in every response, the limiters' clock under the
    /// test's control (`svc test`).
    Test,
    /// `serve` as in production, for a profile-guided build's training run: its
    /// instrumented binary writes its profile to `profile_file` (a pattern of LLVM's
    /// `LLVM_PROFILE_FILE`) when it exits.
    Training { profile_file: PathBuf },
}

impl Server {
    /// Starts `binary` with the fixtures of `tests`, for `svc test`.
    pub fn start(binary: &Path, tests: &TestFile) -> Result<Server, String> {
        Server::start_as(binary, tests, &Mode::Test)
    }

    /// Starts `binary` with the fixtures of `tests`, in `mode`.
    pub fn start_as(binary: &Path, tests: &TestFile, mode: &Mode) -> Result<Server, String> {
        let dir = scratch_dir()?;
        let store_path = dir.join("workspace.db");
        let store = SqliteStore::open(&store_path).map_err(|e| format!("cannot create the test store: {e}"))?;
        let sealing = svc_runtime::seal::create_key_file(&dir.join(svc_runtime::seal::DEFAULT_KEY_FILE))
            .map_err(|e| format!("cannot create the test store's secrets key: {e}"))?;
        let mut keys = BTreeMap::new();
        for fixture in &tests.keys {
            let (key, record) = KeyRecord::issue(&fixture.name.value, &fixture.owner, unix_now(), None);
            store
                .insert_key(&record)
                .map_err(|e| format!("cannot store the key fixture `{}`: {e}", fixture.name.value))?;
            keys.insert(fixture.name.value.clone(), key);
        }
        for (name, value) in &tests.secrets {
            store
                .set_secret(&name.value, &sealing.seal(&name.value, value), unix_now())
                .map_err(|e| format!("cannot store the secret `{}`: {e}", name.value))?;
        }
        drop(store);
        let token_signer = (!tests.tokens.is_empty()).then(svc_runtime::jwt::TestSigner::new);
        let mut command = Command::new(binary);
        command.args(["serve", "--port", "0"]);
        match mode {
            Mode::Test => {
                command.arg("--test-mode");
                if let Some(signer) = &token_signer {
                    command.env("SVC_TEST_JWKS", signer.jwks());
                }
            }
            Mode::Training { profile_file } => {
                command.env("LLVM_PROFILE_FILE", profile_file);
            }
        }
        // Each case is its own client, by `x-forwarded-for` (case.rs).
        let mut child = command
            .args(["--trusted-proxies", "127.0.0.1,::1", "--store"])
            .arg(&store_path)
            .env("SVC_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", binary.display()))?;
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let stderr_reader = child.stderr.take().map(|pipe| {
            let sink = stderr.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let mut text = sink.lock().unwrap_or_else(|e| e.into_inner());
                    text.push_str(&line);
                    text.push('\n');
                }
            })
        });
        let base = listening_url(&mut child, Duration::from_secs(30));
        let mut server = Server {
            child,
            base: String::new(),
            dir,
            keys,
            token_signer,
            tokens: tests.tokens.clone(),
            secrets: tests.secrets.iter().map(|(n, v)| (n.value.clone(), v.clone())).collect(),
            stderr,
        };
        match base {
            Some(base) => {
                server.base = base;
                Ok(server)
            }
            None => {
                // A server that exits closes stdout at once, possibly before the reader
                // above has taken its last words from stderr: stop it, then wait for the
                // reader to see the end of the pipe, so that the reason is never lost.
                let _ = server.child.kill();
                let _ = server.child.wait();
                if let Some(reader) = stderr_reader {
                    let _ = reader.join();
                }
                Err(format!("the server did not start:\n{}", server.stderr_text()))
            }
        }
    }

    /// Stops the server as an operator would (SIGTERM), so that it exits normally: an
    /// instrumented binary writes its profile on exit, which a kill would lose. Kills it
    /// after 10 s.
    pub fn stop(mut self) -> Result<(), String> {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => return Err(format!("the server exited with {status}:\n{}", self.stderr_text())),
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        Err("the server did not stop within 10 s of SIGTERM".into())
    }

    /// What the server wrote on stderr so far (its warnings and errors).
    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn scratch_dir() -> Result<PathBuf, String> {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("svc-test-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    Ok(dir)
}

/// The `http://…` a started server prints on stdout (`listening on …`), read from its
/// piped stdout, or `None` if it says nothing `within`.
pub fn listening_url(child: &mut Child, within: Duration) -> Option<String> {
    let stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("listening on ") {
                let _ = tx.send(url.to_string());
            }
        }
    });
    rx.recv_timeout(within).ok()
}
