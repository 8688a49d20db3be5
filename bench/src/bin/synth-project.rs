//! `synth-project DIR ROUTES [NODES]`: writes a synthetic project (for benchmarks and
//! for timing `svc check` by hand).
//!
//! `synth-project DIR --large SHAPE N`: a project of one flow, large in one direction
//! (`keys`, `array`, `wires` or `nodes`; see `svc_bench::synth::write_large_flow`).

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = || -> ! {
        eprintln!("usage: synth-project DIR ROUTES [NODES] | synth-project DIR --large keys|array|wires|nodes N");
        std::process::exit(2)
    };
    if args.len() < 3 {
        usage();
    }
    let dir = std::path::Path::new(&args[1]);
    if args[2] == "--large" {
        let (Some(shape), Some(n)) = (args.get(3), args.get(4).and_then(|n| n.parse().ok())) else {
            usage()
        };
        let bytes = svc_bench::synth::write_large_flow(dir, shape, n).expect("write the project");
        println!("{bytes}");
        return;
    }
    let routes: usize = args[2].parse().expect("ROUTES is a number");
    let nodes: usize = args.get(3).map(|n| n.parse().expect("NODES is a number")).unwrap_or(20);
    svc_bench::synth::write_project(dir, routes, nodes).expect("write the project");
}
