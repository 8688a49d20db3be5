import { defineCodeFunctionNode, t } from "@svc/sdk";

// toFixed, and a failure without a code.
export default defineCodeFunctionNode({
  nodeKey: "corpus.percent",
  name: "Percent",
  inputs: { part: t.number(), whole: t.number(), digits: t.number().default(1) },
  outputs: { ratio: t.number(), text: t.string() },
  run(ctx) {
    const { part, whole, digits } = ctx.inputs;
    if (whole === 0) {
      ctx.fail("the whole is zero");
    }
    const ratio = part / whole;
    return { ratio, text: `${(ratio * 100).toFixed(digits)}%` };
  },
});
