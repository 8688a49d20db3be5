import { defineCodeFunctionNode, t } from "@svc/sdk";

const DEFAULTS = { theme: "light", pageSize: 20, beta: false };

// Object spread over defaults, destructuring with defaults, rest properties.
export default defineCodeFunctionNode({
  nodeKey: "corpus.merge-settings",
  name: "Merge settings",
  inputs: { overrides: t.object() },
  outputs: { settings: t.object(), extra: t.array(t.string()), pageSize: t.number() },
  run({ inputs }) {
    const settings = { ...DEFAULTS, ...inputs.overrides };
    const { theme, pageSize = 20, beta, ...rest } = settings as Record<string, any>;
    return { settings, extra: Object.keys(rest), pageSize: typeof pageSize === "number" ? pageSize : 20 };
  },
});
