import { defineCodeFunctionNode, t, type Enums } from "@svc/sdk";

/** Rough conversion to EUR, to compare against one threshold. */
const TO_EUR = { EUR: 1.0, USD: 0.92, GBP: 1.17 } as const;

export default defineCodeFunctionNode({
  nodeKey: "shop.decide-status",
  name: "Decide status",
  description: "Large orders need a manual review",
  category: "pricing",
  inputs: {
    total: t.number(),
    currency: t.enumValue("Currency"),
    review_above: t.number().default(1000).description("Totals above this need review (in EUR)"),
  },
  outputs: {
    status: t.enumValue("QuoteStatus"),
  },
  run: (ctx) => {
    const inEur = ctx.inputs.total * TO_EUR[ctx.inputs.currency];
    const status: Enums["QuoteStatus"] = inEur > ctx.inputs.review_above ? "needs-review" : "accepted";
    return { status };
  },
});
