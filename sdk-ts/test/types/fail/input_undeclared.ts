// An input that is not declared does not exist.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  inputs: { name: t.string(), exec: seq.in() },
  run(ctx) {
    ctx.log(ctx.inputs.nmae); // error: TS2339 Property 'nmae' does not exist
    ctx.log(ctx.inputs.exec); // error: TS2339 Property 'exec' does not exist
    return {};
  },
});
