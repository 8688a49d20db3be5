import { defineCodeFunctionNode, t } from "@svc/sdk";

// A thrown error (not ctx.fail): the route's 500, as in Node.js a rejected run.
export default defineCodeFunctionNode({
  nodeKey: "corpus.explode",
  name: "Explode",
  inputs: { fuse: t.number() },
  outputs: { left: t.number() },
  run({ inputs }) {
    if (inputs.fuse <= 0) {
      throw new Error("boom");
    }
    return { left: inputs.fuse - 1 };
  },
});
