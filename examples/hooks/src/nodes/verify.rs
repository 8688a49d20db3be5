use crate::crypto;
use svc_sdk::prelude::*;

define_code_function_node! {
    node_key: "hooks.verify",
    name: "Verify signature",
    description: "Checks a signature against the current key, then the previous one",
    category: "webhooks",
    inputs: {
        event: t::structure("Event"),
        signature: t::structure("Signature"),
        tolerance_seconds: t::number().default(300),
    },
    outputs: {
        valid: t::boolean(),
        matched_key: t::string().optional().description("The fingerprint of the key that matched"),
    },
    run: |ctx| async move {
        let sig = &ctx.inputs.signature;
        if sig.timestamp < 0.0 || sig.timestamp.fract() != 0.0 {
            return Err(ctx.fail("the signature timestamp is not a whole number of seconds", "BAD_TIMESTAMP"));
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as f64).unwrap_or(0.0);
        if (now - sig.timestamp).abs() > ctx.inputs.tolerance_seconds {
            ctx.log("signature outside the time tolerance");
            return Ok(Outputs { valid: false, matched_key: None });
        }
        let payload = svc_sdk::__private::serde_json::to_string(&ctx.inputs.event).map_err(|e| ctx.fail(e.to_string(), "UNSERIALIZABLE"))?;
        let mut keys = vec![ctx.secret("WEBHOOK_SIGNING_KEY")?];
        // The previous key is optional: it exists only during a rotation.
        if let Ok(previous) = ctx.secret("PREVIOUS_SIGNING_KEY") {
            keys.push(previous);
        }
        for key in &keys {
            if crypto::verify(key.expose(), sig.timestamp as u64, &payload, &sig.value) {
                return Ok(Outputs { valid: true, matched_key: Some(crypto::key_id(key.expose())) });
            }
        }
        Ok(Outputs { valid: false, matched_key: None })
    },
}
