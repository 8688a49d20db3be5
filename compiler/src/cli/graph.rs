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
    let found = project.flows.iter().find(|f| {
        f.route.value == wanted || project.sources.get(f.file).display_path == wanted || {
            let name = &project.sources.get(f.file).display_path;
            name.strip_prefix("flows/")
                .is_some_and(|n| n == wanted || n.trim_end_matches(".yaml") == wanted)
        }
    });
    let Some(flow) = found else {
        let routes: Vec<&str> = project.flows.iter().map(|f| f.route.value.as_str()).collect();
        let hint = match svc_types::assets::closest(wanted, routes.iter().copied()) {
            Some(best) => format!("did you mean `{best}`?"),
            None if routes.is_empty() => "the project has no readable flows; run `svc check`".to_string(),
            None => format!("the routes are: {}", routes.join(", ")),
        };
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
