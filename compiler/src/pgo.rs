//! `svc build --pgo`: a profile-guided release build, trained on the project's flow tests.
//!
//! 1. Build the server instrumented (`-Cprofile-generate`), in a target directory of its
//!    own: its flags differ from a plain build's.
//! 2. Train it: the requests of `tests/*.yaml`, sent for a few seconds to the server
//!    running as in production ([`crate::flow_tests::train`]); on SIGTERM it writes its counts.
//! 3. Merge the counts with `llvm-profdata` from rustc's own LLVM (the `llvm-tools`
//!    component: a profile is read only by the LLVM that wrote its format).
//! 4. Build again with `-Cprofile-use`: LLVM inlines, lays out blocks and splits hot from
//!    cold code by what the training ran. The profile's file name carries a hash of its
//!    content, since cargo sees flags and not the file they name: a new profile is a new
//!    flag, so every crate is compiled again with it.
//!
//! Both stages compile every crate of the server (tokio, hyper and axum take most of the
//! gain): a first profile-guided build compiles them twice, later ones once (the second
//! stage, with the new profile).

use crate::build::{BuildOptions, Built, ExtraFlags, Toolchain, cargo_build, target_dir};
use crate::flow_tests::train::{self, Trained};
use crate::Error;
use crate::project::Project;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use svc_frontend::Diagnostics;

/// Builds the project at `dir` (its crate already emitted at `crate_dir`) with a profile
/// from its flow tests, to `output` (by default `DIR/dist/<project>`). The `Built` it
/// returns counts the time and crates of both builds and the training between them.
pub fn build(dir: &Path, crate_dir: &Path, project_name: &str, output: Option<PathBuf>) -> Result<Built, Error> {
    let started = std::time::Instant::now();
    // Everything that can fail fast does, before the first build.
    let toolchain = Toolchain::find()?;
    let profdata = profdata_tool(&toolchain)?;
    let mut diags = Diagnostics::new();
    let mut project = Project::load(dir, &mut diags);
    let suites = crate::flow_tests::suite::load(&mut project, &mut diags);
    let checked = crate::check::check(&project, &mut diags);
    let has_errors = checked.has_errors || diags.error_count() > 0;
    crate::pipeline::print_diagnostics(diags, &project.sources, "nothing was built");
    if has_errors {
        return Err(Error::Project("the tests the profile is trained on have errors".into()));
    }
    if suites.iter().all(|s| s.tests.cases.is_empty()) {
        return Err(Error::Project(format!(
            "`svc build --pgo` trains on the project's flow tests, and `{}` has none\n  = help: write cases in `{}/*.yaml` (see docs/testing.md), or build with `--release` alone",
            dir.display(),
            crate::flow_tests::suite::TESTS_DIR
        )));
    }

    let work = target_dir(dir).join("svc-pgo");
    let _one_at_a_time = lock(&work)?;
    // One build at a time (the lock), so a fixed place: it also clears what a build
    // stopped during its training left.
    let raw = work.join("raw").join(project_name);
    let _ = std::fs::remove_dir_all(&raw);
    std::fs::create_dir_all(&raw).map_err(|e| Error::io("create", &raw, e))?;

    eprintln!("   Building `{project_name}` (release, instrumented for profiling)");
    // A release build of the server with one more rustc flag, in a target directory of
    // its own.
    let stage = |flag: String, target_dir: PathBuf, output: Option<PathBuf>| BuildOptions {
        runtime: crate::emit::RuntimeLinking::Static,
        release: true,
        output,
        quiet: false,
        flags: Some(ExtraFlags {
            rustflags: vec![flag],
            target: toolchain.host.clone(),
            target_dir,
        }),
    };
    let instrumented = cargo_build(
        dir,
        crate_dir,
        project_name,
        // The path is fixed, so that the instrumented crates stay fresh from one `--pgo`
        // build to the next; each run writes where LLVM_PROFILE_FILE says.
        &stage(
            format!("-Cprofile-generate={}", work.join("default").display()),
            work.join("instrumented"),
            Some(work.join("bin").join(format!("{project_name}-instrumented"))),
        ),
    )?;

    eprintln!(
        "   Training `{project_name}` on its flow tests ({} s)",
        train::TRAINING_TIME.as_secs()
    );
    let trained = train::train(&project, &suites, &instrumented.binary, &raw.join("%p-%m.profraw")).map_err(Error::Training)?;
    if trained.requests() == 0 {
        return Err(Error::Training(format!(
            "the training run got no answer ({} requests failed)",
            trained.unanswered
        )));
    }
    eprintln!("   Trained on {}", describe(&trained));
    if trained.successes() * 2 < trained.requests() {
        eprintln!(
            "warning: most training requests were refused, so the build is optimised for refusals\n  = help: `repeat` the requests your routes mostly answer in `{}/*.yaml` (docs/testing.md)",
            crate::flow_tests::suite::TESTS_DIR
        );
    }
    let profile = merge(&profdata, &raw, &work.join("profiles"), project_name)?;
    let _ = std::fs::remove_dir_all(&raw);

    eprintln!("   Building `{project_name}` (release, profile-guided)");
    // Every crate is compiled again with each new profile, under a new name (the flags are
    // part of cargo's metadata hash), so the last build's are never used again: without
    // this, each `--pgo` build would leave some 400 MB behind. Build scripts and
    // procedural macros (`optimised/release`, built without the flags) stay.
    let optimised = work.join("optimised");
    let _ = std::fs::remove_dir_all(optimised.join(&toolchain.host));
    let mut built = cargo_build(
        dir,
        crate_dir,
        project_name,
        &stage(format!("-Cprofile-use={}", profile.display()), optimised, output),
    )?;
    // The time of all three stages, which `svc build` reports.
    built.seconds = started.elapsed().as_secs_f64();
    built.compiled += instrumented.compiled;
    built.units += instrumented.units;
    Ok(built)
}

/// Holds `svc-pgo/lock` until dropped, waiting first while another `--pgo` build holds it.
///
/// `--pgo` builds in one target directory take turns: each removes the last build's
/// second-stage crates and its project's older profiles, which another build may be
/// compiling with. cargo's own lock covers each cargo run, not what svc does between them.
fn lock(work: &Path) -> Result<std::fs::File, Error> {
    std::fs::create_dir_all(work).map_err(|e| Error::io("create", work, e))?;
    let path = work.join("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io("open", &path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!(
                "    Blocking waiting for another `svc build --pgo` in `{}`",
                work.display()
            );
            file.lock()
                .map_err(|e| Error::io("lock", &path, e))?;
            Ok(file)
        }
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io("lock", &path, e)),
    }
}

/// `llvm-profdata` of rustc's own LLVM (`SVC_LLVM_PROFDATA` names another).
pub fn profdata_tool(toolchain: &Toolchain) -> Result<PathBuf, Error> {
    if let Some(tool) = std::env::var_os("SVC_LLVM_PROFDATA") {
        let tool = PathBuf::from(tool);
        return if tool.is_file() {
            Ok(tool)
        } else {
            Err(Error::Environment(format!(
                "SVC_LLVM_PROFDATA names `{}`, which is not a file\n  = help: name rustc's own (`rustup component add llvm-tools` installs it under `rustc --print sysroot`), or unset it",
                tool.display()
            )))
        };
    }
    let tool = toolchain
        .sysroot
        .join("lib/rustlib")
        .join(&toolchain.host)
        .join("bin/llvm-profdata");
    if tool.is_file() {
        Ok(tool)
    } else {
        Err(Error::Environment(format!(
            "a profile-guided build needs `llvm-profdata` from rustc's own LLVM, and `{}` is missing\n  = help: install it with `rustup component add llvm-tools`, or name one of the same LLVM version in SVC_LLVM_PROFDATA",
            tool.display()
        )))
    }
}

/// Merges the `.profraw` files in `raw` into `profiles/<project>-<hash>.profdata` and
/// removes the project's earlier profiles there.
fn merge(profdata: &Path, raw: &Path, profiles: &Path, project_name: &str) -> Result<PathBuf, Error> {
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(raw)
        .map_err(|e| Error::io("read", raw, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "profraw"))
        .collect();
    inputs.sort();
    if inputs.is_empty() {
        return Err(Error::Training("the instrumented server wrote no profile when it stopped".into()));
    }
    std::fs::create_dir_all(profiles).map_err(|e| Error::io("create", profiles, e))?;
    let merged = profiles.join(format!("{project_name}.profdata.partial"));
    // Removed first: llvm-profdata would write through a link left at this name.
    let _ = std::fs::remove_file(&merged);
    let out = Command::new(profdata)
        .arg("merge")
        .arg("-o")
        .arg(&merged)
        .args(&inputs)
        .output()
        .map_err(|e| Error::io("run", profdata, e))?;
    if !out.status.success() {
        return Err(Error::Tool {
            command: format!("{} merge", profdata.display()),
            problem: format!("failed: {}", String::from_utf8_lossy(&out.stderr).trim()),
        });
    }
    let bytes = std::fs::read(&merged).map_err(|e| Error::io("read", &merged, e))?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    let name = format!("{project_name}-{:016x}.profdata", hasher.finish());
    for old in std::fs::read_dir(profiles).into_iter().flatten().flatten() {
        let file = old.file_name().to_string_lossy().into_owned();
        let hash = file
            .strip_prefix(project_name)
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|rest| rest.strip_suffix(".profdata"));
        // Exactly `<project>-<16 hex>`: `shop-ts-…` is another project's.
        if hash.is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit())) && file != name {
            let _ = std::fs::remove_file(old.path());
        }
    }
    let profile = profiles.join(name);
    std::fs::rename(&merged, &profile).map_err(|e| Error::io("write", &profile, e))?;
    Ok(profile)
}

/// `2,431 requests in 12 rounds (201: 2,000, 429: 431)`.
pub fn describe(trained: &Trained) -> String {
    let statuses: Vec<String> = trained
        .answered
        .iter()
        .map(|(status, n)| format!("{status}: {n}"))
        .collect();
    let mut text = format!(
        "{} requests in {} rounds ({})",
        trained.requests(),
        trained.rounds,
        statuses.join(", ")
    );
    if trained.unanswered > 0 {
        text.push_str(&format!(", {} unanswered", trained.unanswered));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn pgo_builds_in_one_target_directory_take_turns() {
        let work = std::env::temp_dir().join(format!("svc-pgo-lock-{}", std::process::id()));
        let first = lock(&work).unwrap();
        let (sender, second) = mpsc::channel();
        let waiting = {
            let work = work.clone();
            std::thread::spawn(move || sender.send(lock(&work).unwrap()).unwrap())
        };
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            second.try_recv().is_err(),
            "a second --pgo build went ahead while the first held the lock"
        );
        drop(first);
        let second = second
            .recv_timeout(Duration::from_secs(10))
            .expect("the second build waits, then goes ahead");
        waiting.join().unwrap();
        drop(second);
        std::fs::remove_dir_all(&work).unwrap();
    }
}
