import { defineCodeFunctionNode, t } from "@svc/sdk";
import { capitalize, isBlank } from "../lib/text.ts";

// Arrow-function helpers with charAt and slice.
export default defineCodeFunctionNode({
  nodeKey: "corpus.capitalize",
  name: "Capitalize",
  inputs: { words: t.array(t.string()) },
  outputs: { words: t.array(t.string()), blanks: t.number() },
  run({ inputs }) {
    return {
      words: inputs.words.filter((w) => !isBlank(w)).map((w) => capitalize(w.trim())),
      blanks: inputs.words.filter((w) => isBlank(w)).length,
    };
  },
});
