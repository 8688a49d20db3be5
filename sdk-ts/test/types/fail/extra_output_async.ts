// An async run is held to its outputs as well.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  outputs: { greeting: t.string() },
  async run() { // error: TS2322 'extra'
    return { greeting: "hello", extra: 1 };
  },
});
