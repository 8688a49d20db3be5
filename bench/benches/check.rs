//! `svc check` (load + check) on synthetic projects of 100, 1,000 and 5,000 routes, and
//! on single flows large in one direction (keys, array items, wires, nodes) at three
//! sizes each. Growth should be linear: compare time per element across sizes.
//!
//! `cargo bench -p svc-bench --bench check`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::path::PathBuf;
use svc_compiler::{check, project::Project};
use svc_frontend::Diagnostics;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("svc_check");
    group.sample_size(10);
    for routes in [100usize, 1_000, 5_000] {
        let dir: PathBuf = std::env::temp_dir().join(format!("svc-bench-check-{routes}"));
        svc_bench::synth::write_project(&dir, routes, 20).unwrap();
        group.throughput(Throughput::Elements(routes as u64));
        group.bench_with_input(BenchmarkId::from_parameter(routes), &dir, |b, dir| {
            b.iter(|| {
                let mut diags = Diagnostics::new();
                let project = Project::load(dir, &mut diags);
                let _ = check::check(&project, &mut diags);
                assert!(!diags.has_errors());
                diags.len()
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("svc_check_large");
    group.sample_size(10);
    for shape in svc_bench::synth::LARGE_SHAPES {
        let sizes: [usize; 3] = if shape == "nodes" {
            [5_000, 20_000, 80_000]
        } else {
            [10_000, 40_000, 160_000]
        };
        for n in sizes {
            let dir: PathBuf = std::env::temp_dir().join(format!("svc-bench-large-{shape}-{n}"));
            let bytes = svc_bench::synth::write_large_flow(&dir, shape, n).unwrap();
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_with_input(BenchmarkId::new(shape, n), &dir, |b, dir| {
                b.iter(|| {
                    let mut diags = Diagnostics::new();
                    let project = Project::load(dir, &mut diags);
                    let _ = check::check(&project, &mut diags);
                    assert!(!diags.has_errors(), "{shape} {n}");
                    diags.len()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
