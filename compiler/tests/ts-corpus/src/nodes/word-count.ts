import { defineCodeFunctionNode, t } from "@svc/sdk";
import { plural } from "../lib/text.ts";

// split on a string, filter, a helper that builds a string.
export default defineCodeFunctionNode({
  nodeKey: "corpus.word-count",
  name: "Word count",
  inputs: { text: t.string() },
  outputs: { words: t.number(), summary: t.string() },
  run({ inputs }) {
    const words = inputs.text.split(" ").filter((w) => w.trim().length > 0).length;
    return { words, summary: plural(words, "word") };
  },
});
