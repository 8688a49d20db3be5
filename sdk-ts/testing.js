// @svc/sdk/testing: runs a node's `run(ctx)` in a unit test, under Node's test runner or
// any other, the way the server runs it: inputs completed with the pins' defaults, a
// `ctx` whose `fail` is the node's structured failure, `log` lines collected, secrets
// given by the test, and the outputs checked against the declared output pins.
//
// The Rust SDK's `svc_sdk::testing::TestHost` does the same for Rust nodes.

import { buildManifestFromNode } from "./index.js";

const FAILURE = Symbol("svc.testing.failure");

function text(value) {
  if (typeof value === "string") return value;
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    const json = JSON.stringify(value);
    return json === undefined ? String(value) : json;
  } catch {
    return String(value);
  }
}

function fail(message, code) {
  const failure = new Error(String(message));
  failure[FAILURE] = true;
  failure.code = code === undefined || code === null ? undefined : String(code);
  throw failure;
}

/** The data pins (not sequence pins) of a manifest's pin map. */
function dataPins(pins) {
  return Object.entries(pins).filter(([, pin]) => pin.type !== "sequence");
}

/**
 * Runs `node` with `inputs`. Resolves to `{ outputs, logs }` when `run` returns, or
 * `{ failure: { message, code }, logs }` when it calls `ctx.fail`. An exception from
 * `run`, or outputs that are not exactly the declared data outputs, reject (as the
 * server answers 500 for them).
 *
 * Options: `secrets` (name → value), `env` (added to `isDev: true`, `version` and
 * `gitSha` "test"), `request` (`ctx.request`).
 */
export async function runNode(node, inputs = {}, options = {}) {
  const manifest = buildManifestFromNode(node);
  const secrets = options.secrets ?? {};
  const complete = { ...inputs };
  for (const [id, pin] of dataPins(manifest.inputs)) {
    if (complete[id] === undefined && "default" in pin) complete[id] = structuredClone(pin.default);
    if (complete[id] === undefined && !pin.optional) {
      throw new TypeError(`node \`${node.nodeKey}\`: the required input \`${id}\` is missing`);
    }
  }
  for (const id of Object.keys(complete)) {
    if (!(id in manifest.inputs)) throw new TypeError(`node \`${node.nodeKey}\` has no input \`${id}\``);
  }
  const logs = [];
  const ctx = Object.freeze({
    inputs: complete, // the node's own copy, as on the server
    request: options.request,
    env: Object.freeze({ isDev: true, version: "test", gitSha: "test", ...options.env }),
    secret(name) {
      if (!Object.prototype.hasOwnProperty.call(secrets, name)) {
        fail(`secret \`${name}\` is not available`, "SECRET_MISSING");
      }
      return String(secrets[name]);
    },
    log: (...args) => logs.push(args.map(text).join(" ")),
    fail,
  });
  let outputs;
  try {
    outputs = await node.run(ctx);
  } catch (error) {
    if (error !== null && typeof error === "object" && error[FAILURE] === true) {
      return { failure: { message: error.message, code: error.code }, logs };
    }
    throw error;
  }
  checkOutputs(node.nodeKey, manifest.outputs, outputs);
  return { outputs, logs };
}

function checkOutputs(nodeKey, declared, outputs) {
  if (outputs === null || typeof outputs !== "object" || Array.isArray(outputs)) {
    throw new TypeError(`node \`${nodeKey}\` returned ${text(outputs)}, not an object of its outputs`);
  }
  const pins = dataPins(declared);
  for (const [id, pin] of pins) {
    // `null` is a value of an `any` pin (JSON's null), and the absence of any other.
    const missing = outputs[id] === undefined || (outputs[id] === null && pin.type !== "any");
    if (missing && !pin.optional) {
      throw new TypeError(`node \`${nodeKey}\` did not return its output \`${id}\``);
    }
  }
  for (const id of Object.keys(outputs)) {
    if (!pins.some(([declaredId]) => declaredId === id)) {
      throw new TypeError(`node \`${nodeKey}\` returned \`${id}\`, which is not one of its outputs`);
    }
  }
}
