// bench/project with its nodes in TypeScript: examples/shop-ts's config (renamed) and
// nodes (src links there), bench/project's flows (a link). svc reads this statically:
// keep it a literal.
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
  projectName: "benchshop-ts",
  workspaceId: "acme",
  apiId: "shop",
  ...collectAssets([
    Currency,
    QuoteStatus,
    defineStructure({
      name: "OrderLine",
      fields: [
        { name: "sku", type: "string", required: true },
        { name: "quantity", type: "number", required: true },
        { name: "unitPrice", type: "number", required: true, description: "Price of one unit, in the order's currency" },
        { name: "tags", type: "string:array" },
      ],
    }),
    defineStructure({
      name: "Order",
      fields: [
        { name: "customerEmail", type: "string", required: true },
        { name: "currency", type: "enum-value:Currency", required: true },
        { name: "lines", type: "object:OrderLine:array", required: true },
        { name: "couponCode", type: "string" },
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
