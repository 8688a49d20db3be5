// run must return every required data output.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  outputs: { greeting: t.string(), count: t.number() },
  run() { // error: TS2322 Property 'count' is missing
    return { greeting: "hello" };
  },
});
