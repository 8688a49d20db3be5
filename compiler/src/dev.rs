//! `svc dev`: build, serve, watch, and rebuild on every change.
//!
//! The loop: check → emit → build (debug) → restart the server. It watches the config,
//! the flows and the node crate (`Cargo.toml`, `src/`) by polling their modification
//! times (portable, no inotify limits, and cheap for a project's few hundred files). When
//! a change does not check or does not build, the diagnostics are printed and the last
//! good server keeps serving; a change that builds replaces it (SIGTERM: in-flight
//! requests finish first).
//!
//! The server runs with `--dev`: secrets from environment variables, `ctx.env` mirroring
//! the process environment, and one trace line per request followed by each node's logs.
//! It reads its stdin and exits when stdin closes, so it never outlives `svc dev`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime};

/// How `svc dev` serves.
pub struct DevOptions {
    pub addr: String,
    pub port: u16,
    pub store: PathBuf,
    /// Stop after the first build (for scripts): 0 when it built.
    pub once: bool,
    /// The Builder to open beside the server, if any.
    pub builder: Option<crate::builder::Options>,
}

/// What is watched: every file under these, with its modification time and size.
type Fingerprint = Vec<(PathBuf, Option<SystemTime>, u64)>;

const POLL: Duration = Duration::from_millis(300);
/// Editors write a file in several steps; wait until the tree is quiet this long.
const SETTLE: Duration = Duration::from_millis(200);

pub fn fingerprint(dir: &Path) -> Fingerprint {
    let mut out = Vec::new();
    for top in ["svc.config.yaml", "svc.config.ts", "Cargo.toml", "flows", "src"] {
        collect(&dir.join(top), &mut out);
    }
    // TypeScript modules may import from anywhere in the project, and the config may put
    // the nodes elsewhere (`nodes`): every other `.ts` file is watched too.
    typescript_elsewhere(dir, dir, &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The `.ts` files of the project outside what `fingerprint` already watches, and outside
/// what is not the user's (dependencies, build output, hidden directories).
fn typescript_elsewhere(root: &Path, dir: &Path, out: &mut Fingerprint) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        let path = e.path();
        if path.is_dir() {
            // `src` and `flows` are watched whole above; dependencies anywhere are not ours.
            let skipped =
                name == "node_modules" || dir == root && ["src", "flows", "target", "dist"].contains(&name.as_ref());
            if !skipped {
                typescript_elsewhere(root, &path, out);
            }
        } else if (name.ends_with(".ts") || name.ends_with(".mts")) && !(dir == root && name == "svc.config.ts") {
            collect(&path, out);
        }
    }
}

/// The files that differ between two fingerprints (added, removed or changed).
fn changed<'a>(before: &'a Fingerprint, after: &'a Fingerprint) -> Vec<&'a Path> {
    let mut out: Vec<&Path> = after
        .iter()
        .filter(|entry| !before.contains(entry))
        .chain(before.iter().filter(|entry| !after.iter().any(|a| a.0 == entry.0)))
        .map(|entry| entry.0.as_path())
        .collect();
    out.sort();
    out.dedup();
    out
}

fn collect(path: &Path, out: &mut Fingerprint) {
    let Ok(meta) = std::fs::metadata(path) else { return };
    if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        for e in entries.flatten() {
            let name = e.file_name();
            // Editor swap and backup files change constantly and mean nothing.
            let name = name.to_string_lossy();
            // The Builder's positions (`flows/<route>.layout.json`) change no server.
            if name.starts_with('.') || name.ends_with('~') || name.ends_with(".swp") || name.ends_with(".layout.json")
            {
                continue;
            }
            collect(&e.path(), out);
        }
    } else {
        out.push((path.to_path_buf(), meta.modified().ok(), meta.len()));
    }
}

struct Server {
    child: Child,
    binary: PathBuf,
}

impl Server {
    fn stop(mut self) {
        // SIGTERM lets in-flight requests finish; closing stdin is the fallback signal.
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        drop(self.child.stdin.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Checks, emits and builds; `Some(binary)` when all three succeeded.
///
/// When only TypeScript node code changed (`typescript_only`) and emitting rewrote only
/// the bytecode bundle and its JavaScript, the Rust crate is not rebuilt: the dev server
/// loads the bundle from disk ([`BUNDLE_ENV`]), and the next Rust build embeds it.
fn build(dir: &Path, typescript_only: bool) -> Option<PathBuf> {
    let crate_dir = crate::pipeline::default_out(dir);
    // TypeScript nodes all run in the engine here, so that a TypeScript change reloads the
    // bundle and does not rebuild the Rust.
    let report = match crate::pipeline::emit_project_as(dir, &crate_dir, true, false) {
        Ok(Some(report)) => report,
        Ok(None) => return None,
        Err(e) => {
            eprintln!("error: {e}");
            return None;
        }
    };
    let project = report.project;
    let binary = dir.join(".svc").join("bin").join(&project);
    let scripts_only =
        report.removed.is_empty() && report.written.iter().all(|p| p.starts_with(crate::emit::SCRIPTS_DIR));
    if typescript_only && scripts_only && binary.is_file() {
        eprintln!("   TypeScript only: the server loads the new bytecode, no Rust rebuild");
        return Some(binary);
    }
    let opts = crate::build::BuildOptions {
        flags: None,
        release: false,
        output: Some(binary),
        quiet: false,
    };
    match crate::build::cargo_build(dir, &crate_dir, &project, &opts) {
        Ok(built) => {
            eprintln!("   Built `{project}` in {:.1}s", built.seconds);
            Some(built.binary)
        }
        Err(e) => {
            eprintln!("error: {e}");
            None
        }
    }
}

/// The environment variable through which a dev server (`serve --dev` only) runs its
/// TypeScript nodes from the bundle on disk rather than the one it embeds.
const BUNDLE_ENV: &str = svc_script::engine::DEV_BUNDLE_ENV;

fn start(
    dir: &Path,
    binary: &Path,
    opts: &DevOptions,
    builder: Option<&crate::builder::Running>,
) -> Result<Server, String> {
    let bundle = crate::emit::absolute(&crate::pipeline::default_out(dir))
        .join(crate::emit::SCRIPTS_DIR)
        .join(crate::emit::BUNDLE_FILE);
    let child = Command::new(binary)
        .arg("serve")
        .arg("--dev")
        .arg("--addr")
        .arg(&opts.addr)
        .arg("--port")
        .arg(opts.port.to_string())
        .arg("--store")
        .arg(&opts.store)
        .env("SVC_EXIT_ON_STDIN_EOF", "1")
        .env(BUNDLE_ENV, bundle)
        // Each request's trace goes to the Builder as well as to the terminal.
        .envs(builder.into_iter().flat_map(|b| {
            [
                (svc_runtime::dev_traces::URL_ENV, b.traces_url.clone()),
                (svc_runtime::dev_traces::TOKEN_ENV, b.token.clone()),
            ]
        }))
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", binary.display()))?;
    Ok(Server {
        child,
        binary: binary.to_path_buf(),
    })
}

/// Whether the dev server will be able to listen on `addr:port` (port 0 always can).
fn port_is_free(addr: &str, port: u16) -> Result<(), String> {
    if port == 0 {
        return Ok(());
    }
    match std::net::TcpListener::bind((addr, port)) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(format!(
            "{addr}:{port} is in use by another program (another `svc dev`?); stop it, or choose another port with `--port`"
        )),
        Err(e) => Err(format!("cannot listen on {addr}:{port}: {e}")),
    }
}

/// Runs the development loop until interrupted.
pub fn run(dir: &Path, mut opts: DevOptions) -> i32 {
    // A port another program holds stays held whatever the project's files say: say so
    // and stop, rather than wait for a change that cannot help.
    if let Err(e) = port_is_free(&opts.addr, opts.port) {
        eprintln!("error: {e}");
        return 1;
    }
    // The Builder first: it reads the project even while the first build runs or fails.
    let builder = match opts.builder.take().map(crate::builder::start) {
        Some(Ok(running)) => Some(running),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return 1;
        }
        None => None,
    };
    if let Some(running) = &builder {
        if let Some(warning) = crate::builder::exposure_warning(&opts.addr) {
            eprintln!("{warning}");
        }
        eprintln!("   Builder: {}", running.url);
    }
    let mut server: Option<Server> = None;
    let mut seen = fingerprint(dir);
    let rebuild = |server: &mut Option<Server>, typescript_only: bool| -> bool {
        let Some(binary) = build(dir, typescript_only) else {
            if server.is_some() {
                eprintln!("   The last good server keeps running; fix the problems above and save again.");
            } else {
                eprintln!("   Waiting for a change to build again.");
            }
            return false;
        };
        if let Some(old) = server.take() {
            old.stop();
        }
        match start(dir, &binary, &opts, builder.as_ref()) {
            Ok(s) => {
                *server = Some(s);
                true
            }
            Err(e) => {
                eprintln!("error: {e}");
                false
            }
        }
    };
    let ok = rebuild(&mut server, false);
    if opts.once {
        if let Some(s) = server.take() {
            s.stop();
        }
        return if ok { 0 } else { 1 };
    }
    // Say where API keys are read from: `svc keys` defaults to ./.svc/workspace.db, which
    // is this store only when svc dev runs in the project directory.
    let store_flag = if opts.store == Path::new(".").join(".svc").join("workspace.db") {
        String::new()
    } else {
        format!(" --store {}", opts.store.display())
    };
    eprintln!(
        "   API keys: {} (create one with `svc keys create{store_flag} --name dev --owner you`)",
        opts.store.display()
    );
    eprintln!("   Watching the config, flows/ and the nodes for changes (Ctrl-C to stop)");
    loop {
        std::thread::sleep(POLL);
        if let Some(s) = &mut server
            && let Ok(Some(status)) = s.child.try_wait()
        {
            eprintln!(
                "   The server `{}` exited ({status}); waiting for a change.",
                s.binary.display()
            );
            server = None;
        }
        let mut now = fingerprint(dir);
        if now == seen {
            continue;
        }
        // Let the editor finish writing.
        loop {
            std::thread::sleep(SETTLE);
            let again = fingerprint(dir);
            if again == now {
                break;
            }
            now = again;
        }
        let typescript_only = changed(&seen, &now)
            .iter()
            .all(|p| p.extension().is_some_and(|e| e == "ts" || e == "mts"));
        seen = now;
        eprintln!("\n   Change detected: checking and rebuilding");
        rebuild(&mut server, typescript_only);
    }
}
