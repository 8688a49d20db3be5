// A default must have the pin's type.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  inputs: { count: t.number().default("ten") }, // error: TS2345 'string' is not assignable to parameter of type 'number'
  run() {
    return {};
  },
});
