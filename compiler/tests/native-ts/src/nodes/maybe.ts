import { defineCodeFunctionNode, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "conformance.maybe",
  name: "Maybe",
  inputs: { maybe: t.struct("Maybe"), extra: t.string().optional(), count: t.number().optional() },
  outputs: { text: t.string(), n: t.number(), kind: t.enumValue("Kind") },
  run(ctx) {
    const { maybe, extra, count } = ctx.inputs;
    const name = maybe.label ?? "anon";
    let text = `${maybe.label} ${maybe.n} ${extra} ${count} ${name} ${extra === null} ${extra === undefined} ${maybe.n == null}`;
    if (extra) {
      text = text + ` extra ${extra.length}`;
    }
    if (!count) {
      text = text + " no count";
    }
    if (maybe.label === undefined) {
      ctx.log("no label");
      return { text, n: count ?? -1, kind: "plain" };
    }
    text = text + ` ${maybe.label.length}`;
    if (maybe.kind !== undefined && maybe.kind === "fancy-one") {
      text = text + " fancy";
    }
    return { text, n: maybe.n ?? 0, kind: maybe.kind ?? "plain" };
  },
});
