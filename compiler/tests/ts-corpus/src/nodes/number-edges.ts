import { defineCodeFunctionNode, t } from "@svc/sdk";

// Numbers where JavaScript's formatting shows: 0.1 + 0.2, -0, 1e21, thirds.
export default defineCodeFunctionNode({
  nodeKey: "corpus.number-edges",
  name: "Number edges",
  inputs: { x: t.number() },
  outputs: { sum: t.number(), negZero: t.number(), big: t.number(), third: t.number(), text: t.string() },
  run({ inputs }) {
    const { x } = inputs;
    const sum = 0.1 + 0.2 + x;
    const big = 1e21 * (x === 0 ? 1 : x);
    return { sum, negZero: -0 * x, big, third: x / 3, text: `${sum} ${big} ${-0} ${x / 3}` };
  },
});
