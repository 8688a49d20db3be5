//! `svc graph ROUTE [DIR] [--format mermaid|dot]`

use crate::graph_render::{self, Format};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The route (as written in its flow, `orders`) or the flow file (`flows/create-order.yaml`).
    route: String,
    /// The project directory (default: the current directory).
    dir: Option<PathBuf>,
    /// Mermaid (for Markdown) or Graphviz DOT (`| dot -Tsvg > flow.svg`).
    #[arg(long, value_enum, default_value_t = GraphFormat::Mermaid)]
    format: GraphFormat,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum GraphFormat {
    Mermaid,
    Dot,
}

pub fn run(args: Args) -> i32 {
    let dir = super::project_dir(args.dir);
    let mut diags = svc_frontend::Diagnostics::new();
    let project = crate::project::Project::load(&dir, &mut diags);
    let wanted = args.route.trim_start_matches('/');
    // A route, or its flow file with or without `flows/` and `.yaml`.
    let found = project.flows.iter().find(|f| {
        let file = project.sources.get(f.file).display_path.as_str();
        let short = file.strip_prefix("flows/").unwrap_or(file);
        [f.route.value.as_str(), file, short, short.trim_end_matches(".yaml")].contains(&wanted)
    });
    let Some(flow) = found else {
        let routes: Vec<&str> = project.flows.iter().map(|f| f.route.value.as_str()).collect();
        let hint = super::did_you_mean(
            wanted,
            &routes,
            "the routes",
            "the project has no readable flows; run `svc check`",
        );
        eprintln!("error: no flow has the route `{wanted}`\n  = help: {hint}");
        return 1;
    };
    let format = match args.format {
        GraphFormat::Mermaid => Format::Mermaid,
        GraphFormat::Dot => Format::Dot,
    };
    print!("{}", graph_render::render(flow, format));
    0
}
