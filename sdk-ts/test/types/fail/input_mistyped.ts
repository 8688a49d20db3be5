// ctx.inputs is typed from the input pins.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  inputs: { name: t.string() },
  outputs: { length: t.number() },
  run(ctx) {
    const n: number = ctx.inputs.name; // error: TS2322 'string' is not assignable to type 'number'
    return { length: n };
  },
});
