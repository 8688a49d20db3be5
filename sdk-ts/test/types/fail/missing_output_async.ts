// An async run that resolves without a required output.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  outputs: { greeting: t.string() },
  async run() { // error: TS2322 'greeting'
    return {};
  },
});
