import { defineCodeFunctionNode, t } from "@svc/sdk";

// startsWith, endsWith, includes.
export default defineCodeFunctionNode({
  nodeKey: "corpus.sku-check",
  name: "SKU check",
  inputs: { sku: t.string(), prefix: t.string().default("SKU-") },
  outputs: { valid: t.boolean(), legacy: t.boolean(), kind: t.string() },
  run({ inputs }) {
    const { sku, prefix } = inputs;
    const valid = sku.startsWith(prefix) && sku.length > prefix.length;
    const kind = sku.endsWith("-X") ? "special" : sku.includes("-B") ? "bundle" : "single";
    return { valid, legacy: sku.startsWith("OLD"), kind };
  },
});
