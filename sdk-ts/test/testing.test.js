// @svc/sdk/testing: a node run as the server runs it, in a unit test.

import { test } from "node:test";
import assert from "node:assert/strict";
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";
import { runNode } from "@svc/sdk/testing";

const greet = defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  inputs: {
    exec: seq.in(),
    name: t.string(),
    tone: t.string().default("friendly"),
    note: t.string().optional(),
  },
  outputs: { next: seq.out(), greeting: t.string(), extra: t.string().optional() },
  async run(ctx) {
    if (ctx.inputs.name === "") ctx.fail("no name", "INVALID_NAME");
    ctx.log("greeting", ctx.inputs.name, { tone: ctx.inputs.tone });
    const token = ctx.inputs.name === "secret" ? ctx.secret("TOKEN") : "";
    return { greeting: `${ctx.inputs.tone} hello, ${ctx.inputs.name}${token}` };
  },
});

test("outputs and logs, with defaults filled in", async () => {
  const run = await runNode(greet, { name: "Ada" });
  assert.deepEqual(run, { outputs: { greeting: "friendly hello, Ada" }, logs: ['greeting Ada {"tone":"friendly"}'] });
});

test("ctx.fail is a failure with its code, not an exception", async () => {
  const run = await runNode(greet, { name: "" });
  assert.deepEqual(run.failure, { message: "no name", code: "INVALID_NAME" });
  assert.equal(run.outputs, undefined);
});

test("secrets come from the test; a missing one fails the node as the server does", async () => {
  assert.equal((await runNode(greet, { name: "secret" }, { secrets: { TOKEN: "!" } })).outputs.greeting, "friendly hello, secret!");
  assert.equal((await runNode(greet, { name: "secret" })).failure.code, "SECRET_MISSING");
});

test("missing or unknown inputs, and outputs other than the declared, are refused", async () => {
  await assert.rejects(runNode(greet, {}), /required input `name` is missing/);
  await assert.rejects(runNode(greet, { name: "Ada", nmae: "x" }), /has no input `nmae`/);
  const extra = defineCodeFunctionNode({ nodeKey: "acme.extra", name: "Extra", outputs: { a: t.number() }, run: () => ({ a: 1, b: 2 }) });
  await assert.rejects(runNode(extra), /returned `b`, which is not one of its outputs/);
  const missing = defineCodeFunctionNode({ nodeKey: "acme.missing", name: "Missing", outputs: { a: t.number() }, run: () => ({}) });
  await assert.rejects(runNode(missing), /did not return its output `a`/);
  const thrower = defineCodeFunctionNode({ nodeKey: "acme.throw", name: "Throw", run: () => { throw new RangeError("boom"); } });
  await assert.rejects(runNode(thrower), RangeError);
});

test("null is a value of an `any` output, as the server takes it, and the absence of any other", async () => {
  const parse = defineCodeFunctionNode({ nodeKey: "acme.parse", name: "Parse", outputs: { value: t.any() }, run: () => ({ value: null }) });
  assert.deepEqual((await runNode(parse)).outputs, { value: null });
  const nothing = defineCodeFunctionNode({ nodeKey: "acme.nothing", name: "Nothing", outputs: { a: t.string() }, run: () => ({ a: null }) });
  await assert.rejects(runNode(nothing), /did not return its output `a`/);
});
