import { defineCodeFunctionNode, t } from "@svc/sdk";

// sort with a comparator on a copy, slice, map to new objects.
export default defineCodeFunctionNode({
  nodeKey: "corpus.top-lines",
  name: "Top lines",
  inputs: { lines: t.array(t.struct("LineItem")), count: t.number().default(3) },
  outputs: { top: t.array(t.object()) },
  run({ inputs }) {
    const top = [...inputs.lines]
      .sort((a, b) => b.quantity * b.unitPrice - a.quantity * a.unitPrice || a.sku.localeCompare(b.sku))
      .slice(0, inputs.count)
      .map(({ sku, quantity, unitPrice }) => ({ sku, value: quantity * unitPrice }));
    return { top };
  },
});
