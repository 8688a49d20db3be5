//! `synth-project DIR ROUTES [NODES]`: writes a synthetic project (for benchmarks and
//! for timing `svc check` by hand).

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: synth-project DIR ROUTES [NODES]");
        std::process::exit(2);
    }
    let routes: usize = args[2].parse().expect("ROUTES is a number");
    let nodes: usize = args.get(3).map(|n| n.parse().expect("NODES is a number")).unwrap_or(20);
    svc_bench::synth::write_project(std::path::Path::new(&args[1]), routes, nodes).expect("write the project");
}
