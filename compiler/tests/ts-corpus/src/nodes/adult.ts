import { defineCodeFunctionNode, t } from "@svc/sdk";

// Optional fields narrowed by checks; early returns.
export default defineCodeFunctionNode({
  nodeKey: "corpus.adult",
  name: "Adult",
  inputs: { customer: t.struct("Customer"), threshold: t.number().default(18) },
  outputs: { adult: t.boolean(), reason: t.string() },
  run({ inputs }) {
    const { age } = inputs.customer;
    if (age === undefined) {
      return { adult: false, reason: "no age given" };
    }
    if (age < 0) {
      return { adult: false, reason: "age is negative" };
    }
    return { adult: age >= inputs.threshold, reason: `age ${age}` };
  },
});
