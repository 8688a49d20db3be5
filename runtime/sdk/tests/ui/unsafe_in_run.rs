use svc_sdk::prelude::*;

define_code_function_node! {
    node_key: "acme.peek",
    name: "Peek",
    inputs: { x: t::number() },
    outputs: { y: t::number() },
    run: |ctx| async move {
        let p = &ctx.inputs.x as *const f64;
        Ok(Outputs { y: unsafe { *p } })
    },
}

fn main() {}
