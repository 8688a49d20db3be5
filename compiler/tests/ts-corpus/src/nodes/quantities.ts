import { defineCodeFunctionNode, t } from "@svc/sdk";

// reduce, some, every, filter on structures.
export default defineCodeFunctionNode({
  nodeKey: "corpus.quantities",
  name: "Quantities",
  inputs: { lines: t.array(t.struct("LineItem")), bulkAt: t.number().default(10) },
  outputs: { total: t.number(), anyBulk: t.boolean(), allPriced: t.boolean(), free: t.number() },
  run: ({ inputs: { lines, bulkAt } }) => {
    const total = lines.reduce((sum, line) => sum + line.quantity, 0);
    return {
      total,
      anyBulk: lines.some((line) => line.quantity >= bulkAt),
      allPriced: lines.every((line) => line.unitPrice > 0),
      free: lines.filter((line) => line.unitPrice === 0).length,
    };
  },
});
