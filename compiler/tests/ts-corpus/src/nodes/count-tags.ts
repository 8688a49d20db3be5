import { defineCodeFunctionNode, t } from "@svc/sdk";

// Nested for-of with continue and break, compound assignment.
export default defineCodeFunctionNode({
  nodeKey: "corpus.count-tags",
  name: "Count tags",
  inputs: { lines: t.array(t.struct("LineItem")), stopAt: t.string().default("stop") },
  outputs: { tagged: t.number(), letters: t.number() },
  run(ctx) {
    let tagged = 0;
    let letters = 0;
    for (const line of ctx.inputs.lines) {
      if (line.tags === undefined) {
        continue;
      }
      tagged += 1;
      for (const tag of line.tags) {
        if (tag === ctx.inputs.stopAt) {
          break;
        }
        letters += tag.length;
      }
    }
    return { tagged, letters };
  },
});
