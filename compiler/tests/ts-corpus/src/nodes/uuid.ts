import { defineCodeFunctionNode, t } from "@svc/sdk";

// crypto.randomUUID: random, so only its shape is an output.
export default defineCodeFunctionNode({
  nodeKey: "corpus.uuid",
  name: "UUID",
  inputs: { count: t.number().default(1) },
  outputs: { lengths: t.array(t.number()), versions: t.array(t.string()), distinct: t.boolean() },
  run(ctx) {
    const n = Math.trunc(ctx.inputs.count);
    if (n < 0 || n > 16) ctx.fail("count must be from 0 to 16", "COUNT");
    const ids = Array.from({ length: n }, () => crypto.randomUUID());
    return {
      lengths: ids.map((id) => id.length),
      versions: ids.map((id) => id.charAt(14)),
      distinct: new Set(ids).size === ids.length,
    };
  },
});
