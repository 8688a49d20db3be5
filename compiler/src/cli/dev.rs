//! `svc dev [DIR]`: serve locally and rebuild on every change.

use super::store::StoreArgs;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The project directory (default: the current directory).
    dir: Option<PathBuf>,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    addr: String,
    /// The port to listen on.
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Run one code node alone instead of serving (same as `svc run NODE --input JSON`).
    #[arg(long, value_name = "NODE_KEY")]
    node: Option<String>,
    /// The inputs of `--node`, as a JSON object.
    #[arg(long, value_name = "JSON", requires = "node", default_value = "{}")]
    input: String,
    /// Build and start once, then stop (for scripts and CI); exit status 0 when it built.
    #[arg(long)]
    once: bool,
    /// The Builder's port (it listens on --addr too); default 4400, or any free port when
    /// that one is taken.
    #[arg(long)]
    builder_port: Option<u16>,
    /// Do not start the Builder.
    #[arg(long)]
    no_builder: bool,
    #[command(flatten)]
    store: StoreArgs,
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    if let Some(node) = &args.node {
        return super::run::run_node(&dir, node, &args.input);
    }
    let store = args
        .store
        .store
        .clone()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.join(".svc").join("workspace.db"));
    let builder = (!args.no_builder && !args.once).then(|| crate::builder::Options {
        dir: dir.clone(),
        addr: args.addr.clone(),
        port: args.builder_port.unwrap_or(crate::builder::DEFAULT_PORT),
        any_port_if_taken: args.builder_port.is_none(),
        server: (args.port != 0).then(|| format!("http://{}:{}", loopback_of(&args.addr), args.port)),
        workspace: args.store.clone().for_project(&dir).workspace(),
        dev_status: None,
    });
    crate::dev::run(
        &dir,
        crate::dev::DevOptions {
            addr: args.addr,
            port: args.port,
            store,
            once: args.once,
            builder,
        },
    )
}

/// The address to reach a server listening on `addr` from this machine.
fn loopback_of(addr: &str) -> String {
    match addr.parse::<std::net::IpAddr>() {
        Ok(ip) if ip.is_unspecified() => "127.0.0.1".into(),
        Ok(std::net::IpAddr::V6(ip)) => format!("[{ip}]"),
        _ => addr.to_string(),
    }
}
