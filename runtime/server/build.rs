//! Hands generated servers the hot-text list, `link/hot-text.ld` (bench/hot_text.py writes
//! it), where it applies: see docs/codegen.md, "Hot text". Through `links`, cargo passes
//! the path to the build scripts of svc-runtime's direct dependents as
//! `DEP_SVC_RUNTIME_HOT_TEXT`; a generated server's build.rs adds its own crate's
//! functions and gives the script to the linker. Where it does not apply, nothing is
//! passed on, and the server links as any crate does.

use std::env::var;

fn main() {
    println!("cargo::rerun-if-changed=link/hot-text.ld");
    println!("cargo::rerun-if-env-changed=SVC_HOT_TEXT");
    let dir = var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    // A project reaches this crate through its `.svc/source` link, so the manifest
    // directory names a path inside whichever project first built it; every project
    // sharing the target directory reuses this script's output, and that project may
    // since have moved or gone. The canonical path, in svc's sources cache, outlives it.
    let dir = std::fs::canonicalize(&dir)
        .ok()
        .and_then(|canonical| canonical.into_os_string().into_string().ok())
        .unwrap_or(dir);
    // The path goes into a linker script as a quoted string.
    if rust_lld_links_a_release() && var("SVC_HOT_TEXT").as_deref() != Ok("off") && !dir.contains('"') {
        println!("cargo::metadata=hot_text={dir}/link/hot-text.ld");
    }
}

/// A release build for x86_64 Linux (glibc), by a rustc whose default linker is rust-lld
/// (Rust 1.90 on), with no other linker or linker flavour configured: the linker known to
/// merge the script into the one `.text` (GNU ld would write a second `.text`, mold and
/// gold do not take it).
fn rust_lld_links_a_release() -> bool {
    let is = |name: &str, value: &str| var(name).as_deref() == Ok(value);
    let flags = var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let linker_flags = [
        "fuse-ld",
        "linker-flavor",
        "linker-features",
        "link-self-contained",
        "linker=",
    ];
    is("PROFILE", "release")
        && is("CARGO_CFG_TARGET_OS", "linux")
        && is("CARGO_CFG_TARGET_ARCH", "x86_64")
        && is("CARGO_CFG_TARGET_ENV", "gnu")
        && var("RUSTC_LINKER").is_err()
        && !linker_flags.iter().any(|f| flags.contains(f))
        && rustc_minor().is_some_and(|minor| minor >= 90)
}

/// The minor version of the rustc cargo builds with (`rustc 1.95.0 (…)` gives 95).
fn rustc_minor() -> Option<u32> {
    let out = std::process::Command::new(var("RUSTC").ok()?).arg("-V").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.split_whitespace().nth(1)?.split('.').nth(1)?.parse().ok()
}
