import { defineCodeFunctionNode, t } from "@svc/sdk";

// split with a string separator, filter, map, join.
export default defineCodeFunctionNode({
  nodeKey: "corpus.initials",
  name: "Initials",
  inputs: { name: t.string() },
  outputs: { initials: t.string(), words: t.number() },
  run({ inputs }) {
    const words = inputs.name.split(" ").filter((w) => w.length > 0);
    const initials = words.map((w) => w.charAt(0).toUpperCase()).join("");
    return { initials, words: words.length };
  },
});
