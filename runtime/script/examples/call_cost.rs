//! The cost of one call into a TypeScript node, for a profiler: examples/shop-ts's
//! price-order node, run N times (default 20,000) with the benchmark's order.
//!
//!     cargo run --release -p svc-script --example call_cost [N]
//!     valgrind --tool=callgrind target/release/examples/call_cost 2000

use std::time::Instant;
use svc_script::Engine;
use svc_sdk::testing::{TestHost, block_on};

fn main() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../snapshots/shop-ts/scripts/bundle.qjsbc"
    );
    let bundle: &'static [u8] = Box::leak(
        std::fs::read(root)
            .expect("the shop-ts snapshot's bundle")
            .into_boxed_slice(),
    );
    let engine: &'static Engine = Box::leak(Box::new(Engine::new(bundle)));
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let order = serde_json::json!({
        "order": {
            "customerEmail": "ada@example.com", "currency": "EUR", "couponCode": "WELCOME10",
            "lines": [
                { "sku": "A1", "quantity": 2, "unitPrice": 10.0, "tags": ["new"] },
                { "sku": "B2", "quantity": 1, "unitPrice": 5.5 }
            ]
        },
        "max_lines": 50
    });
    let host = TestHost::new();
    let run = |times: usize| {
        for _ in 0..times {
            let ctx = host.context("shop.price-order", order.clone());
            let out: serde_json::Value =
                block_on(engine.run("shop.price-order", "src/nodes/price-order.ts", &ctx)).expect("priced");
            std::hint::black_box(out);
        }
    };
    run(100);
    let started = Instant::now();
    run(n);
    let each = started.elapsed().as_secs_f64() / n as f64 * 1e6;
    println!("{n} calls: {each:.2} us per call (wall)");
}
