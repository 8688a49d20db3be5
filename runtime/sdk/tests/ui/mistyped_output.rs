use svc_sdk::prelude::*;

define_code_function_node! {
    node_key: "acme.totals",
    name: "Totals",
    inputs: { x: t::number() },
    outputs: { total: t::number() },
    run: |ctx| async move { Ok(Outputs { total: "a lot" }) },
}

fn main() {}
