import { defineCodeFunctionNode, t } from "@svc/sdk";

// map with the index argument, join with a separator.
export default defineCodeFunctionNode({
  nodeKey: "corpus.numbered",
  name: "Numbered",
  inputs: { lines: t.array(t.struct("LineItem")) },
  outputs: { text: t.string(), labels: t.array(t.string()) },
  run({ inputs }) {
    const labels = inputs.lines.map((line, i) => `${i + 1}. ${line.sku} x${line.quantity}`);
    return { text: labels.join("\n"), labels };
  },
});
