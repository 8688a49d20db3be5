import { defineCodeFunctionNode, t } from "@svc/sdk";

// flatMap, includes, optional arrays with `??`.
export default defineCodeFunctionNode({
  nodeKey: "corpus.all-tags",
  name: "All tags",
  inputs: { lines: t.array(t.struct("LineItem")), wanted: t.string().default("sale") },
  outputs: { tags: t.array(t.string()), hasWanted: t.boolean() },
  run({ inputs }) {
    const tags = inputs.lines.flatMap((line) => line.tags ?? []);
    return { tags, hasWanted: tags.includes(inputs.wanted) };
  },
});
