import { defineCodeFunctionNode, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "conformance.numbers",
  name: "Numbers",
  inputs: { a: t.number(), b: t.number() },
  outputs: { value: t.number(), text: t.string(), flags: t.string() },
  run(ctx) {
    const { a, b } = ctx.inputs;
    const text = `${a} ${b} ${a + b} ${a - b} ${a * b} ${a / b} ${a % b} ${Math.round(a)} ${Math.floor(a)} ${Math.ceil(a)} ${Math.trunc(a)} ${Math.abs(a)} ${Math.sign(a)} ${Math.sqrt(Math.abs(a))} ${Math.min(a, b)} ${Math.max(a, b, 0)} ${-a} ${+b}`;
    const flags = `${a < b} ${a <= b} ${a > b} ${a >= b} ${a === b} ${a !== b} ${!a} ${a ? "t" : "f"} ${Number.isInteger(a)} ${Number.isFinite(a / b)} ${Number.isNaN(a % b)} ${String(a * b)}`;
    let value = a;
    value += b;
    value *= 2;
    value -= 1;
    value /= 4;
    return { value: Math.round(value * 1000) / 1000, text, flags };
  },
});
