import { defineCodeFunctionNode, t } from "@svc/sdk";

const DISCOUNTS = { bronze: 0, silver: 0.05, gold: 0.1 };

// A literal table indexed by an enum value.
export default defineCodeFunctionNode({
  nodeKey: "corpus.tier-discount",
  name: "Tier discount",
  inputs: { tier: t.enumValue("Tier"), amount: t.number() },
  outputs: { discount: t.number(), payable: t.number() },
  run(ctx) {
    const rate = DISCOUNTS[ctx.inputs.tier];
    const discount = Math.round(ctx.inputs.amount * rate * 100) / 100;
    return { discount, payable: ctx.inputs.amount - discount };
  },
});
