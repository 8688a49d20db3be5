import { defineCodeFunctionNode, t } from "@svc/sdk";
import { label } from "../lib/money.ts";

export default defineCodeFunctionNode({
  nodeKey: "conformance.strings",
  name: "Strings",
  inputs: { s: t.string(), t: t.string() },
  outputs: { text: t.string(), size: t.number(), kind: t.enumValue("Kind") },
  run: (ctx) => {
    const s = ctx.inputs.s;
    const t = ctx.inputs.t;
    const joined = s + t;
    const text = `${s.toUpperCase()}|${t.toLowerCase()}|${s.trim()}|${s.trimStart()}|${t.trimEnd()}|${s.length}|${s < t}|${s >= t}|${s === t}|${!s}|${label(s, t.length)}`;
    if (s === "fail") {
      ctx.fail(`asked to fail with ${t}`);
    }
    return { text, size: joined.length, kind: t };
  },
});
