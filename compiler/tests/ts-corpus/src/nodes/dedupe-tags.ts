import { defineCodeFunctionNode, t } from "@svc/sdk";

// Set, spread, sort.
export default defineCodeFunctionNode({
  nodeKey: "corpus.dedupe-tags",
  name: "Dedupe tags",
  inputs: { tags: t.array(t.string()) },
  outputs: { unique: t.array(t.string()), duplicates: t.number() },
  run({ inputs }) {
    const unique = [...new Set(inputs.tags.map((tag) => tag.trim().toLowerCase()))].sort();
    return { unique, duplicates: inputs.tags.length - unique.length };
  },
});
