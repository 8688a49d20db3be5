import { defineCodeFunctionNode, t } from "@svc/sdk";

// String comparisons in UTF-16 order, nested conditionals.
export default defineCodeFunctionNode({
  nodeKey: "corpus.compare",
  name: "Compare",
  inputs: { a: t.string(), b: t.string() },
  outputs: { order: t.number(), first: t.string(), same: t.boolean() },
  run({ inputs }) {
    const { a, b } = inputs;
    const order = a < b ? -1 : a > b ? 1 : 0;
    return { order, first: order <= 0 ? a : b, same: a.toLowerCase() === b.toLowerCase() };
  },
});
