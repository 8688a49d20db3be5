//! `svc build` as a user runs it.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::{assert_contains, copy_committed, edit, example_copy, listening_address, repo, scratch_dir};

fn build(dir: &Path, extra: &[&str]) -> (i32, String) {
    build_with(dir, extra, &[])
}

/// [`build`] with more variables in svc's environment.
fn build_with(dir: &Path, extra: &[&str], env: &[(&str, &Path)]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .arg("build")
        .arg(dir)
        .args(extra)
        // The workspace's target directory: dependencies are already compiled there.
        .env("CARGO_TARGET_DIR", repo().join("target"))
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn compiled(stderr: &str) -> usize {
    let line = stderr
        .lines()
        .find(|l| l.contains("Finished"))
        .unwrap_or_else(|| panic!("{stderr}"));
    let n = line.split("compiled ").nth(1).unwrap().split(' ').next().unwrap();
    n.parse().unwrap()
}

#[test]
fn builds_one_binary_and_rebuilds_only_what_changed() {
    // A copy of the example elsewhere, as it is committed (no `.svc/`): svc links the
    // copy's `.svc/source` itself, and nothing in the project names the repository.
    let dir = example_copy("hello", "build");

    let (code, stderr) = build(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    let binary = dir.join("dist/hello");
    let out = Command::new(&binary).arg("--version").output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("hello 0.1.0"),
        "{:?}",
        out
    );

    // Change one flow: only the generated server crate is compiled again.
    let flow = dir.join("flows/greeting.yaml");
    edit(&flow, &[("limit: 60", "limit: 61")]);
    let (code, stderr) = build(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(compiled(&stderr), 1, "only the server crate recompiles: {stderr}");
    let out = Command::new(&binary).arg("routes").output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("61/60s"),
        "the new binary has the change"
    );

    // -o puts the binary elsewhere.
    let other = dir.join("elsewhere/server");
    let (code, stderr) = build(&dir, &["-o", other.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(other.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rustc_errors_in_node_code_point_at_the_users_file() {
    let dir = example_copy("hello", "build-error");
    let node = dir.join("src/nodes/greet.rs");
    edit(
        &node,
        &[(
            "Ok(Outputs { message, tone: ctx.inputs.tone })",
            "Ok(Outputs { message: 42, tone: ctx.inputs.tone })",
        )],
    );
    let (code, stderr) = build(&dir, &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("error[E0308]: mismatched types"), "{stderr}");
    assert!(
        stderr.contains("--> src/nodes/greet.rs:"),
        "the path is relative to the project: {stderr}"
    );
    assert!(stderr.contains("the build failed with 1 error"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every file of `dir` a project commits, for `needle`.
fn committed_files_mentioning(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if support::NOT_COMMITTED.contains(&entry.file_name().to_str().unwrap_or_default()) {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            found.extend(committed_files_mentioning(&entry.path(), needle));
        } else if std::fs::read_to_string(entry.path()).is_ok_and(|t| t.contains(needle)) {
            found.push(entry.path());
        }
    }
    found
}

#[test]
fn a_project_made_by_init_builds_after_it_moves() {
    let base = scratch_dir("move");
    let made = base.join("made-here");
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .arg("init")
        .arg(&made)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Nothing the project commits names svc's checkout or the cache.
    let link = std::fs::read_link(made.join(".svc/source")).unwrap();
    assert!(
        !link.starts_with(repo()),
        "the SDK comes from svc's carried copy, not the checkout: {link:?}"
    );
    for needle in [repo().display().to_string(), link.display().to_string()] {
        assert_eq!(
            committed_files_mentioning(&made, &needle),
            Vec::<PathBuf>::new(),
            "{needle}"
        );
    }

    // A teammate's clone elsewhere: the committed files only, no `.svc/`.
    let clone = base.join("elsewhere/clone");
    copy_committed(&made, &clone);
    assert!(!clone.join(".svc").exists());
    let (code, stderr) = build(&clone, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(clone.join("dist/made-here").exists());
    assert_eq!(std::fs::read_link(clone.join(".svc/source")).unwrap(), link);

    // Moved as a whole, its `.svc/` with it: the link still points at the same sources.
    let moved = base.join("moved");
    std::fs::rename(&clone, &moved).unwrap();
    let (code, stderr) = build(&moved, &[]);
    assert_eq!(code, 0, "{stderr}");
    let _ = std::fs::remove_dir_all(&base);
}

/// A project's `.svc/source` pointed back at sources an svc wrote earlier (the svc used
/// before an upgrade, say) dates them now: cargo knows svc's crates by their path through
/// the link, and would take sources older than the last build for ones it compiled.
#[test]
fn sources_linked_again_are_dated_now_so_cargo_compiles_them() {
    let base = scratch_dir("relink");
    let cache = base.join("cache");
    let project = base.join("proj");
    let svc = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_svc"))
            .args(args)
            .arg(&project)
            .env("SVC_CACHE_DIR", &cache)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    svc(&["init"]);
    let link = project.join(".svc/source");
    let sources = std::fs::read_link(&link).unwrap();
    assert!(sources.starts_with(&cache), "{sources:?}");
    let file = sources.join("runtime/server/src/lib.rs");
    let long_ago = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    let date = |when| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(when)
            .unwrap()
    };
    let dated = || std::fs::metadata(&file).unwrap().modified().unwrap();

    // Linked already: nothing is dated again (other projects would rebuild for nothing).
    date(long_ago);
    svc(&["check"]);
    assert_eq!(dated(), long_ago);

    // Linked to another svc's sources, then back to these: they are dated now.
    let other = cache.join("sources/another-svc");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&other, &link).unwrap();
    svc(&["check"]);
    assert_eq!(std::fs::read_link(&link).unwrap(), sources);
    assert!(dated() > long_ago + std::time::Duration::from_secs(86_400 * 365));
    let _ = std::fs::remove_dir_all(&base);
}

/// `llvm-profdata` of the rustc the tests were built with, found as `svc build --pgo`
/// finds it (`rustup component add llvm-tools`; scripts/setup.sh installs it).
fn llvm_profdata() -> PathBuf {
    let toolchain = svc_compiler::build::Toolchain::find().unwrap_or_else(|e| panic!("{e}"));
    svc_compiler::pgo::profdata_tool(&toolchain).unwrap_or_else(|e| panic!("{e}"))
}

/// The largest block count of the functions of `profile` whose names contain `name`.
fn most_counted(profile: &Path, name: &str) -> u64 {
    let out = Command::new(llvm_profdata())
        .args(["show", "--counts"])
        .arg(format!("--function={name}"))
        .arg(profile)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("Block counts: ["))
        .flat_map(|counts| {
            counts
                .trim_end_matches(']')
                .split(", ")
                .map(|n| n.parse::<u64>().unwrap())
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn a_profile_guided_build_trains_on_the_flow_tests_and_serves() {
    let dir = example_copy("hello", "build-pgo");
    // The workspace's target directory, named relative to the working directory as a
    // user may set it: the profile's path reaches rustc, which cargo runs in each crate's
    // own directory. cargo runs tests in the package's directory, compiler/.
    let relative_target = Path::new("../target");
    assert_eq!(
        std::env::current_dir().unwrap().canonicalize().unwrap(),
        repo().join("compiler").canonicalize().unwrap()
    );
    // What this test checks is the pipeline (instrument, train, merge, build with the
    // profile), not what LLVM makes of the profile (bench/ measures that): both stages
    // build unoptimised, without LTO and in many codegen units, as cargo lets a user
    // override any profile, and take a fraction of a release build's time.
    let quick: &[(&str, &Path)] = &[
        ("CARGO_TARGET_DIR", relative_target),
        ("CARGO_PROFILE_RELEASE_OPT_LEVEL", Path::new("0")),
        ("CARGO_PROFILE_RELEASE_LTO", Path::new("off")),
        ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", Path::new("256")),
    ];
    let (code, stderr) = build_with(&dir, &["--pgo"], quick);
    assert_eq!(code, 0, "{stderr}");

    // The training sent the flow tests' requests, and they were answered as the tests
    // expect (greeting.yaml has cases answered 200, 400, 422 and 429).
    let trained = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("Trained on "))
        .unwrap_or_else(|| panic!("no training line: {stderr}"));
    let requests: u64 = trained.split(' ').next().unwrap().parse().unwrap();
    // At least one round: greeting.yaml sends 65 requests (1 + 1 + 1 + 60 + 1 + 1).
    let round = 65;
    assert!(requests >= round && requests.is_multiple_of(round), "{trained}");
    for status in ["200: ", "400: ", "422: ", "429: "] {
        assert!(trained.contains(status), "{status} in {trained}");
    }
    assert!(!trained.contains("unanswered"), "{trained}");
    assert!(
        !stderr.contains("most training requests were refused"),
        "hello's tests are mostly 200s: {stderr}"
    );

    // The profile counts every one of those requests in the route's code...
    let target = repo().join("target/svc-pgo");
    let profiles: Vec<PathBuf> = std::fs::read_dir(target.join("profiles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("hello-") && name.ends_with(".profdata")
        })
        .collect();
    assert_eq!(profiles.len(), 1, "one profile of hello's, the last: {profiles:?}");
    assert_eq!(
        most_counted(&profiles[0], "8exchange8Exchange3new"),
        requests,
        "each request the training sent starts one exchange"
    );

    // ...and the optimised build compiled the server with it.
    let fingerprints = std::fs::read_dir(target.join("optimised"))
        .unwrap()
        .map(|e| e.unwrap().path().join("release/.fingerprint"))
        .filter(|p| p.is_dir())
        .flat_map(|p| std::fs::read_dir(p).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("hello-server-"))
        .flat_map(|p| std::fs::read_dir(p).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.file_name().unwrap().to_string_lossy() == "bin-hello.json")
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<Vec<_>>();
    let flag = format!("-Cprofile-use={}", profiles[0].display());
    assert!(
        fingerprints.iter().any(|json| json.contains(&flag)),
        "{flag} in {fingerprints:?}"
    );

    // The binary serves.
    let store = dir.join("workspace.db");
    let mut server = Command::new(dir.join("dist/hello"))
        .args(["serve", "--port", "0", "--store"])
        .arg(&store)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let address = listening_address(&mut server);
    let mut stream = std::net::TcpStream::connect(address.trim_start_matches("http://")).unwrap();
    std::io::Write::write_all(
        &mut stream,
        b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    )
    .unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut stream, &mut answer).unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_profile_guided_build_needs_flow_tests_and_says_so_before_building() {
    let dir = example_copy("hello", "build-pgo-none");
    std::fs::remove_dir_all(dir.join("tests")).unwrap();
    let (code, stderr) = build(&dir, &["--pgo"]);
    assert_eq!(code, 1, "{stderr}");
    assert_contains(
        &stderr,
        &[
            "trains on the project's flow tests",
            "help: write cases in `tests/*.yaml`",
        ],
    );
    assert!(!stderr.contains("Building"), "nothing was built: {stderr}");

    // A named llvm-profdata that is not there is refused by name, before building too.
    let missing = dir.join("no-such-llvm-profdata");
    let (code, stderr) = build_with(&dir, &["--pgo"], &[("SVC_LLVM_PROFDATA", &missing)]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("no-such-llvm-profdata`, which is not a file"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
