import { defineCodeFunctionNode, t } from "@svc/sdk";

// JSON.stringify, with and without indentation.
export default defineCodeFunctionNode({
  nodeKey: "corpus.stringify",
  name: "Stringify",
  inputs: { value: t.any() },
  outputs: { compact: t.string(), pretty: t.string(), length: t.number() },
  run({ inputs }) {
    const compact = JSON.stringify(inputs.value);
    return { compact, pretty: JSON.stringify(inputs.value, null, 2), length: compact.length };
  },
});
