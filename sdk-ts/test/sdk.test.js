// Unit tests of what @svc/sdk does at run time: builders, modifiers, node definitions,
// manifests and assets. (The types are tested in types.test.js; the manifests' bytes
// against the Rust SDK in runtime/sdk/tests/typescript_sdk.rs.)

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  PinBuilder,
  buildManifestFromNode,
  collectAssets,
  defineCodeFunctionNode,
  defineEnum,
  defineSecret,
  defineStructure,
  seq,
  t,
} from "@svc/sdk";

test("every builder produces its type string", () => {
  assert.equal(t.string().type, "string");
  assert.equal(t.number().type, "number");
  assert.equal(t.boolean().type, "boolean");
  assert.equal(t.any().type, "any");
  assert.equal(t.object().type, "object");
  assert.equal(t.object("Order").type, "object:Order");
  assert.equal(t.struct("Order").type, "object:Order");
  assert.equal(t.enumValue("Color").type, "enum-value:Color");
  assert.equal(t.array(t.struct("Line")).type, "type:array");
  assert.deepEqual(t.array(t.struct("Line")).toJSON(), { type: "type:array", items: { type: "object:Line" } });
  assert.deepEqual(t.array(t.array(t.number())).toJSON(), {
    type: "type:array",
    items: { type: "type:array", items: { type: "number" } },
  });
  assert.equal(seq.in().type, "sequence");
  assert.equal(seq.out().type, "sequence");
});

test("every modifier chains on every builder and shows in the manifest", () => {
  const builders = [t.string(), t.number(), t.boolean(), t.any(), t.object(), t.object("A"), t.struct("A"), t.enumValue("E"), t.array(t.string())];
  for (const b of builders) {
    const pin = b.optional().description("d").default(null).portOnly().allowInlineValue().toJSON();
    assert.equal(pin.optional, true);
    assert.equal(pin.description, "d");
    assert.equal(pin.default, null);
    assert.ok("default" in pin);
    assert.equal(pin.portOnly, true);
    assert.equal(pin.allowInlineValue, true);
  }
});

test("modifiers that are off are left out of the manifest, in the Rust SDK's key order", () => {
  assert.deepEqual(t.string().toJSON(), { type: "string" });
  const pin = t.array(t.number()).allowInlineValue().portOnly().default([1, 2]).description("d").optional().toJSON();
  assert.deepEqual(Object.keys(pin), ["type", "items", "optional", "description", "default", "portOnly", "allowInlineValue"]);
});

test("pinOnly is an alias of portOnly, and both take an optional flag", () => {
  assert.equal(t.string().portOnly().toJSON().portOnly, true);
  assert.equal(t.string().pinOnly().toJSON().portOnly, true);
  assert.equal(t.string().pinOnly(false).toJSON().portOnly, undefined);
  assert.equal(t.string().portOnly().portOnly(false).toJSON().portOnly, undefined);
  assert.equal(t.string().portOnly().allowInlineValue(false).toJSON().allowInlineValue, undefined);
});

test("sequence pins are port-only by default", () => {
  assert.deepEqual(seq.in().toJSON(), { type: "sequence", portOnly: true });
  assert.deepEqual(seq.out().toJSON(), { type: "sequence", portOnly: true });
  assert.deepEqual(seq.out().portOnly(false).toJSON(), { type: "sequence" });
});

test("builders are immutable: refining a shared builder does not change it", () => {
  const money = t.number().description("in cents");
  const price = money.default(0);
  assert.deepEqual(money.toJSON(), { type: "number", description: "in cents" });
  assert.deepEqual(price.toJSON(), { type: "number", description: "in cents", default: 0 });
  assert.ok(Object.isFrozen(money));
  assert.ok(price instanceof PinBuilder);
});

test("defaults must be plain JSON", () => {
  assert.deepEqual(t.any().default({ a: [1, "x", true, null] }).toJSON().default, { a: [1, "x", true, null] });
  for (const bad of [undefined, () => 1, NaN, Infinity, new Date(0), 1n, Symbol("s")]) {
    assert.throws(() => t.any().default(bad), TypeError);
  }
  const cycle = [];
  cycle.push(cycle);
  assert.throws(() => t.any().default(cycle), /refers to itself/);
  // The same object twice is not a cycle.
  const shared = { x: 1 };
  assert.deepEqual(t.any().default([shared, shared]).toJSON().default, [{ x: 1 }, { x: 1 }]);
});

test("plain-JavaScript misuse is a TypeError that says what to write", () => {
  assert.throws(() => t.struct(), /t\.struct\("Name"\) must be a string/);
  assert.throws(() => t.enumValue(3), /must be a string/);
  assert.throws(() => t.array("string"), /t\.array\(t\.string\(\)\)/);
  assert.throws(() => t.array(seq.in()), /data pin builder/);
  assert.throws(() => t.string().portOnly("yes"), /must be a boolean/);
  assert.throws(() => new PinBuilder("string").description(1), /must be a string/);
});

const greet = defineCodeFunctionNode({
  nodeKey: "acme.greet",
  name: "Greet",
  inputs: { exec: seq.in(), name: t.string().description("who to greet") },
  outputs: { next: seq.out(), greeting: t.string() },
  run: (ctx) => ({ greeting: `Hello, ${ctx.inputs.name}` }),
});

test("defineCodeFunctionNode keeps the definition and defaults the category", () => {
  assert.equal(greet.nodeKey, "acme.greet");
  assert.equal(greet.category, "code-function");
  assert.equal(greet.description, undefined);
  assert.deepEqual(greet.run({ inputs: { name: "Ada" } }), { greeting: "Hello, Ada" });
  assert.ok(Object.isFrozen(greet));
  const pricing = defineCodeFunctionNode({ nodeKey: "a.b", name: "B", category: "pricing", run: () => ({}) });
  assert.equal(pricing.category, "pricing");
  assert.deepEqual(pricing.inputs, {});
});

test("defineCodeFunctionNode refuses what is not a node definition", () => {
  assert.throws(() => defineCodeFunctionNode(), /takes an object/);
  assert.throws(() => defineCodeFunctionNode({ name: "x", run() {} }), /nodeKey must be a string/);
  assert.throws(() => defineCodeFunctionNode({ nodeKey: "a.b", run() {} }), /name must be a string/);
  assert.throws(() => defineCodeFunctionNode({ nodeKey: "a.b", name: "B" }), /`run` must be a function/);
  assert.throws(() => defineCodeFunctionNode({ nodeKey: "a.b", name: "B", run() {}, output: {} }), /unknown field `output`/);
  assert.throws(
    () => defineCodeFunctionNode({ nodeKey: "a.b", name: "B", run() {}, inputs: { x: "string" } }),
    /inputs\.x must be a pin builder/,
  );
  assert.throws(() => defineCodeFunctionNode({ nodeKey: "a.b", name: "B", run() {}, outputs: [] }), /`outputs` must be an object/);
});

test("buildManifestFromNode is the definition without run, in the Rust SDK's shape", () => {
  const manifest = buildManifestFromNode(greet);
  assert.equal(
    JSON.stringify(manifest),
    '{"nodeKey":"acme.greet","name":"Greet","category":"code-function",' +
      '"inputs":{"exec":{"type":"sequence","portOnly":true},"name":{"type":"string","description":"who to greet"}},' +
      '"outputs":{"next":{"type":"sequence","portOnly":true},"greeting":{"type":"string"}}}',
  );
  assert.equal("run" in manifest, false);
  assert.throws(() => buildManifestFromNode({}), /defineCodeFunctionNode/);
});

test("constraint modifiers are in the manifest in CONSTRAINT_KEYS order, and a shared builder stays unconstrained", () => {
  const quantity = t.number();
  const node = defineCodeFunctionNode({
    nodeKey: "acme.order",
    name: "Order",
    inputs: {
      quantity: quantity.maximum(1000).integer().minimum(1).optional(),
      plain: quantity,
      skus: t.array(t.string()).uniqueItems().maxLength(40).minItems(1),
      email: t.string().format("email").pattern("@example\\.com$"),
    },
    run() {
      return {};
    },
  });
  const inputs = buildManifestFromNode(node).inputs;
  assert.equal(JSON.stringify(inputs.quantity), '{"type":"number","optional":true,"minimum":1,"maximum":1000,"integer":true}');
  assert.equal(JSON.stringify(inputs.plain), '{"type":"number"}');
  assert.equal(JSON.stringify(inputs.skus), '{"type":"type:array","items":{"type":"string"},"maxLength":40,"minItems":1,"uniqueItems":true}');
  assert.equal(JSON.stringify(inputs.email), '{"type":"string","pattern":"@example\\\\.com$","format":"email"}');
  assert.throws(() => t.string().minLength(-1), /minLength\(n\) must be a whole number, 0 or more/);
  assert.throws(() => t.string().maxLength(1.5), /maxLength\(n\) must be a whole number/);
  assert.throws(() => t.number().minimum("1"), /minimum\(limit\) must be a finite number/);
  assert.throws(() => t.string().pattern(/x/), /pattern\(pattern\) must be a string/);
});

test("assets have the spec's shapes, with defaults filled as the Rust SDK fills them", () => {
  assert.equal(
    JSON.stringify(defineEnum({ values: ["EUR", { label: "US dollar", value: "USD", key: "usd" }], name: "Currency", description: "ISO 4217" })),
    '{"name":"Currency","description":"ISO 4217","values":["EUR",{"key":"usd","value":"USD","label":"US dollar"}]}',
  );
  assert.equal(
    JSON.stringify(defineStructure({ name: "Line", fields: [{ type: "string", name: "sku", required: true }, { name: "tags", type: "string:array", required: false, description: "free text" }] })),
    '{"name":"Line","fields":[{"name":"sku","type":"string","required":true},{"name":"tags","type":"string:array","description":"free text"}]}',
  );
  assert.equal(JSON.stringify(defineSecret({ name: "API_TOKEN" })), '{"name":"API_TOKEN","required":true}');
  assert.equal(defineSecret({ name: "X", required: false }).required, false);
});

test("asset helpers refuse malformed definitions", () => {
  assert.throws(() => defineEnum({ name: "E" }), /`values` must be an array/);
  assert.throws(() => defineEnum({ name: "E", values: [1] }), /a value is a string or/);
  assert.throws(() => defineStructure({ name: "S", fields: [{ name: "x", type: t.string() }] }), /raw type string/);
  assert.throws(() => defineSecret({}), /name must be a string/);
  assert.throws(() => defineSecret({ name: "S", required: "yes" }), /must be a boolean/);
});

test("collectAssets sorts by kind and keeps the order given", () => {
  const assets = collectAssets([
    defineSecret({ name: "B_KEY" }),
    defineEnum({ name: "E1", values: ["a"] }),
    defineStructure({ name: "S", fields: [] }),
    defineEnum({ name: "E2", values: ["b"] }),
    defineSecret({ name: "A_KEY" }),
  ]);
  assert.deepEqual(assets.enums.map((e) => e.name), ["E1", "E2"]);
  assert.deepEqual(assets.structures.map((s) => s.name), ["S"]);
  assert.deepEqual(assets.secrets.map((s) => s.name), ["B_KEY", "A_KEY"]);
  // Spread into the config object the way svc.config.ts does.
  const config = { projectName: "shop", ...assets };
  assert.deepEqual(Object.keys(config), ["projectName", "enums", "structures", "secrets"]);
  assert.throws(() => collectAssets([{ name: "not made by a helper" }]), /defineEnum, defineStructure and defineSecret/);
  assert.throws(() => collectAssets("x"), /takes an array/);
});
