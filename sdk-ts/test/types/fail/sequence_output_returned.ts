// Sequence outputs carry no value: the result holds data outputs only.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  outputs: { next: seq.out(), greeting: t.string() },
  run() { // error: TS2322 'next'
    return { next: true, greeting: "hello" };
  },
});
