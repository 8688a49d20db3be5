//! Tells the crates that link svc-runtime where its hot-text linker script is: a generated
//! server's build.rs passes `link/hot-text.ld` to the linker (see that file, and
//! bench/hot_text.py, which writes it). Through `links`, cargo hands the path to the build
//! scripts of svc-runtime's direct dependents as `DEP_SVC_RUNTIME_HOT_TEXT`.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo::rerun-if-changed=link/hot-text.ld");
    println!("cargo::metadata=hot_text={dir}/link/hot-text.ld");
}
