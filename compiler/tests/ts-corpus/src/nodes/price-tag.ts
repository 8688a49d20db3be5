import { defineCodeFunctionNode, t } from "@svc/sdk";
import { formatMoney, TAX_RATES } from "../lib/money.ts";

// A helper with a default parameter, toFixed, a table indexed by an enum value.
export default defineCodeFunctionNode({
  nodeKey: "corpus.price-tag",
  name: "Price tag",
  inputs: { net: t.number(), currency: t.enumValue("Currency") },
  outputs: { quote: t.struct("Quote") },
  run({ inputs }) {
    const { net, currency } = inputs;
    const gross = net * (1 + TAX_RATES[currency]);
    return { quote: { net, gross, currency, note: `${formatMoney(net, currency)} + tax = ${formatMoney(gross, currency)}` } };
  },
});
