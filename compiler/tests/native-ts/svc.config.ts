// A project for compiler/tests/e2e/native.rs: TypeScript nodes that use every construct
// svc compiles to Rust, served once as compiled and once in the engine
// (SVC_TYPESCRIPT=engine), which must answer every request alike.
import { collectAssets, defineEnum, defineStructure } from "@svc/sdk";

export default {
  projectName: "conformance",
  workspaceId: "svc",
  apiId: "conformance",
  ...collectAssets([
    defineEnum({ name: "Kind", values: ["plain", { key: "fancy_one", value: "fancy-one" }] }),
    defineStructure({
      name: "Pair",
      fields: [
        { name: "a", type: "number", required: true },
        { name: "b", type: "number", required: true },
      ],
    }),
    defineStructure({
      name: "Texts",
      fields: [
        { name: "s", type: "string", required: true },
        { name: "t", type: "string", required: true },
      ],
    }),
    defineStructure({
      name: "Maybe",
      fields: [
        { name: "label", type: "string" },
        { name: "n", type: "number" },
        { name: "kind", type: "enum-value:Kind" },
      ],
    }),
    defineStructure({
      name: "Item",
      fields: [
        { name: "name", type: "string", required: true },
        { name: "price", type: "number", required: true },
        { name: "kind", type: "enum-value:Kind", required: true },
        { name: "tags", type: "string:array" },
      ],
    }),
    defineStructure({
      name: "Basket",
      fields: [
        { name: "items", type: "object:Item:array", required: true },
        { name: "code", type: "string" },
        { name: "wanted", type: "string" },
      ],
    }),
    defineStructure({
      name: "Summary",
      fields: [
        { name: "names", type: "string:array", required: true },
        { name: "total", type: "number", required: true },
        { name: "kind", type: "enum-value:Kind", required: true },
        { name: "code", type: "string" },
      ],
    }),
  ]),
};
