//! The cost of one call into a TypeScript node, for a profiler: examples/shop-ts's
//! price-order node (a structure with an array in, a structure out) run N times (default
//! 20,000) with the benchmark's order, then its decide-status node (three fields in, one
//! out).
//!
//!     cargo run --release -p svc-script --example call_cost [N]
//!     valgrind --tool=callgrind target/release/examples/call_cost 2000

use serde::{Deserialize, Serialize};
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
    let line = |sku: &str, quantity: f64, unit_price: f64, tags: Option<Vec<String>>| OrderLine {
        sku: sku.into(),
        quantity,
        unit_price,
        tags,
    };
    let order = Inputs {
        order: Order {
            customer_email: "ada@example.com".into(),
            currency: "EUR".into(),
            coupon_code: Some("WELCOME10".into()),
            lines: vec![
                line("A1", 2.0, 10.0, Some(vec!["new".into()])),
                line("B2", 1.0, 5.5, None),
            ],
        },
        max_lines: 50.0,
    };
    let host = TestHost::new();
    // As a server runs them by default: no log subscriber wants the nodes' lines.
    per_call("price-order", n, || {
        let ctx = host.context("shop.price-order", order.clone()).discarding_logs();
        let out: Outputs = block_on(engine.run("shop.price-order", "src/nodes/price-order.ts", &ctx)).expect("priced");
        std::hint::black_box(out);
    });
    per_call("decide-status", n, || {
        let inputs = DecideInputs {
            total: 22.95,
            currency: "EUR".into(),
            review_above: 1000.0,
        };
        let ctx = host.context("shop.decide-status", inputs).discarding_logs();
        let out: DecideOutputs =
            block_on(engine.run("shop.decide-status", "src/nodes/decide-status.ts", &ctx)).expect("decided");
        std::hint::black_box(out);
    });
}

/// Runs `call` 100 times to warm up, then `n` times, and prints the time of one call.
fn per_call(what: &str, n: usize, call: impl Fn()) {
    (0..100).for_each(|_| call());
    let started = Instant::now();
    (0..n).for_each(|_| call());
    let each = started.elapsed().as_secs_f64() / n as f64 * 1e6;
    println!("{what}, {n} calls: {each:.2} us per call (wall)");
}

#[derive(Serialize)]
struct DecideInputs {
    total: f64,
    currency: String,
    review_above: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[allow(dead_code)]
struct DecideOutputs {
    status: String,
}
svc_sdk::__object_serde!(DecideOutputs, serde);

// The node's outputs as the generated server types them (a typed struct, not a JSON value,
// read as an object only, through svc_sdk's `OnlyMaps`).
#[derive(Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[allow(dead_code)]
struct Outputs {
    quote: Quote,
    line_count: f64,
}
svc_sdk::__object_serde!(Outputs, serde);

#[derive(Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[allow(dead_code)]
struct Quote {
    currency: String,
    lines: Vec<PricedLine>,
    subtotal: f64,
    discount: f64,
    total: f64,
}
svc_sdk::__object_serde!(Quote, serde);

#[derive(Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct PricedLine {
    sku: String,
    quantity: f64,
    line_total: f64,
}
svc_sdk::__object_serde!(PricedLine, serde);

// The node's inputs as the generated server types them.
#[derive(Clone, Serialize)]
struct Inputs {
    order: Order,
    max_lines: f64,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Order {
    customer_email: String,
    currency: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    coupon_code: Option<String>,
    lines: Vec<OrderLine>,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct OrderLine {
    sku: String,
    quantity: f64,
    unit_price: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<Vec<String>>,
}
