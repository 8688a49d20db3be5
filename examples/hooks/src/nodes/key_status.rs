use crate::crypto;
use svc_sdk::prelude::*;

define_code_function_node! {
    node_key: "hooks.key-status",
    name: "Key status",
    description: "The fingerprint of the active key, and whether a rotation is under way",
    category: "webhooks",
    outputs: {
        key_id: t::string(),
        rotated: t::boolean(),
    },
    run: |ctx| async move {
        let key = ctx.secret("WEBHOOK_SIGNING_KEY")?;
        Ok(Outputs { key_id: crypto::key_id(key.expose()), rotated: ctx.secret("PREVIOUS_SIGNING_KEY").is_ok() })
    },
}
