import { defineCodeFunctionNode, t } from "@svc/sdk";
import { Money } from "../lib/shapes.ts";

// A class from a helper module: static factory, methods, a thrown error for a mismatch.
export default defineCodeFunctionNode({
  nodeKey: "corpus.money-class",
  name: "Money class",
  inputs: { lines: t.array(t.struct("LineItem")), currency: t.enumValue("Currency") },
  outputs: { total: t.string(), cents: t.number() },
  run({ inputs }) {
    let total = Money.of(0, inputs.currency);
    for (const line of inputs.lines) {
      total = total.plus(Money.of(line.unitPrice, inputs.currency).times(line.quantity));
    }
    return { total: total.toString(), cents: total.cents };
  },
});
