// @svc/sdk/testing is typed from the node: outputs by their pins, failures by shape.
import { defineCodeFunctionNode, t } from "@svc/sdk";
import { runNode } from "@svc/sdk/testing";

const double = defineCodeFunctionNode({
  nodeKey: "acme.double",
  name: "Double",
  inputs: { x: t.number(), by: t.number().default(2) },
  outputs: { y: t.number() },
  run: (ctx) => ({ y: ctx.inputs.x * ctx.inputs.by }),
});

export async function example(): Promise<number> {
  const run = await runNode(double, { x: 21 }, { secrets: { TOKEN: "t" } });
  if (run.failure !== undefined) return run.failure.code === undefined ? -1 : run.failure.message.length;
  const lines: string[] = run.logs;
  return run.outputs.y + lines.length;
}
