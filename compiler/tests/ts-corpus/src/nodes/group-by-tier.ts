import { defineCodeFunctionNode, t } from "@svc/sdk";

// Map, Object.fromEntries: an object whose keys come from the data, in insertion order.
export default defineCodeFunctionNode({
  nodeKey: "corpus.group-by-tier",
  name: "Group by tier",
  inputs: { customers: t.array(t.struct("Customer")) },
  outputs: { groups: t.object(), largest: t.string().optional() },
  run({ inputs }) {
    const groups = new Map<string, string[]>();
    for (const c of inputs.customers) {
      const names = groups.get(c.tier) ?? [];
      names.push(c.firstName);
      groups.set(c.tier, names);
    }
    let largest: string | undefined;
    for (const [tier, names] of groups) {
      if (largest === undefined || names.length > (groups.get(largest)?.length ?? 0)) largest = tier;
    }
    return { groups: Object.fromEntries(groups), largest };
  },
});
