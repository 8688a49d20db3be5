// An optional input without a default may be absent.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  inputs: { name: t.string().optional() },
  outputs: { length: t.number() },
  run(ctx) {
    return { length: ctx.inputs.name.length }; // error: TS18048 'ctx.inputs.name' is possibly 'undefined'
  },
});
