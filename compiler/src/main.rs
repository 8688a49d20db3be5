fn main() {
    std::process::exit(svc_compiler::cli::main());
}
