import { defineCodeFunctionNode, t } from "@svc/sdk";

// Regular expressions with replace.
export default defineCodeFunctionNode({
  nodeKey: "corpus.slugify",
  name: "Slugify",
  inputs: { title: t.string() },
  outputs: { slug: t.string() },
  run({ inputs }) {
    const slug = inputs.title
      .toLowerCase()
      .trim()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "");
    return { slug: slug || "untitled" };
  },
});
