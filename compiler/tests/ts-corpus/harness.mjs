// What Node.js answers for every case of the corpus: `node harness.mjs OUT_DIR CASES`
// prints, as JSON, the nodes' manifests and one record per case: the node, the request body that carries its
// inputs, and the answer its route must give (compiler/tests/e2e/ts_corpus.rs sends the same inputs to svc's server).
//
// OUT_DIR holds the corpus as tsc compiled it (`svc.config.js`, `src/nodes/*.js`), with
// `@svc/sdk` resolvable from it. Each node runs with @svc/sdk/testing's `runNode`, the
// way its users' unit tests run it, on the cases of CASES (written by hand for the
// edges) and on inputs generated from its pins (seeded by the node key, so every run
// generates the same ones).
//
// The answer is the route's: 200 with `{ <output>: value, … }` in the order the node
// declares its outputs, 422 with `{ "failure": { "message", "code" } }` after
// `ctx.fail` (a Return JSON body writes an absent value as `null`: docs/flow-format.md),
// or 500 when `run` throws or returns what its output pins cannot hold (a number that is
// not finite, a string with a lone surrogate, which no UTF-8 text holds), as svc's
// server answers each.

import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildManifestFromNode } from "@svc/sdk";
import { runNode } from "@svc/sdk/testing";

const [outDir, casesFile] = process.argv.slice(2);
const config = (await import(pathToFileURL(join(outDir, "svc.config.js")).href)).default;
const handWritten = JSON.parse(readFileSync(casesFile, "utf8"));
const structures = new Map(config.structures.map((s) => [s.name, s]));
const enums = new Map(config.enums.map((e) => [e.name, e.values.map((v) => (typeof v === "string" ? v : v.value))]));

const GENERATED_PER_NODE = 6;

// --- inputs generated from pins --------------------------------------------------------

function prng(seedText) {
  let seed = 2166136261;
  for (const c of seedText) seed = Math.imul(seed ^ c.codePointAt(0), 16777619) >>> 0;
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let x = seed;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = [
  "", "a", "Ada Lovelace", "  padded\t", "straße", "ÉCOLE", "😀 emoji", "SKU-123", "OLD-B9-X",
  "https://example.com/a/b?x=1&y=two#f", '{"a":1,"b":[true,null]}', "[1,2", "stop", "sale",
  "ada@Example.com", "İstanbul", "x".repeat(40), "line\nbreak", "tab\tand \"quotes\"",
];
const NUMBERS = [
  0, -0, 1, -1, 0.1, 0.5, 2.5, -2.5, 3, 7, 10, 18, 42, 99.99, 100, 1e21, 1e-7, 123456789.123,
  9007199254740993, -17, 0.30000000000000004, 1.005, 5e-324, 1.7976931348623157e308,
];
const KEYS = ["b", "a", "2", "10", "1", "zeta", "pageSize", "theme", "ünï", "$ref"];

function pick(rnd, list) {
  return list[Math.floor(rnd() * list.length)];
}

function generate(type, items, rnd, depth) {
  if (type === "type:array" || type.endsWith(":array")) {
    const inner = type === "type:array" ? items.type : type.slice(0, -":array".length);
    const innerItems = type === "type:array" ? items.items : undefined;
    const n = Math.floor(rnd() * (depth > 1 ? 2 : 5));
    return Array.from({ length: n }, () => generate(inner, innerItems, rnd, depth + 1));
  }
  if (type === "string") return rnd() < 0.8 ? pick(rnd, STRINGS) : Math.floor(rnd() * 1e6).toString(36);
  if (type === "number") return rnd() < 0.7 ? pick(rnd, NUMBERS) : Math.round((rnd() - 0.5) * 2000) / 8;
  if (type === "boolean") return rnd() < 0.5;
  if (type.startsWith("enum-value:")) return pick(rnd, enums.get(type.slice("enum-value:".length)));
  if (type.startsWith("object:")) {
    const out = {};
    for (const f of structures.get(type.slice("object:".length)).fields) {
      if (f.required || rnd() < 0.6) out[f.name] = generate(f.type, undefined, rnd, depth + 1);
    }
    return out;
  }
  if (type === "object") {
    // In the order a client wrote them, which JavaScript's own order (integer-like keys
    // first, ascending) may not be: the request's text keeps it.
    const entries = [];
    const n = Math.floor(rnd() * 4);
    for (let i = 0; i < n; i++) {
      const key = pick(rnd, KEYS);
      if (!entries.some(([k]) => k === key)) entries.push([key, scalar(rnd)]);
    }
    return new Written(entries);
  }
  if (type === "any") {
    const r = rnd();
    if (r < 0.3 && depth < 2) return generate("object", undefined, rnd, depth + 1);
    if (r < 0.45 && depth < 2) return Array.from({ length: Math.floor(rnd() * 3) }, () => scalar(rnd));
    return scalar(rnd);
  }
  throw new Error(`no generator for \`${type}\``);
}

function scalar(rnd) {
  const r = rnd();
  if (r < 0.35) return pick(rnd, STRINGS);
  if (r < 0.7) return pick(rnd, NUMBERS);
  if (r < 0.85) return rnd() < 0.5;
  return null;
}

function generatedInputs(manifest, rnd) {
  const inputs = {};
  for (const [id, pin] of Object.entries(manifest.inputs)) {
    if (pin.type === "sequence") continue;
    if ((pin.optional || "default" in pin) && rnd() < 0.3) continue;
    inputs[id] = generate(pin.type, pin.items, rnd, 0);
  }
  return inputs;
}

/** An object as a client wrote it: its entries in the order of the request's text. */
class Written {
  constructor(entries) {
    this.entries = entries;
  }
}

/** The JSON text of a request body, with `-0` kept and objects in their written order. */
function toJson(value) {
  if (value instanceof Written) {
    return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(",")}}`;
  }
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
  if (Object.is(value, -0)) return "-0";
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

// --- the answer a route gives ----------------------------------------------------------

/** Whether `value` is what a pin of `type` holds on the server: numbers finite,
 *  strings well-formed UTF-16 (so that they are UTF-8 text). */
function holds(type, items, value) {
  if (value === undefined || value === null) return true;
  if (typeof value === "string") return value.isWellFormed();
  if (type === "number") return Number.isFinite(value);
  if (type === "any" || type === "object") {
    if (Array.isArray(value)) return value.every((v) => holds("any", undefined, v));
    if (typeof value === "object") return Object.values(value).every((v) => holds("any", undefined, v));
    return true;
  }
  if (type === "type:array" || type.endsWith(":array")) {
    const inner = type === "type:array" ? items.type : type.slice(0, -":array".length);
    return value.every((v) => holds(inner, type === "type:array" ? items.items : undefined, v));
  }
  if (type.startsWith("object:")) {
    return structures.get(type.slice("object:".length)).fields.every((f) => holds(f.type, undefined, value[f.name]));
  }
  return true;
}

async function answer(node, manifest, body) {
  let result;
  try {
    // The inputs as the server reads them: parsed from the request's text.
    result = await runNode(node, JSON.parse(body));
  } catch (error) {
    return { status: 500, why: String(error).toWellFormed() };
  }
  if (result.failure) {
    const failure = { message: result.failure.message, code: result.failure.code ?? null };
    return { status: 422, body: JSON.stringify({ failure }) };
  }
  const answered = {};
  for (const [id, pin] of Object.entries(manifest.outputs)) {
    if (pin.type === "sequence") continue;
    const value = result.outputs[id];
    if (!holds(pin.type, pin.items, value)) return { status: 500, why: `output \`${id}\` is ${String(value).toWellFormed()}` };
    answered[id] = value ?? null;
  }
  return { status: 200, body: JSON.stringify(answered) };
}

// --- every case of every node ------------------------------------------------------------

const manifests = [];
const records = [];
const nodesDir = join(outDir, "src", "nodes");
for (const file of readdirSync(nodesDir).filter((f) => f.endsWith(".js")).sort()) {
  const node = (await import(pathToFileURL(join(nodesDir, file)).href)).default;
  const manifest = buildManifestFromNode(node);
  manifests.push(manifest);
  const rnd = prng(node.nodeKey);
  const cases = [...(handWritten[node.nodeKey] ?? [])];
  for (let i = 0; i < GENERATED_PER_NODE; i++) cases.push(generatedInputs(manifest, rnd));
  for (const inputs of cases) {
    const body = toJson(inputs);
    records.push({ node: node.nodeKey, body, answer: await answer(node, manifest, body) });
  }
}
process.stdout.write(JSON.stringify({ manifests, records }));
