// With the registry svc writes, an enum input is the union of its values.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

declare module "@svc/sdk" {
  interface Enums {
    Currency: "EUR" | "USD";
  }
}

export default defineCodeFunctionNode({
  nodeKey: "acme.convert",
  name: "Convert",
  inputs: { currency: t.enumValue("Currency") },
  outputs: { currency: t.enumValue("Currency") },
  run(ctx) { // error: TS2322 Type 'string' is not assignable to type '"EUR" | "USD"'
    if (ctx.inputs.currency === "GBP") ctx.fail("never"); // error: TS2367 no overlap
    return { currency: "JPY" };
  },
});
