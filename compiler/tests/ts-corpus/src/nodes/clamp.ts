import { defineCodeFunctionNode, t } from "@svc/sdk";

// `ctx.fail` with a code; Math.min/max.
export default defineCodeFunctionNode({
  nodeKey: "corpus.clamp",
  name: "Clamp",
  inputs: { value: t.number(), min: t.number().default(0), max: t.number().default(100) },
  outputs: { clamped: t.number(), changed: t.boolean() },
  run(ctx) {
    const { value, min, max } = ctx.inputs;
    if (min > max) {
      ctx.fail(`min ${min} is above max ${max}`, "RANGE");
    }
    const clamped = Math.min(Math.max(value, min), max);
    return { clamped, changed: clamped !== value };
  },
});
