use svc_sdk::prelude::*;

define_code_function_node! {
    node_key: "totals",
    nmae: "Totals",
    inputs: { x: t::numbr(), y: t::string().optinal() },
    outputs: { next: seq::output(), other: seq::output() },
}

fn main() {}
