//! Hot text (docs/codegen.md): svc-runtime's build script and a generated crate's, run as
//! cargo runs them for a release build on x86_64 Linux, hand the linker a script that the
//! toolchain in use accepts, and that puts the listed functions and the crate's own ahead
//! of the rest of `.text`.
//!
//! The build scripts are runtime/server's and snapshots/hello's, compiled and run by hand
//! with the environment cargo gives build scripts (the first one's `hot_text` metadata
//! becomes the second one's `DEP_SVC_RUNTIME_HOT_TEXT`); the program linked is a small
//! one compiled as a crate named `hello`, so that the own-crate pattern applies to it.
//! Where hot text does not apply (another target, a configured linker), nothing is
//! passed, which the last test checks.

#![cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn rustc() -> String {
    std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into())
}

fn run(command: &mut Command) -> String {
    let out = command.output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The two build scripts, runtime/server's and snapshots/hello's, compiled into `dir`.
struct BuildScripts {
    runtime: PathBuf,
    server: PathBuf,
}

fn build_scripts(dir: &Path) -> BuildScripts {
    let compile = |source: &str, name: &str| {
        let exe = dir.join(name);
        run(Command::new(rustc())
            .args(["--edition", "2024", "-o"])
            .arg(&exe)
            .arg(repo().join(source)));
        exe
    };
    BuildScripts {
        runtime: compile("runtime/server/build.rs", "runtime-build-script"),
        server: compile("snapshots/hello/build.rs", "server-build-script"),
    }
}

/// What a build script printed after `prefix`, line by line.
fn printed(out: &str, prefix: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(str::to_owned)
        .collect()
}

/// A build script run with cargo's environment for a release build on x86_64 Linux, plus
/// `extra`.
fn cargo_env(script: &Path, out_dir: &Path, extra: &[(&str, &str)]) -> Command {
    let mut command = Command::new(script);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("RUSTC", rustc())
        .env("OUT_DIR", out_dir)
        .env("PROFILE", "release")
        .env("CARGO_CFG_TARGET_OS", "linux")
        .env("CARGO_CFG_TARGET_ARCH", "x86_64")
        .env("CARGO_CFG_TARGET_ENV", "gnu")
        .env("CARGO_ENCODED_RUSTFLAGS", "")
        .envs(extra.iter().copied());
    command
}

/// Runs svc-runtime's build script as cargo runs it in `manifest_dir`; returns the path
/// it hands on (none where hot text does not apply).
fn runtime_hot_text(
    scripts: &BuildScripts,
    out_dir: &Path,
    manifest_dir: &Path,
    extra: &[(&str, &str)],
) -> Vec<String> {
    printed(
        &run(cargo_env(&scripts.runtime, out_dir, extra).env("CARGO_MANIFEST_DIR", manifest_dir)),
        "cargo::metadata=hot_text=",
    )
}

/// Runs both build scripts with cargo's environment for a release build on x86_64 Linux,
/// plus `extra`; returns the linker arguments the server's passed.
fn link_args(scripts: &BuildScripts, out_dir: &Path, extra: &[(&str, &str)]) -> Vec<String> {
    let runtime_dir = repo().join("runtime/server").canonicalize().unwrap();
    let metadata = runtime_hot_text(scripts, out_dir, &runtime_dir, extra);
    let mut server = cargo_env(&scripts.server, out_dir, extra);
    if let Some(hot_text) = metadata.first() {
        assert_eq!(Path::new(hot_text), runtime_dir.join("link/hot-text.ld"));
        server.env("DEP_SVC_RUNTIME_HOT_TEXT", hot_text);
    }
    printed(&run(&mut server), "cargo::rustc-link-arg-bins=")
}

fn rustc_minor() -> u32 {
    let version = run(Command::new(rustc()).arg("-V"));
    version
        .split_whitespace()
        .nth(1)
        .unwrap()
        .split('.')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

/// The address of the first defined symbol whose name is `part` or, with `*` after it,
/// contains `part`.
fn address(symbols: &str, part: &str) -> u64 {
    let (part, anywhere) = part.strip_suffix('*').map_or((part, false), |p| (p, true));
    symbols
        .lines()
        .find_map(|l| {
            let mut fields = l.split_whitespace();
            let (addr, _kind, name) = (fields.next()?, fields.next()?, fields.next()?);
            (name == part || anywhere && name.contains(part)).then(|| u64::from_str_radix(addr, 16).unwrap())
        })
        .unwrap_or_else(|| panic!("no symbol containing `{part}`"))
}

#[test]
fn the_linker_takes_the_script_and_puts_the_listed_and_own_functions_first() {
    if rustc_minor() < 90 {
        // Before Rust 1.90 the default linker is the system's, not rust-lld, and nothing
        // is rightly passed (the last test).
        return;
    }
    let dir = svc_testkit::TempDir::new("hot-text");
    let args = link_args(&build_scripts(dir.path()), dir.path(), &[]);
    assert_eq!(args.len(), 1, "{args:?}");
    let script = std::fs::read_to_string(args[0].strip_prefix("-Wl,-T,").unwrap()).unwrap();
    assert!(
        script.contains("INCLUDE") && script.contains("*(.text.*_ZN5hello*)"),
        "{script}"
    );

    // A release-like program named `hello`: its own function, and std's formatting, which
    // the hot-text list names (every server formats).
    let main = dir.path().join("main.rs");
    std::fs::write(
        &main,
        "#[inline(never)] pub fn greeting(n: usize) -> String { format!(\"hello {n}\") }\n\
         fn main() { println!(\"{}\", greeting(std::env::args().count())); }\n",
    )
    .unwrap();
    let exe = dir.path().join("hello");
    run(Command::new(rustc())
        .args(["--edition", "2024", "--crate-name", "hello", "-C", "opt-level=1"])
        .arg("-C")
        .arg(format!("link-arg={}", args[0]))
        .arg("-o")
        .arg(&exe)
        .arg(&main));
    assert_eq!(run(&mut Command::new(&exe)), "hello 1\n", "the linked program runs");

    let symbols = run(Command::new("nm").arg("-n").arg(&exe));
    let start = address(&symbols, "_start");
    let own = address(&symbols, "5hello8greeting*");
    let listed = address(&symbols, "4core3fmt5write*");
    assert!(
        own < start,
        "the crate's own code comes before the rest of .text (crt's _start)"
    );
    assert!(
        listed < start,
        "a function hot-text.ld lists comes before the rest of .text"
    );
    let sections = run(Command::new("readelf").args(["-SW"]).arg(&exe));
    assert_eq!(
        sections.lines().filter(|l| l.contains(" .text ")).count(),
        1,
        "one .text, as tools that read only `.text` (valgrind) expect:\n{sections}"
    );
}

#[test]
fn nothing_is_passed_for_a_debug_build_another_linker_or_when_turned_off() {
    let dir = svc_testkit::TempDir::new("hot-text-off");
    let scripts = build_scripts(dir.path());
    let cases: &[&[(&str, &str)]] = &[
        &[("PROFILE", "debug")],
        &[("SVC_HOT_TEXT", "off")],
        &[("RUSTC_LINKER", "/usr/bin/cc")],
        &[("CARGO_ENCODED_RUSTFLAGS", "-Clink-arg=-fuse-ld=mold")],
        &[("CARGO_CFG_TARGET_ARCH", "aarch64")],
    ];
    for extra in cases {
        assert_eq!(
            link_args(&scripts, dir.path(), extra),
            Vec::<String>::new(),
            "{extra:?}"
        );
    }
}

#[test]
fn the_list_is_named_by_a_path_that_outlives_the_project_which_first_built_the_runtime() {
    // As svc lays it out: the project reaches svc's sources through its `.svc/source`
    // link, and cargo runs svc-runtime's build script in the directory named through it.
    // Its output is reused by every project sharing the target directory, also after
    // this one is deleted.
    let dir = svc_testkit::TempDir::new("hot-text-link");
    let scripts = build_scripts(dir.path());
    let project = dir.path().join("first-project");
    std::fs::create_dir_all(project.join(".svc")).unwrap();
    std::os::unix::fs::symlink(repo(), project.join(".svc/source")).unwrap();
    let metadata = runtime_hot_text(&scripts, dir.path(), &project.join(".svc/source/runtime/server"), &[]);
    if rustc_minor() < 90 {
        assert!(metadata.is_empty(), "{metadata:?}");
        return;
    }
    std::fs::remove_dir_all(&project).unwrap();
    assert_eq!(
        metadata,
        [repo()
            .join("runtime/server/link/hot-text.ld")
            .canonicalize()
            .unwrap()
            .to_str()
            .unwrap()],
        "the list by its canonical path, not through the project's link"
    );
}

#[test]
fn a_list_that_is_gone_is_left_out_with_a_warning_rather_than_failing_the_link() {
    let dir = svc_testkit::TempDir::new("hot-text-gone");
    let scripts = build_scripts(dir.path());
    let gone = dir.path().join("gone/hot-text.ld");
    let out = run(cargo_env(&scripts.server, dir.path(), &[]).env("DEP_SVC_RUNTIME_HOT_TEXT", &gone));
    assert!(printed(&out, "cargo::rustc-link-arg-bins=").is_empty(), "{out}");
    let warnings = printed(&out, "cargo::warning=");
    assert!(
        warnings.len() == 1 && warnings[0].contains("is gone") && warnings[0].contains(gone.to_str().unwrap()),
        "{out}"
    );
}
