// Inputs are read-only.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  inputs: { name: t.string() },
  run(ctx) {
    ctx.inputs.name = "x"; // error: TS2540 read-only
    return {};
  },
});
