// An output of the wrong type.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  outputs: { greeting: t.string(), count: t.number() },
  run() { // error: TS2322 'number' is not assignable to type 'string'
    return { greeting: 42, count: 1 };
  },
});
