import { defineCodeFunctionNode, t } from "@svc/sdk";

// Object.entries over a generic object, destructured pairs, typeof.
export default defineCodeFunctionNode({
  nodeKey: "corpus.entries",
  name: "Entries",
  inputs: { record: t.object() },
  outputs: { keys: t.array(t.string()), described: t.array(t.string()), numeric: t.object() },
  run({ inputs }) {
    const entries = Object.entries(inputs.record);
    const described = entries.map(([key, value]) => `${key}: ${typeof value}`);
    const numeric = Object.fromEntries(entries.filter(([, value]) => typeof value === "number"));
    return { keys: Object.keys(inputs.record), described, numeric };
  },
});
