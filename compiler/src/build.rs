//! `svc build`: emit the crate, run cargo, and copy out one binary.
//!
//! cargo runs with `--message-format=json` (rendered with colours on a terminal); its stream is read with
//! cargo_metadata to show progress (a bar on a terminal, plain lines otherwise) and to
//! print rustc's diagnostics with paths in the user's node crate shown relative to the
//! project. The target directory (shared by every project, see [`target_dir`]) persists
//! between builds, so changing one flow recompiles one small crate.

use crate::Error;
use cargo_metadata::Message;
use std::io::{BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

pub struct BuildOptions {
    /// How the emitted crate links svc's crates ([`crate::pipeline::Flavour::runtime`]):
    /// a shared runtime is linked with a run path to the library.
    pub runtime: crate::emit::RuntimeLinking,
    pub release: bool,
    pub output: Option<PathBuf>,
    pub quiet: bool,
    /// rustc flags of svc's own for the server's crates (a profile-guided build's stages,
    /// [`crate::pgo`]), built in a target directory of their own.
    pub flags: Option<ExtraFlags>,
}

/// rustc flags added to the user's own, for the crates of the server only: the build runs
/// with `--target` set to the host, so that build scripts and procedural macros are
/// compiled without them (and, instrumented, would write profiles of the build itself).
pub struct ExtraFlags {
    pub rustflags: Vec<String>,
    /// The host's target triple ([`Toolchain::host`]), passed as `--target`.
    pub target: String,
    /// Where this build's artefacts go: flags differ from a plain build's, so the two would
    /// otherwise replace each other's artefacts on every switch.
    pub target_dir: PathBuf,
}

/// The host's target triple and rustc's sysroot, from the rustc cargo builds with.
pub struct Toolchain {
    pub host: String,
    pub sysroot: PathBuf,
}

impl Toolchain {
    pub fn find() -> Result<Toolchain, Error> {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        let run = |args: &[&str]| -> Result<String, Error> {
            let out = Command::new(&rustc)
                .args(args)
                .output()
                .map_err(|e| Error::io("run", &rustc, e))?;
            if !out.status.success() {
                return Err(Error::Tool {
                    command: format!("{rustc} {}", args.join(" ")),
                    problem: format!("failed: {}", String::from_utf8_lossy(&out.stderr).trim()),
                });
            }
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let version = run(&["-vV"])?;
        let host = version
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .ok_or_else(|| Error::Tool {
                command: format!("{rustc} -vV"),
                problem: "names no host".into(),
            })?
            .trim()
            .to_string();
        let sysroot = PathBuf::from(run(&["--print", "sysroot"])?.trim());
        Ok(Toolchain { host, sysroot })
    }
}

/// `CARGO_ENCODED_RUSTFLAGS` for a build that adds `extra` to the user's flags, read from
/// the variables cargo reads first (`CARGO_ENCODED_RUSTFLAGS`, then `RUSTFLAGS`). Flags in
/// cargo's configuration files are not read when either variable is set, as cargo
/// documents; docs/cli.md says so for `--pgo`.
fn encoded_rustflags(extra: &[String]) -> String {
    let var = |name| std::env::var(name).ok();
    compose_rustflags(var("CARGO_ENCODED_RUSTFLAGS"), var("RUSTFLAGS"), extra)
}

fn compose_rustflags(encoded: Option<String>, plain: Option<String>, extra: &[String]) -> String {
    let mut flags: Vec<String> = match encoded {
        // Set and empty: no flags, and RUSTFLAGS is not read (cargo's reading).
        Some(encoded) if encoded.is_empty() => Vec::new(),
        Some(encoded) => encoded.split('\x1f').map(str::to_string).collect(),
        None => plain
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    };
    flags.extend(extra.iter().cloned());
    flags.join("\x1f")
}

pub struct Built {
    pub binary: PathBuf,
    pub seconds: f64,
    /// Compilation units cargo compiled (not fresh) in this build.
    pub compiled: usize,
    /// Compilation units in the build.
    pub units: usize,
}

/// The git commit of the project, with `-dirty` when it has uncommitted changes.
pub fn git_sha(dir: &Path) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--short=12", "HEAD"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let sha = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dirty = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["status", "--porcelain", "--untracked-files=no", "--", "."])
        .stderr(Stdio::null())
        .output()
        .ok()
        .is_some_and(|o| !o.stdout.is_empty());
    Some(if dirty { format!("{sha}-dirty") } else { sha })
}

/// The target directory builds of every project share, so that the dependencies of
/// generated servers (tokio, axum, hyper, rustls, rusqlite, the svc runtime, …) compile
/// once per machine rather than once per project:
///
/// 1. `CARGO_TARGET_DIR`, when set (`CARGO_TARGET_DIR=.svc/target` keeps a project's
///    build to itself);
/// 2. the target directory this svc was itself compiled in, when it runs from there
///    (`cargo run -p svc`, or `target/release/svc` in a checkout): svc links the runtime
///    too, so most of what a generated server needs is compiled already;
/// 3. `target/` in svc's cache directory (`~/.cache/svc/target`, `SVC_CACHE_DIR`);
/// 4. `DIR/.svc/target` when there is no cache directory.
///
/// The path is absolute, and canonical once the directory exists (a relative one is
/// taken from the working directory, as cargo reads `CARGO_TARGET_DIR`): paths into it
/// go to rustc in flags (`svc build --pgo`'s profile), and cargo runs rustc in each
/// crate's own directory.
pub fn target_dir(dir: &Path) -> PathBuf {
    let target = if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        PathBuf::from(target)
    } else if let Some(target) = own_target_dir() {
        target
    } else {
        match crate::sources::cache_dir() {
            Some(cache) => cache.join("target"),
            None => dir.join(".svc").join("target"),
        }
    };
    target
        .canonicalize()
        .or_else(|_| std::path::absolute(&target))
        .unwrap_or(target)
}

/// `T` when this executable is `T/<profile>/svc` in a cargo target directory (cargo marks
/// those with a `CACHEDIR.TAG`).
fn own_target_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    let target = exe.parent()?.parent()?;
    target.join("CACHEDIR.TAG").is_file().then(|| target.to_path_buf())
}

/// Variables cargo sets for the package it runs (besides `CARGO_PKG_*`).
const INHERITED_FROM_CARGO: &[&str] = &[
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "OUT_DIR",
];

/// Builds the crate generated at `crate_dir` (already emitted) for the project at `dir`.
pub fn cargo_build(dir: &Path, crate_dir: &Path, project: &str, opts: &BuildOptions) -> Result<Built, Error> {
    let started = Instant::now();
    let target = match &opts.flags {
        Some(extra) => extra.target_dir.clone(),
        None => target_dir(dir),
    };
    let total = estimate_units(crate_dir);
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    let shared = opts.runtime == crate::emit::RuntimeLinking::Shared;
    // `cargo rustc` passes flags to the binary alone: its run path, which must not reach
    // (and so rebuild) the dependencies.
    cmd.arg(if shared { "rustc" } else { "build" })
        .arg(if std::io::stderr().is_terminal() {
            "--message-format=json-diagnostic-rendered-ansi"
        } else {
            "--message-format=json"
        })
        .arg("--manifest-path")
        .arg(crate_dir.join("Cargo.toml"));
    if opts.release {
        cmd.arg("--release");
    }
    if shared {
        let profile = if opts.release { "release" } else { "debug" };
        cmd.args(["--bin", project, "--"]);
        for dir in run_path(&target.join(profile).join("deps"))? {
            cmd.arg("-C").arg(format!("link-arg=-Wl,-rpath,{}", dir.display()));
        }
        // svc stands in for rustc to record the compiles of the binary and the node crate,
        // which `svc dev` replays after a change to flows or node code (crate::relink).
        let nodes = Some(dir).filter(|d| d.join("Cargo.toml").is_file());
        cmd.envs(crate::relink::recording_env(
            project,
            nodes,
            &crate::relink::records_dir(crate_dir),
        )?);
    }
    if let Some(extra) = &opts.flags {
        cmd.arg("--target").arg(&extra.target);
        cmd.env("CARGO_ENCODED_RUSTFLAGS", encoded_rustflags(&extra.rustflags))
            .env_remove("RUSTFLAGS");
    }
    // `cargo run` and `cargo test` hand svc the variables of svc's own package. Passed on,
    // they would make the build scripts that watch them (ring's, for one) run again, and
    // every crate above those compile again, whenever svc is started another way.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_PKG_") || INHERITED_FROM_CARGO.contains(&key.as_ref()) {
            cmd.env_remove(key.as_ref());
        }
    }
    cmd.env("CARGO_TARGET_DIR", &target)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(sha) = git_sha(dir) {
        cmd.env("SVC_GIT_SHA", sha);
    }
    let mut child = cmd.spawn().map_err(|e| Error::io("run", "cargo", e))?;
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    // cargo's own messages (errors resolving dependencies, …) on stderr.
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut text);
        text
    });
    let mut progress = Progress::new(total, opts.quiet);
    let mut executable: Option<PathBuf> = None;
    let mut errors = 0usize;
    let project_abs = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    for message in Message::parse_stream(BufReader::new(stdout)) {
        let Ok(message) = message else { continue };
        match message {
            Message::CompilerArtifact(a) => {
                progress.unit(&a.target.name, a.fresh);
                if let Some(exe) = a.executable
                    && a.target.name == project
                {
                    executable = Some(exe.into_std_path_buf());
                }
            }
            Message::CompilerMessage(m) => {
                let level = m.message.level;
                if matches!(
                    level,
                    cargo_metadata::diagnostic::DiagnosticLevel::Error
                        | cargo_metadata::diagnostic::DiagnosticLevel::Ice
                ) {
                    errors += 1;
                }
                // Warnings from dependencies are not the user's to act on.
                let local = m.message.spans.iter().any(|s| {
                    Path::new(&s.file_name).is_relative() || Path::new(&s.file_name).starts_with(&project_abs)
                });
                if (errors > 0 || local || matches!(level, cargo_metadata::diagnostic::DiagnosticLevel::Error))
                    && let Some(rendered) = &m.message.rendered
                {
                    progress.clear();
                    eprint!("{}", relativize(rendered, &project_abs, crate_dir));
                }
            }
            _ => {}
        }
    }
    progress.clear();
    let status = child.wait().map_err(|e| Error::io("wait for", "cargo", e))?;
    let cargo_stderr = stderr_reader.join().unwrap_or_default();
    if !status.success() {
        if errors == 0 {
            eprint!("{cargo_stderr}");
        }
        return Err(Error::Build { errors });
    }
    let built = executable.ok_or_else(|| Error::Tool {
        command: "cargo build".into(),
        problem: "built no binary".into(),
    })?;
    let dest = opts.output.clone().unwrap_or_else(|| dir.join("dist").join(project));
    install(&built, &dest)?;
    Ok(Built {
        binary: dest,
        seconds: started.elapsed().as_secs_f64(),
        compiled: progress.compiled,
        units: progress.done,
    })
}

/// Copies a built binary to `dest`, by way of a temporary name: a server running from
/// `dest` keeps its old binary intact.
pub fn install(built: &Path, dest: &Path) -> Result<(), Error> {
    if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
    }
    let tmp = dest.with_extension("partial");
    // Whatever is there is ours to replace, not to write through: a link left at the
    // temporary name is removed, never followed by the copy.
    let _ = std::fs::remove_file(&tmp);
    std::fs::copy(built, &tmp).map_err(|e| Error::io("copy the binary to", &tmp, e))?;
    std::fs::rename(&tmp, dest).map_err(|e| Error::io("write", dest, e))
}

/// Paths in rustc's rendered diagnostics, relative to the project when they are in it:
/// errors in node code point at the user's own files. Paths into the generated crate say so.
fn relativize(rendered: &str, project: &Path, crate_dir: &Path) -> String {
    let project_prefix = format!("{}/", project.display());
    let crate_abs = crate_dir.canonicalize().unwrap_or_else(|_| crate_dir.to_path_buf());
    let generated_prefix = format!("{}/", crate_abs.display());
    rendered
        .replace(&generated_prefix, "(generated) ")
        .replace(&project_prefix, "")
}

/// Where a binary linked against svc-dylib finds its shared libraries: the dependencies'
/// directory of its build (svc-dylib's `.so`), and the toolchain's (Rust's `libstd`, which
/// a dylib links dynamically). Absolute, so that the binary runs from wherever it is
/// copied on this machine.
fn run_path(deps: &Path) -> Result<Vec<PathBuf>, Error> {
    // The toolchain's failure is kept as text: an `Error` holding an `io::Error` is not `Clone`.
    static TOOLCHAIN_LIBS: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    let libs = TOOLCHAIN_LIBS
        .get_or_init(|| {
            let toolchain = Toolchain::find().map_err(|e| e.to_string())?;
            Ok(toolchain
                .sysroot
                .join("lib")
                .join("rustlib")
                .join(&toolchain.host)
                .join("lib"))
        })
        .clone()
        .map_err(Error::Environment)?;
    Ok(vec![deps.to_path_buf(), libs])
}

/// The number of compilation units, roughly: packages in the dependency graph, plus build
/// scripts. Used only for the progress bar, and asked once a process for each crate: a
/// rebuild in `svc dev` does not wait for a second `cargo metadata` (0.3 s).
fn estimate_units(crate_dir: &Path) -> usize {
    static KNOWN: std::sync::Mutex<Vec<(PathBuf, usize)>> = std::sync::Mutex::new(Vec::new());
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, units)) = known.iter().find(|(dir, _)| dir == crate_dir) {
        return *units;
    }
    let units = count_units(crate_dir);
    known.push((crate_dir.to_path_buf(), units));
    units
}

fn count_units(crate_dir: &Path) -> usize {
    let metadata = cargo_metadata::MetadataCommand::new()
        .manifest_path(crate_dir.join("Cargo.toml"))
        .exec();
    match metadata {
        Ok(m) => {
            let build_scripts = m
                .packages
                .iter()
                .filter(|p| p.targets.iter().any(|t| t.is_custom_build()))
                .count();
            m.resolve.map(|r| r.nodes.len()).unwrap_or(m.packages.len()) + build_scripts
        }
        Err(_) => 0,
    }
}

struct Progress {
    total: usize,
    done: usize,
    compiled: usize,
    tty: bool,
    quiet: bool,
    started: Instant,
}

impl Progress {
    fn new(total: usize, quiet: bool) -> Self {
        Progress {
            total,
            done: 0,
            compiled: 0,
            tty: std::io::stderr().is_terminal(),
            quiet,
            started: Instant::now(),
        }
    }

    fn unit(&mut self, name: &str, fresh: bool) {
        self.done += 1;
        if !fresh {
            self.compiled += 1;
        }
        if self.quiet {
            return;
        }
        let total = self.total.max(self.done);
        if self.tty {
            let width = 30;
            let filled = width * self.done / total;
            eprint!(
                "\r\x1b[2K   Building [{}{}] {}/{} {}",
                "=".repeat(filled),
                " ".repeat(width - filled),
                self.done,
                total,
                name
            );
            let _ = std::io::stderr().flush();
        } else if !fresh && (self.compiled.is_multiple_of(25) || name.ends_with("-server")) {
            eprintln!(
                "   compiled {} crates ({}/{} units, {:.0}s), now {name}",
                self.compiled,
                self.done,
                total,
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    fn clear(&self) {
        if self.tty && !self.quiet {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::compose_rustflags;

    #[test]
    fn extra_rustflags_follow_the_users_own() {
        let extra = ["-Cprofile-use=/p/a b.profdata".to_string()];
        // Nothing of the user's: ours alone, a path with a space kept whole.
        assert_eq!(compose_rustflags(None, None, &extra), "-Cprofile-use=/p/a b.profdata");
        // RUSTFLAGS is split on whitespace, as cargo splits it.
        assert_eq!(
            compose_rustflags(None, Some(" -Ctarget-cpu=native  -Dwarnings ".into()), &extra),
            "-Ctarget-cpu=native\x1f-Dwarnings\x1f-Cprofile-use=/p/a b.profdata"
        );
        // CARGO_ENCODED_RUSTFLAGS wins over RUSTFLAGS, as in cargo, even when empty.
        assert_eq!(
            compose_rustflags(Some("-Ca=b c".into()), Some("-Cignored".into()), &extra),
            "-Ca=b c\x1f-Cprofile-use=/p/a b.profdata"
        );
        assert_eq!(
            compose_rustflags(Some(String::new()), Some("-Cx".into()), &extra),
            "-Cprofile-use=/p/a b.profdata"
        );
    }
}
