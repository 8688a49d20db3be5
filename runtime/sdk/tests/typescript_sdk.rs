//! The TypeScript SDK (`sdk-ts/`, `@svc/sdk`) builds the same manifests and assets as this
//! crate, byte for byte: `sdk-ts/test/fixtures/same-as-rust.js` defines the nodes and
//! assets below with `@svc/sdk`, prints `JSON.stringify` of each, and this test compares
//! the lines with `serde_json::to_string` of the Rust definitions. Needs Node.js on the
//! PATH (scripts/setup.sh installs it); without it the test fails, it does not skip.

use std::path::Path;
use std::process::Command;
use svc_sdk::prelude::*;

svc_sdk::include_assets!("tests/fixtures/svc.config.yaml");

/// Every builder and every modifier, on inputs and outputs.
mod every_pin {
    use svc_sdk::prelude::*;

    define_code_function_node! {
        node_key: "acme.every-pin",
        name: "Every pin",
        description: "Each pin builder and modifier once",
        category: "testing",
        inputs: {
            exec: seq::input(),
            order: t::structure("Order"),
            same_order: t::object_named("Order").port_only(),
            discount: t::number().optional().description("between 0 and 1"),
            currency: t::enum_value("Currency").default("EUR"),
            tags: t::array(t::string()).default(vec!["a", "b"]),
            matrix: t::array(t::array(t::number())).optional(),
            extra: t::any().optional().default([1, 20, -3]),
            rate: t::number().default(-2.5),
            meta: t::object().optional().pin_only(),
            strict: t::boolean().default(false).pin_only().allow_inline_value(),
            unwired: t::string().port_only().allow_inline_value_if(false).pin_only_if(false),
            quoted: t::string().description("say \"hi\" \\ \u{e9}\u{4e2d} \u{1f600} \n tab\t").default("</script>"),
            quantity: t::number().integer().minimum(1).maximum(1000.0).multiple_of(0.5).optional(),
            ratio: t::number().exclusive_minimum(-0.5).exclusive_maximum(2.25).default(1),
            code: t::string().min_length(3).max_length(3).pattern("^[A-Z]+$").default("EUR"),
            contact: t::string().format("email").description("who to ask").optional(),
            skus: t::array(t::string()).min_items(1).max_items(50).unique_items().max_length(40),
        },
        outputs: {
            next: seq::output().description("after pricing"),
            total: t::number(),
            lines: t::array(t::structure("Line")),
            state: t::enum_value("State").optional(),
        },
        run: |_ctx| Ok(Outputs { total: 0.0, lines: Vec::new(), state: None }),
    }
}

mod ping {
    use svc_sdk::prelude::*;

    define_code_function_node! {
        node_key: "acme.ping",
        name: "Ping",
        run: |_ctx| Ok(Outputs {}),
    }
}

fn rust_lines() -> Vec<String> {
    let assets = collect_assets([
        define_secret("PRICING_TOKEN")
            .description("Token for the pricing API")
            .into(),
        define_enum("Currency")
            .description("ISO 4217")
            .values(["EUR"])
            .value(EnumValue::keyed("usd", "USD", "US dollar"))
            .into(),
        define_structure("Line")
            .field(field("sku", "string").required())
            .field(field("unitPrice", "number").required().description("in cents"))
            .field(field("tags", "string:array"))
            .into(),
        define_enum("State")
            .values(["in-progress"])
            .value(EnumValue::Keyed {
                key: "done".into(),
                value: "done".into(),
                label: None,
            })
            .into(),
        define_secret("OPTIONAL_TOKEN").required(false).into(),
    ]);
    vec![
        serde_json::to_string(&build_manifest_from_node(&every_pin::Node)).unwrap(),
        serde_json::to_string(&build_manifest_from_node(&ping::Node)).unwrap(),
        serde_json::to_string(&assets).unwrap(),
    ]
}

fn typescript_lines() -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk-ts/test/fixtures/same-as-rust.js");
    let output = Command::new("node").arg(&script).output().unwrap_or_else(|e| {
        panic!("this test runs Node.js, which could not be started ({e}); scripts/setup.sh installs it")
    });
    assert!(
        output.status.success(),
        "node {} failed:\n{}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn typescript_sdk_builds_the_same_manifests_and_assets_byte_for_byte() {
    let rust = rust_lines();
    let typescript = typescript_lines();
    assert_eq!(rust.len(), typescript.len(), "one line per node, then the assets");
    for (r, ts) in rust.iter().zip(&typescript) {
        assert_eq!(r, ts, "\nRust:       {r}\nTypeScript: {ts}");
    }
}
