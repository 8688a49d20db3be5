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
//! It reads its stdin and exits when stdin closes, so it never outlives `svc dev`. It
//! listens on a socket svc dev holds ([`socket`]), so that requests wait for a restart
//! rather than being refused.

mod socket;

use socket::DevSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

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

/// How often the tree is read for changes: a stat of each watched file, well under a
/// millisecond for a project of tens of files, and a tenth of the 1 s a flow change may
/// take to be served (docs/performance.md, "Edit to served").
const POLL: Duration = Duration::from_millis(100);
/// Editors write a file in several steps (and `git checkout` several files); wait until
/// the tree is quiet this long.
const SETTLE: Duration = Duration::from_millis(50);

/// The changed files as the Builder says them: `flows/greeting.yaml changed`, or the
/// first and how many more.
fn what_changed(paths: &[&Path], dir: &Path) -> String {
    let shown = |p: &Path| p.strip_prefix(dir).unwrap_or(p).display().to_string();
    match paths {
        [] => "a change".into(),
        [one] => format!("{} changed", shown(one)),
        [first, rest @ ..] => format!("{} and {} more changed", shown(first), rest.len()),
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

/// What changed since the last build, as far as rebuilding goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// Anything else: the first build, the config, a manifest, a build script.
    Any,
    /// TypeScript modules only.
    TypeScript,
    /// Flow files only.
    Flows,
    /// Rust sources of the node crate only (`src/**/*.rs`, in a crate without a build
    /// script, whose outputs rustc could not know about).
    NodeCode,
}

impl Change {
    fn of(paths: &[&Path], dir: &Path) -> Change {
        let has_extension = |p: &Path, exts: &[&str]| p.extension().is_some_and(|e| exts.iter().any(|x| e == *x));
        if paths.iter().all(|p| has_extension(p, &["ts", "mts"])) {
            Change::TypeScript
        } else if paths.iter().all(|p| p.starts_with(dir.join("flows"))) {
            Change::Flows
        } else if paths
            .iter()
            .all(|p| p.starts_with(dir.join("src")) && has_extension(p, &["rs"]))
            && !dir.join("build.rs").exists()
        {
            Change::NodeCode
        } else {
            Change::Any
        }
    }

    /// The compiles that make the new server without cargo, when there are any.
    fn replayed(self) -> &'static [crate::relink::Compile] {
        use crate::relink::Compile;
        match self {
            Change::Flows => &[Compile::Server],
            Change::NodeCode => &[Compile::Nodes, Compile::Server],
            Change::Any | Change::TypeScript => &[],
        }
    }
}

/// Checks, emits and builds; `Some(binary)` when all three succeeded.
///
/// When only TypeScript node code changed and emitting rewrote only the bytecode bundle
/// and its JavaScript, the Rust crate is not rebuilt: the dev server loads the bundle from
/// disk ([`BUNDLE_ENV`]), and the next Rust build embeds it. When only flows or the node
/// crate's Rust sources changed and emitting rewrote only the crate's sources, rustc runs
/// as cargo last ran it, without cargo ([`crate::relink`]); cargo builds when that fails.
fn build(dir: &Path, change: Change) -> Result<(PathBuf, String), &'static str> {
    const ERRORS: &str = "the project has errors";
    const FAILED: &str = "the build failed";
    let flavour = crate::pipeline::Flavour::Dev;
    let crate_dir = crate::pipeline::out_dir(dir, flavour);
    // A panic in svc's own checking is a bug, but it must not end the loop, its Builder
    // and the server that runs: it is reported (the panic hook printed where), and the
    // last good server keeps serving.
    let emitted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        #[cfg(debug_assertions)]
        panic_for_tests(dir);
        crate::pipeline::emit_project_as(dir, &crate_dir, true, flavour)
    }));
    let report = match emitted {
        Ok(Ok(Some(report))) => report,
        Ok(Ok(None)) => return Err(ERRORS),
        Ok(Err(e)) => {
            eprintln!("error: {e}");
            return Err(FAILED);
        }
        Err(_) => {
            eprintln!(
                "error: svc failed while checking the project (a bug in svc: the panic above says where; please report it with the file you saved). The last good server keeps running."
            );
            return Err(FAILED);
        }
    };
    let (project, bin) = (report.project, report.bin);
    let binary = dir.join(".svc").join("bin").join(&bin);
    let only = |prefix: &str| {
        report
            .removed
            .iter()
            .chain(&report.written)
            .all(|p| p.starts_with(prefix))
    };
    if change == Change::TypeScript && report.removed.is_empty() && only(crate::emit::SCRIPTS_DIR) && binary.is_file() {
        eprintln!("   TypeScript only: the server loads the new bytecode, no Rust rebuild");
        return Ok((binary, "new TypeScript bytecode, no Rust build".into()));
    }
    let replayed = change.replayed();
    if !replayed.is_empty() && only("src") && binary.is_file() {
        let started = std::time::Instant::now();
        let records = crate::relink::records_dir(&crate_dir);
        if let Some(built) = crate::relink::replay(&records, replayed) {
            match crate::build::install(&built, &binary) {
                Ok(()) => {
                    let seconds = started.elapsed().as_secs_f64();
                    eprintln!("   Built `{project}` in {seconds:.1}s (rustc only)");
                    return Ok((binary, format!("built in {seconds:.1}s (rustc only)")));
                }
                Err(e) => eprintln!("error: {e}"),
            }
        }
    }
    let opts = crate::build::BuildOptions {
        runtime: flavour.runtime(),
        flags: None,
        release: false,
        output: Some(binary),
        quiet: false,
    };
    match crate::build::cargo_build(dir, &crate_dir, &bin, &opts) {
        Ok(built) => {
            eprintln!("   Built `{project}` in {:.1}s", built.seconds);
            Ok((built.binary, format!("built in {:.1}s", built.seconds)))
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(FAILED)
        }
    }
}

/// Debug builds only, for svc's own tests of the loop's survival: panics as a bug in the
/// checker would when a flow file holds the text `SVC_DEBUG_PANIC_ON_FLOW_TEXT` names.
#[cfg(debug_assertions)]
fn panic_for_tests(dir: &Path) {
    let Some(marker) = std::env::var_os("SVC_DEBUG_PANIC_ON_FLOW_TEXT") else { return };
    let marker = marker.to_string_lossy();
    let flows = std::fs::read_dir(dir.join("flows")).into_iter().flatten().flatten();
    if flows.filter_map(|e| std::fs::read_to_string(e.path()).ok()).any(|t| t.contains(&*marker)) {
        panic!("a panic asked for by SVC_DEBUG_PANIC_ON_FLOW_TEXT");
    }
}

/// The environment variable through which a dev server (`serve --dev` only) runs its
/// TypeScript nodes from the bundle on disk rather than the one it embeds.
const BUNDLE_ENV: &str = svc_script::engine::DEV_BUNDLE_ENV;

fn start(
    dir: &Path,
    binary: &Path,
    opts: &DevOptions,
    socket: &DevSocket,
    builder: Option<&crate::builder::Running>,
) -> Result<Server, String> {
    let bundle = crate::emit::absolute(&crate::pipeline::out_dir(dir, crate::pipeline::Flavour::Dev))
        .join(crate::emit::SCRIPTS_DIR)
        .join(crate::emit::BUNDLE_FILE);
    let mut command = Command::new(binary);
    socket.hand_to(&mut command);
    let child = command
        .arg("serve")
        .arg("--dev")
        .arg("--store")
        .arg(&opts.store)
        .env("SVC_EXIT_ON_STDIN_EOF", "1")
        .env(BUNDLE_ENV, bundle)
        // Each request's trace goes to the Builder as well as to the terminal.
        .envs(builder.into_iter().flat_map(|b| {
            [
                (svc_runtime::dev_traces::URL_ENV, b.traces_url.clone()),
                (svc_runtime::dev_traces::TOKEN_ENV, b.traces_token.clone()),
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

/// Runs the development loop until interrupted.
pub fn run(dir: &Path, mut opts: DevOptions) -> i32 {
    // A port another program holds stays held whatever the project's files say: say so
    // and stop, rather than wait for a change that cannot help.
    let socket = match DevSocket::bind(&opts.addr, opts.port) {
        Ok(socket) => socket,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    // The Builder first: it reads the project even while the first build runs or fails,
    // and shows what the loop does.
    let status = crate::builder::dev_status::Reporter::default();
    let builder_options = opts.builder.take().map(|b| crate::builder::Options {
        dev_status: Some(status.clone()),
        ..b
    });
    let builder = match builder_options.map(crate::builder::start) {
        Some(Ok(running)) => Some(running),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return 1;
        }
        None => None,
    };
    if let Some(running) = &builder {
        if let Some(warning) = &running.exposure_warning {
            eprintln!("{warning}");
        }
        eprintln!("   Builder: {}", running.url);
    }
    let mut server: Option<Server> = None;
    let mut seen = crate::watch::fingerprint(dir);
    let rebuild = |server: &mut Option<Server>, change: Change| -> bool {
        let (binary, how) = match build(dir, change) {
            Ok(built) => built,
            Err(why) => {
                if server.is_some() {
                    eprintln!("   The last good server keeps running; fix the problems above and save again.");
                } else {
                    eprintln!("   Waiting for a change to build again.");
                    socket.down(format!("{why}; fix the problems `svc dev` printed and save again"));
                }
                status.failed(why, server.is_some());
                return false;
            }
        };
        // Requests sent from here on wait for the new server.
        socket.up();
        if let Some(old) = server.take() {
            old.stop();
        }
        match start(dir, &binary, &opts, &socket, builder.as_ref()) {
            Ok(s) => {
                *server = Some(s);
                status.serving(&how);
                true
            }
            Err(e) => {
                eprintln!("error: {e}");
                socket.down("the server did not start");
                status.failed("the server did not start", false);
                false
            }
        }
    };
    let ok = rebuild(&mut server, Change::Any);
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
            socket.down(format!("the server exited ({status}); save a change to start it again"));
            server = None;
        }
        let mut now = crate::watch::fingerprint(dir);
        if now == seen {
            continue;
        }
        // Let the editor finish writing.
        loop {
            std::thread::sleep(SETTLE);
            let again = crate::watch::fingerprint(dir);
            if again == now {
                break;
            }
            now = again;
        }
        let paths = crate::watch::changed(&seen, &now);
        let change = Change::of(&paths, dir);
        status.building(&what_changed(&paths, dir));
        seen = now;
        eprintln!("\n   Change detected: checking and rebuilding");
        rebuild(&mut server, change);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(paths: &[&str]) -> Change {
        let dir = Path::new("/p");
        let paths: Vec<PathBuf> = paths.iter().map(|p| dir.join(p)).collect();
        Change::of(&paths.iter().map(PathBuf::as_path).collect::<Vec<_>>(), dir)
    }

    #[test]
    fn a_change_is_replayed_only_when_it_touches_flows_or_node_sources() {
        assert_eq!(change(&["flows/a.yaml", "flows/b.yaml"]), Change::Flows);
        assert_eq!(change(&["src/nodes/greet.rs"]), Change::NodeCode);
        assert_eq!(change(&["src/nodes/greet.ts", "lib/x.mts"]), Change::TypeScript);
        // The config reaches the node crate (`include_assets!`), a manifest its
        // dependencies: cargo decides.
        assert_eq!(change(&["flows/a.yaml", "svc.config.yaml"]), Change::Any);
        assert_eq!(change(&["src/nodes/greet.rs", "Cargo.toml"]), Change::Any);
        assert_eq!(change(&["src/data.json"]), Change::Any);
        assert_eq!(Change::Any.replayed(), &[] as &[crate::relink::Compile]);
    }
}
