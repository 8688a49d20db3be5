// run must not return a key that is not a declared output.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  outputs: { greeting: t.string() },
  run() { // error: TS2322 'extra'
    const out = { greeting: "hello", extra: 1 };
    return out;
  },
});
