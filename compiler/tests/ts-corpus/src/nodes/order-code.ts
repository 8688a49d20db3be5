import { defineCodeFunctionNode, t } from "@svc/sdk";

// padStart on a number made a string.
export default defineCodeFunctionNode({
  nodeKey: "corpus.order-code",
  name: "Order code",
  inputs: { number: t.number(), prefix: t.string().default("ORD") },
  outputs: { code: t.string() },
  run({ inputs }) {
    return { code: `${inputs.prefix}-${String(inputs.number).padStart(6, "0")}` };
  },
});
