import { defineCodeFunctionNode, t } from "@svc/sdk";

// Destructured `run` parameter, `??` and a template literal.
export default defineCodeFunctionNode({
  nodeKey: "corpus.greet",
  name: "Greet",
  inputs: { name: t.string().optional(), greeting: t.string().default("Hello") },
  outputs: { message: t.string() },
  run({ inputs }) {
    const who = inputs.name ?? "stranger";
    return { message: `${inputs.greeting}, ${who}!` };
  },
});
