import { defineCodeFunctionNode, t } from "@svc/sdk";
import { round2 } from "../lib/money.ts";

// A structure built from inputs; an enum output; for-of with an accumulator.
export default defineCodeFunctionNode({
  nodeKey: "corpus.invoice",
  name: "Invoice",
  inputs: { lines: t.array(t.struct("LineItem")), currency: t.enumValue("Currency"), note: t.string().optional() },
  outputs: { quote: t.struct("Quote"), currency: t.enumValue("Currency") },
  run(ctx) {
    const { lines, currency, note } = ctx.inputs;
    if (lines.length === 0) {
      ctx.fail("an invoice needs lines", "EMPTY");
    }
    let net = 0;
    for (const line of lines) {
      net += line.quantity * line.unitPrice;
    }
    return { quote: { net: round2(net), gross: round2(net * 1.2), currency, note }, currency };
  },
});
