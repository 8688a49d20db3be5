import { defineCodeFunctionNode, t } from "@svc/sdk";

// Destructuring with renames, arrow `run` with a destructured parameter.
export default defineCodeFunctionNode({
  nodeKey: "corpus.full-name",
  name: "Full name",
  inputs: { customer: t.struct("Customer") },
  outputs: { fullName: t.string(), sortKey: t.string() },
  run: ({ inputs }) => {
    const { firstName: first, lastName: last } = inputs.customer;
    const fullName = `${first.trim()} ${last.trim()}`;
    return { fullName, sortKey: `${last.trim().toLowerCase()}, ${first.trim().toLowerCase()}` };
  },
});
