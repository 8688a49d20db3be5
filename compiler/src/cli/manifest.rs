//! `svc manifest [DIR] [--node KEY]`: the publishable node manifests as JSON.

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The project directory (default: the current directory).
    dir: Option<PathBuf>,
    /// Only this node (by node key).
    #[arg(long, value_name = "KEY")]
    node: Option<String>,
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    let result = crate::pipeline::with_checked(&dir, "no manifest was printed", |checked| {
        let manifests: Vec<&svc_types::NodeManifest> = checked
            .catalog
            .nodes
            .values()
            .map(|info| &info.manifest)
            .filter(|m| args.node.as_deref().is_none_or(|k| m.node_key == k))
            .collect();
        if let Some(key) = &args.node {
            if manifests.is_empty() {
                let keys: Vec<&str> = checked.catalog.nodes.keys().copied().collect();
                let hint = super::did_you_mean(key, &keys, "the project's nodes", "the project has no code nodes");
                eprintln!("error: no node has the key `{key}`\n  = help: {hint}");
                return 1;
            }
            println!(
                "{}",
                serde_json::to_string_pretty(manifests[0]).expect("manifests serialize")
            );
        } else {
            println!(
                "{}",
                serde_json::to_string_pretty(&manifests).expect("manifests serialize")
            );
        }
        0
    });
    result.unwrap_or(1)
}
