import { defineCodeFunctionNode, t } from "@svc/sdk";

// repeat, toUpperCase, a loop counter.
export default defineCodeFunctionNode({
  nodeKey: "corpus.shout",
  name: "Shout",
  inputs: { text: t.string(), excitement: t.number().default(1) },
  outputs: { shouted: t.string() },
  run(ctx) {
    const { text, excitement } = ctx.inputs;
    if (!Number.isInteger(excitement) || excitement < 0 || excitement > 20) {
      ctx.fail("excitement must be a whole number from 0 to 20", "EXCITEMENT");
    }
    return { shouted: text.toUpperCase() + "!".repeat(excitement) };
  },
});
