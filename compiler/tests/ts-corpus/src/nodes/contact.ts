import { defineCodeFunctionNode, t } from "@svc/sdk";

// Optional chaining and `??` on an optional field.
export default defineCodeFunctionNode({
  nodeKey: "corpus.contact",
  name: "Contact",
  inputs: { customer: t.struct("Customer") },
  outputs: { email: t.string(), domain: t.string().optional() },
  run({ inputs }) {
    const email = inputs.customer.email?.trim().toLowerCase() ?? "none";
    const at = email.indexOf("@");
    return { email, domain: at >= 0 ? email.slice(at + 1) : undefined };
  },
});
