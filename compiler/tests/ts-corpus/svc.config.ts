// The TypeScript corpus (compiler/tests/e2e/ts_corpus.rs): nodes written the way the
// spec's users write TypeScript, each run under Node.js with @svc/sdk/testing and in svc
// (compiled to Rust where svc compiles it, and in the engine), whose answers must agree
// byte for byte. Only the nodes and their helpers are written here; the test adds a route
// per node to a scratch copy.
import { collectAssets, defineEnum, defineStructure } from "@svc/sdk";

export default {
  projectName: "corpus",
  workspaceId: "svc",
  apiId: "corpus",
  ...collectAssets([
    defineEnum({
      name: "Tier",
      values: ["bronze", "silver", { key: "gold", value: "gold", label: "Gold: first in line" }],
    }),
    defineEnum({ name: "Currency", values: ["EUR", "USD", "JPY"] }),
    defineStructure({
      name: "LineItem",
      fields: [
        { name: "sku", type: "string", required: true },
        { name: "quantity", type: "number", required: true },
        { name: "unitPrice", type: "number", required: true },
        { name: "tags", type: "string:array" },
      ],
    }),
    defineStructure({
      name: "Customer",
      fields: [
        { name: "firstName", type: "string", required: true },
        { name: "lastName", type: "string", required: true },
        { name: "email", type: "string" },
        { name: "age", type: "number" },
        { name: "tier", type: "enum-value:Tier", required: true },
      ],
    }),
    defineStructure({
      name: "Point",
      fields: [
        { name: "x", type: "number", required: true },
        { name: "y", type: "number", required: true },
      ],
    }),
    defineStructure({
      name: "Quote",
      fields: [
        { name: "net", type: "number", required: true },
        { name: "gross", type: "number", required: true },
        { name: "currency", type: "enum-value:Currency", required: true },
        { name: "note", type: "string" },
      ],
    }),
    // The test adds each route's request body here.
  ]),
};
