// ctx.fail takes a string message and an optional string code.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  run(ctx) {
    ctx.fail("no", 404); // error: TS2345 'number' is not assignable to parameter of type 'string'
    return {};
  },
});
