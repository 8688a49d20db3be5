use crate::assets::Event;
use svc_sdk::prelude::*;

define_code_function_node! {
    node_key: "hooks.sample-event",
    name: "Sample event",
    description: "Builds an example event of a type",
    category: "webhooks",
    inputs: {
        event_type: t::string(),
        with_data: t::boolean().default(false),
    },
    outputs: { event: t::structure("Event") },
    run: |ctx| {
        let kind = &ctx.inputs.event_type;
        if !kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_') {
            return Err(ctx.fail("event types use letters, digits, `.` and `_`", "BAD_EVENT_TYPE"));
        }
        let mut data = Object::new();
        if ctx.inputs.with_data {
            data.insert("id".into(), Value::from("evt_123"));
            data.insert("amount".into(), Value::from(42));
        }
        Ok(Outputs { event: Event { r#type: kind.clone(), data } })
    },
}
