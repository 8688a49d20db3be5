import { defineCodeFunctionNode, t } from "@svc/sdk";
import { makeCounter } from "../lib/shapes.ts";

// A closure made per call: nothing is shared between calls.
export default defineCodeFunctionNode({
  nodeKey: "corpus.counter",
  name: "Counter",
  inputs: { tags: t.array(t.string()), start: t.number().default(0) },
  outputs: { numbered: t.array(t.string()), last: t.number() },
  run({ inputs }) {
    const counter = makeCounter(inputs.start);
    const numbered = inputs.tags.map((tag) => `${counter.next()}:${tag}`);
    return { numbered, last: counter.value };
  },
});
