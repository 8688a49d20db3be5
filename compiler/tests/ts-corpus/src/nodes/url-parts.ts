import { defineCodeFunctionNode, t } from "@svc/sdk";

// URL and URLSearchParams.
export default defineCodeFunctionNode({
  nodeKey: "corpus.url-parts",
  name: "URL parts",
  inputs: { href: t.string() },
  outputs: { host: t.string(), path: t.string(), params: t.object(), withRef: t.string() },
  run(ctx) {
    if (!URL.canParse(ctx.inputs.href)) {
      ctx.fail(`not a URL: ${ctx.inputs.href}`, "BAD_URL");
    }
    const url = new URL(ctx.inputs.href);
    const params: Record<string, string> = {};
    url.searchParams.forEach((value, key) => {
      params[key] = value;
    });
    const query = new URLSearchParams(url.search);
    query.set("ref", "svc");
    return { host: url.host, path: url.pathname, params, withRef: `${url.origin}${url.pathname}?${query}` };
  },
});
