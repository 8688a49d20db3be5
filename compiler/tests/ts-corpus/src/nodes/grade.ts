import { defineCodeFunctionNode, t } from "@svc/sdk";

// An if/else chain and a ternary chain.
export default defineCodeFunctionNode({
  nodeKey: "corpus.grade",
  name: "Grade",
  inputs: { score: t.number() },
  outputs: { grade: t.string(), passed: t.boolean() },
  run(ctx) {
    const score = Math.round(ctx.inputs.score);
    let grade: string;
    if (score >= 90) {
      grade = "A";
    } else if (score >= 80) {
      grade = "B";
    } else if (score >= 70) {
      grade = "C";
    } else {
      grade = score >= 60 ? "D" : "F";
    }
    return { grade, passed: grade !== "F" };
  },
});
