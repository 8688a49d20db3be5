import { defineCodeFunctionNode, t } from "@svc/sdk";
import { lineTotal, round2 } from "../lib/money.ts";

// Module-level arrow functions from a helper module, map and reduce.
export default defineCodeFunctionNode({
  nodeKey: "corpus.line-totals",
  name: "Line totals",
  inputs: { lines: t.array(t.struct("LineItem")) },
  outputs: { totals: t.array(t.number()), grandTotal: t.number() },
  run({ inputs }) {
    const totals = inputs.lines.map((line) => lineTotal(line.quantity, line.unitPrice));
    const grandTotal = round2(totals.reduce((sum, x) => sum + x, 0));
    return { totals, grandTotal };
  },
});
