use crate::assets::Tone;
use svc_sdk::prelude::*;

define_code_function_node! {
    node_key: "hello.greet",
    name: "Greet",
    description: "Builds a greeting for a name",
    category: "text",
    inputs: {
        name: t::string().default("world").description("Who to greet"),
        tone: t::enum_value("Tone").default("friendly"),
    },
    outputs: {
        message: t::string(),
        tone: t::enum_value("Tone"),
    },
    run: |ctx| async move {
        let name = ctx.inputs.name.trim();
        if name.len() > 100 {
            return Err(ctx.fail("the name is longer than 100 characters", "NAME_TOO_LONG"));
        }
        let message = match ctx.inputs.tone {
            Tone::Friendly => format!("Hello, {name}!"),
            Tone::Formal => format!("Good day, {name}."),
            Tone::Pirate => format!("Ahoy, {name}!"),
        };
        ctx.log(format_args!("greeted {name} ({})", ctx.inputs.tone));
        Ok(Outputs { message, tone: ctx.inputs.tone })
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_sdk::testing::TestHost;

    #[test]
    fn greets_in_every_tone() {
        let run = TestHost::new().run::<Node>(Inputs { name: "Ada".into(), tone: Tone::Pirate });
        assert_eq!(run.result.unwrap().message, "Ahoy, Ada!");
        assert_eq!(run.logs, ["greeted Ada (arr)"]);
    }

    #[test]
    fn refuses_long_names() {
        let run = TestHost::new().run::<Node>(Inputs { name: "x".repeat(101), tone: Tone::Formal });
        assert_eq!(run.result.unwrap_err().code.as_deref(), Some("NAME_TOO_LONG"));
    }
}
