import { defineCodeFunctionNode, t } from "@svc/sdk";

// Modulo on negative and fractional numbers, Math.abs and Math.sign.
export default defineCodeFunctionNode({
  nodeKey: "corpus.even-odd",
  name: "Even or odd",
  inputs: { n: t.number() },
  outputs: { parity: t.string(), remainder: t.number(), sign: t.number(), magnitude: t.number() },
  run({ inputs }) {
    const { n } = inputs;
    const remainder = n % 2;
    const parity = !Number.isInteger(n) ? "fraction" : remainder === 0 ? "even" : "odd";
    return { parity, remainder, sign: Math.sign(n), magnitude: Math.abs(n) };
  },
});
