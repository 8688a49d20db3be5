// The `shop` example with its config and code nodes in TypeScript: the same flows, the
// same answers. svc reads this file statically (it never runs it): keep the default
// export a literal, with the assets in `collectAssets([...])`.
import { collectAssets, defineEnum, defineStructure } from "@svc/sdk";

const Currency = defineEnum({
  name: "Currency",
  description: "ISO 4217 currency codes the shop accepts",
  values: ["EUR", "USD", "GBP"],
});

const QuoteStatus = defineEnum({
  name: "QuoteStatus",
  values: ["accepted", { key: "needs_review", value: "needs-review", label: "Needs manual review" }],
});

export default {
  projectName: "shop",
  workspaceId: "acme",
  apiId: "shop",
  // Field constraints (JSON Schema's keywords) are checked by `svc check` against every
  // literal, by the server against every request (400 before any node runs), and
  // published by `svc openapi`.
  ...collectAssets([
    Currency,
    QuoteStatus,
    defineStructure({
      name: "OrderLine",
      fields: [
        { name: "sku", type: "string", required: true, pattern: "^[A-Z0-9][A-Z0-9-]*$", maxLength: 32 },
        { name: "quantity", type: "number", required: true, integer: true, minimum: 1, maximum: 1000 },
        {
          name: "unitPrice",
          type: "number",
          required: true,
          minimum: 0,
          maximum: 1000000,
          description: "Price of one unit, in the order's currency",
        },
        { name: "tags", type: "string:array", maxItems: 10, maxLength: 40 },
      ],
    }),
    defineStructure({
      name: "Order",
      fields: [
        { name: "customerEmail", type: "string", required: true, format: "email", maxLength: 254 },
        { name: "currency", type: "enum-value:Currency", required: true },
        { name: "lines", type: "object:OrderLine:array", required: true, minItems: 1, maxItems: 50 },
        { name: "couponCode", type: "string", maxLength: 32 },
      ],
    }),
    defineStructure({
      name: "PricedLine",
      fields: [
        { name: "sku", type: "string", required: true },
        { name: "quantity", type: "number", required: true },
        { name: "lineTotal", type: "number", required: true },
      ],
    }),
    defineStructure({
      name: "Quote",
      fields: [
        { name: "currency", type: "enum-value:Currency", required: true },
        { name: "lines", type: "object:PricedLine:array", required: true },
        { name: "subtotal", type: "number", required: true },
        { name: "discount", type: "number", required: true },
        { name: "total", type: "number", required: true },
      ],
    }),
  ]),
};
