//! `svc studio [DIR]`: the Builder alone, without serving the project's routes.

use super::store::StoreArgs;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The project directory (default: the current directory).
    dir: Option<PathBuf>,
    /// The address the Builder listens on; anything but loopback lets other machines in.
    #[arg(long, default_value = "127.0.0.1")]
    addr: String,
    /// The Builder's port.
    #[arg(long, default_value_t = crate::builder::DEFAULT_PORT)]
    port: u16,
    #[command(flatten)]
    store: StoreArgs,
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    let store = args.store.for_project(&dir);
    let options = crate::builder::Options {
        dir,
        addr: args.addr,
        port: args.port,
        any_port_if_taken: false,
        workspace: store.workspace(),
        server: None,
        dev_status: None,
    };
    match crate::builder::start(options) {
        Ok(running) => {
            if let Some(warning) = &running.exposure_warning {
                eprintln!("{warning}");
            }
            eprintln!("   Builder: {}", running.url);
            eprintln!("   Reading the project as it changes on disk (Ctrl-C to stop)");
            running.wait();
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
