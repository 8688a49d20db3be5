use crate::assets::{Algorithm, Signature};
use crate::crypto;
use svc_sdk::prelude::*;

define_code_function_node! {
    node_key: "hooks.sign",
    name: "Sign event",
    description: "Signs an event with the current webhook key",
    category: "webhooks",
    inputs: { event: t::structure("Event") },
    outputs: { signature: t::structure("Signature") },
    run: |ctx| async move {
        let key = ctx.secret("WEBHOOK_SIGNING_KEY")?;
        // An `Event` (a structure of JSON values) always serializes.
        let payload = svc_sdk::__private::serde_json::to_string(&ctx.inputs.event).unwrap_or_default();
        let timestamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let key_id = crypto::key_id(key.expose());
        ctx.log(format_args!("signed a `{}` event with key {key_id}", ctx.inputs.event.r#type));
        Ok(Outputs {
            signature: Signature {
                algorithm: Algorithm::HmacSha256,
                key_id,
                timestamp: timestamp as f64,
                value: crypto::sign(key.expose(), timestamp, &payload),
            },
        })
    },
}
