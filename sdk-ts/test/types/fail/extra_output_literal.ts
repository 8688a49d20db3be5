// An undeclared key in a returned object literal.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  outputs: { greeting: t.string() },
  run() { // error: TS2322 'extra'
    return { greeting: "hello", extra: true };
  },
});
