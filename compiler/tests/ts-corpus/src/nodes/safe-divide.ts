import { defineCodeFunctionNode, t } from "@svc/sdk";

// Number.isFinite, a failure without a code, the quotient as JavaScript writes it.
export default defineCodeFunctionNode({
  nodeKey: "corpus.safe-divide",
  name: "Safe divide",
  inputs: { dividend: t.number(), divisor: t.number() },
  outputs: { quotient: t.number(), remainder: t.number() },
  run(ctx) {
    const { dividend, divisor } = ctx.inputs;
    if (divisor === 0) {
      ctx.fail("division by zero");
    }
    const quotient = dividend / divisor;
    if (!Number.isFinite(quotient)) {
      ctx.fail(`${dividend} / ${divisor} is too large`, "OVERFLOW");
    }
    return { quotient, remainder: dividend % divisor };
  },
});
