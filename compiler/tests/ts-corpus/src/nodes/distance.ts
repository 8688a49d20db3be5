import { defineCodeFunctionNode, t } from "@svc/sdk";

// Math.sqrt, the exponent operator, structures in and out.
export default defineCodeFunctionNode({
  nodeKey: "corpus.distance",
  name: "Distance",
  inputs: { from: t.struct("Point"), to: t.struct("Point") },
  outputs: { distance: t.number(), midpoint: t.struct("Point") },
  run({ inputs }) {
    const dx = inputs.to.x - inputs.from.x;
    const dy = inputs.to.y - inputs.from.y;
    return {
      distance: Math.sqrt(dx ** 2 + dy ** 2),
      midpoint: { x: (inputs.from.x + inputs.to.x) / 2, y: (inputs.from.y + inputs.to.y) / 2 },
    };
  },
});
