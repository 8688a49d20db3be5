fn main() {
    // Rust ignores SIGPIPE, so a print to a closed pipe (`svc manifest | head`) fails, and
    // `println!` panics. Command-line tools end quietly there instead: restore the default.
    #[cfg(unix)]
    // SAFETY: called first thing, before any thread exists; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Cargo runs svc as its rustc while it builds a development server (svc_compiler::relink).
    svc_compiler::relink::act_as_rustc();
    std::process::exit(svc_compiler::cli::main());
}
