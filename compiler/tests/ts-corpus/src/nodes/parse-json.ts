import { defineCodeFunctionNode, t } from "@svc/sdk";

// JSON.parse in try/catch, a failure with a code.
export default defineCodeFunctionNode({
  nodeKey: "corpus.parse-json",
  name: "Parse JSON",
  inputs: { text: t.string() },
  outputs: { value: t.any(), kind: t.string() },
  run(ctx) {
    let value: unknown;
    try {
      value = JSON.parse(ctx.inputs.text);
    } catch {
      ctx.fail("the text is not JSON", "BAD_JSON");
    }
    const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
    return { value: value as any, kind };
  },
});
