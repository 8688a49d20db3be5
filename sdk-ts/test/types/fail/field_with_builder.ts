// Structure fields use raw type strings, not t.* builders.
import { defineStructure, t } from "@svc/sdk";

export const line = defineStructure({
  name: "Line",
  fields: [{ name: "sku", type: t.string() }], // error: TS2322 not assignable to type 'string'
});
