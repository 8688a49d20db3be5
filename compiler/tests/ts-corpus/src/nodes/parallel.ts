import { defineCodeFunctionNode, t } from "@svc/sdk";

const score = async (line: { quantity: number; unitPrice: number }) => line.quantity * line.unitPrice;

// async/await with Promise.all.
export default defineCodeFunctionNode({
  nodeKey: "corpus.parallel",
  name: "Parallel",
  inputs: { lines: t.array(t.struct("LineItem")) },
  outputs: { scores: t.array(t.number()), best: t.number() },
  run: async ({ inputs }) => {
    const scores = await Promise.all(inputs.lines.map((line) => score(line)));
    return { scores, best: scores.length === 0 ? 0 : Math.max(...scores) };
  },
});
