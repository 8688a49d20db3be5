import { defineCodeFunctionNode, t } from "@svc/sdk";

// Arithmetic, rounding to one decimal, a failure with a code.
export default defineCodeFunctionNode({
  nodeKey: "corpus.bmi",
  name: "BMI",
  inputs: { weightKg: t.number(), heightCm: t.number() },
  outputs: { bmi: t.number(), category: t.string() },
  run(ctx) {
    const { weightKg, heightCm } = ctx.inputs;
    if (heightCm <= 0 || weightKg <= 0) {
      ctx.fail("weight and height must be positive", "INVALID_MEASURE");
    }
    const metres = heightCm / 100;
    const bmi = Math.round((weightKg / (metres * metres)) * 10) / 10;
    const category = bmi < 18.5 ? "under" : bmi < 25 ? "normal" : bmi < 30 ? "over" : "obese";
    return { bmi, category };
  },
});
