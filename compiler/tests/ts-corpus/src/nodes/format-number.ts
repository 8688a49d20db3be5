import { defineCodeFunctionNode, t } from "@svc/sdk";

// toFixed, toPrecision and String() where JavaScript's rules show.
export default defineCodeFunctionNode({
  nodeKey: "corpus.format-number",
  name: "Format number",
  inputs: { x: t.number() },
  outputs: { fixed: t.string(), precise: t.string(), plain: t.string(), exponent: t.string() },
  run({ inputs }) {
    const { x } = inputs;
    return { fixed: x.toFixed(2), precise: x.toPrecision(4), plain: String(x), exponent: x.toExponential(3) };
  },
});
