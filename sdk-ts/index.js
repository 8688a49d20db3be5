// @svc/sdk: the SDK for svc code nodes written in TypeScript or JavaScript (spec §2.2–2.8).
//
// This file is what runs; index.d.ts carries the types (pins typed from their
// builders, `run`'s result checked against the declared outputs). Both are written by
// hand so that the package installs from a path or a tarball with nothing to build.
//
// The manifests built here are byte-for-byte the JSON the Rust SDK builds for the
// same node (runtime/sdk/tests/typescript_sdk.rs compares them): keys in the same
// order, modifiers left out when they are off.

const DEFAULT_CATEGORY = "code-function";
const SEQUENCE_TYPE = "sequence";

// --- pins (spec §2.3–2.5) -------------------------------------------------------------

/** A pin under construction. Every modifier returns a new builder, so a shared
 *  `const money = t.number()` can be refined in two places without one leaking into
 *  the other. */
export class PinBuilder {
  #type;
  #items;
  #optional = false;
  #description = undefined;
  #default = undefined;
  #hasDefault = false;
  #portOnly = false;
  #allowInlineValue = false;
  #constraints = {};

  /** @internal Use the `t` and `seq` builders. */
  constructor(type, items) {
    this.#type = type;
    this.#items = items;
    this.#portOnly = type === SEQUENCE_TYPE;
    Object.freeze(this);
  }

  #with(change) {
    const next = new PinBuilder(this.#type, this.#items);
    next.#optional = this.#optional;
    next.#description = this.#description;
    next.#default = this.#default;
    next.#hasDefault = this.#hasDefault;
    next.#portOnly = this.#portOnly;
    next.#allowInlineValue = this.#allowInlineValue;
    next.#constraints = { ...this.#constraints };
    change(next);
    return next;
  }

  /** Marks the pin optional. */
  optional() {
    return this.#with((p) => {
      p.#optional = true;
    });
  }

  /** Sets the help text the Builder shows. */
  description(text) {
    requireString(text, "description(text)");
    return this.#with((p) => {
      p.#description = text;
    });
  }

  /** Sets the value used when the pin is left unwired. It must be plain JSON. */
  default(value) {
    const json = toJsonValue(value, "default(value)");
    return this.#with((p) => {
      p.#default = json;
      p.#hasDefault = true;
    });
  }

  /** Marks the pin connect-only: no inline value entry. */
  portOnly(enabled = true) {
    requireBoolean(enabled, "portOnly(enabled)");
    return this.#with((p) => {
      p.#portOnly = enabled;
    });
  }

  /** Alias of `portOnly`. */
  pinOnly(enabled = true) {
    return this.portOnly(enabled);
  }

  /** Re-enables inline value entry on a port-only pin. */
  allowInlineValue(enabled = true) {
    requireBoolean(enabled, "allowInlineValue(enabled)");
    return this.#with((p) => {
      p.#allowInlineValue = enabled;
    });
  }

  // Field constraints (JSON Schema's keywords, as on a structure field): what a valid
  // value is beyond its type. `svc check` checks literals and defaults against them and
  // refuses one that does not apply to the pin's type; a wired value is checked before
  // the node runs unless its source already guarantees them. On an array pin,
  // `minItems`, `maxItems` and `uniqueItems` hold the array and the others each item.

  #constrained(key, value) {
    return this.#with((p) => {
      p.#constraints[key] = value;
    });
  }

  /** Numbers: at least `limit`. */
  minimum(limit) {
    return this.#constrained("minimum", requireNumber(limit, "minimum(limit)"));
  }

  /** Numbers: at most `limit`. */
  maximum(limit) {
    return this.#constrained("maximum", requireNumber(limit, "maximum(limit)"));
  }

  /** Numbers: greater than `limit`. */
  exclusiveMinimum(limit) {
    return this.#constrained("exclusiveMinimum", requireNumber(limit, "exclusiveMinimum(limit)"));
  }

  /** Numbers: less than `limit`. */
  exclusiveMaximum(limit) {
    return this.#constrained("exclusiveMaximum", requireNumber(limit, "exclusiveMaximum(limit)"));
  }

  /** Numbers: a multiple of `step` (greater than 0). */
  multipleOf(step) {
    return this.#constrained("multipleOf", requireNumber(step, "multipleOf(step)"));
  }

  /** Numbers: a whole number. */
  integer() {
    return this.#constrained("integer", true);
  }

  /** Strings: at least `n` characters (Unicode code points). */
  minLength(n) {
    return this.#constrained("minLength", requireCount(n, "minLength(n)"));
  }

  /** Strings: at most `n` characters (Unicode code points). */
  maxLength(n) {
    return this.#constrained("maxLength", requireCount(n, "maxLength(n)"));
  }

  /** Strings: contains a match of this regular expression (`^…$` for the whole string). */
  pattern(pattern) {
    return this.#constrained("pattern", requireString(pattern, "pattern(pattern)"));
  }

  /** Strings: one of the formats svc checks. */
  format(format) {
    return this.#constrained("format", requireString(format, "format(format)"));
  }

  /** Arrays: at least `n` items. */
  minItems(n) {
    return this.#constrained("minItems", requireCount(n, "minItems(n)"));
  }

  /** Arrays: at most `n` items. */
  maxItems(n) {
    return this.#constrained("maxItems", requireCount(n, "maxItems(n)"));
  }

  /** Arrays: no item twice. */
  uniqueItems() {
    return this.#constrained("uniqueItems", true);
  }

  /** The type string this pin produces (`string`, `object:Order`, `type:array`, …). */
  get type() {
    return this.#type;
  }

  /** The pin as it appears in a manifest. */
  toJSON() {
    const pin = { type: this.#type };
    if (this.#items !== undefined) pin.items = this.#items;
    if (this.#optional) pin.optional = true;
    if (this.#description !== undefined) pin.description = this.#description;
    if (this.#hasDefault) pin.default = this.#default;
    if (this.#portOnly) pin.portOnly = true;
    if (this.#allowInlineValue) pin.allowInlineValue = true;
    for (const [key] of CONSTRAINT_KEYS) {
      if (this.#constraints[key] !== undefined) pin[key] = this.#constraints[key];
    }
    return pin;
  }
}

function data(type, items) {
  return new PinBuilder(type, items);
}

function named(prefix, name, call) {
  requireString(name, call);
  return data(`${prefix}:${name}`);
}

/** Data pin type builders. */
export const t = Object.freeze({
  string: () => data("string"),
  number: () => data("number"),
  boolean: () => data("boolean"),
  any: () => data("any"),
  /** `t.object()` is a generic object; `t.object("Name")` an object of a named structure. */
  object: (name) => (name === undefined ? data("object") : named("object", name, 't.object("Name")')),
  /** The explicit structure alias; the name is required. */
  struct: (name) => named("object", name, 't.struct("Name")'),
  enumValue: (name) => named("enum-value", name, 't.enumValue("Name")'),
  /** An array of another builder's type (the inner builder's modifiers are not kept:
   *  apply modifiers to the array). */
  array: (inner) => {
    if (!(inner instanceof PinBuilder) || inner.type === SEQUENCE_TYPE) {
      throw new TypeError("t.array(inner) takes a data pin builder, such as t.array(t.string())");
    }
    const { type, items } = inner.toJSON();
    return data("type:array", items === undefined ? { type } : { type, items });
  },
});

/** Sequence pin builders: they order execution and are port-only by default. */
export const seq = Object.freeze({
  in: () => new PinBuilder(SEQUENCE_TYPE),
  out: () => new PinBuilder(SEQUENCE_TYPE),
});

// --- nodes (spec §2.2) ----------------------------------------------------------------

const NODE_FIELDS = new Set(["nodeKey", "name", "description", "category", "inputs", "outputs", "run"]);

/** Defines a code node. A node module default-exports exactly one of these. */
export function defineCodeFunctionNode(definition) {
  if (definition === null || typeof definition !== "object") {
    throw new TypeError("defineCodeFunctionNode({...}) takes an object with nodeKey, name and run");
  }
  for (const field of Object.keys(definition)) {
    if (!NODE_FIELDS.has(field)) {
      throw new TypeError(`defineCodeFunctionNode: unknown field \`${field}\` (fields: ${[...NODE_FIELDS].join(", ")})`);
    }
  }
  requireString(definition.nodeKey, "nodeKey");
  requireString(definition.name, "name");
  if (definition.description !== undefined) requireString(definition.description, "description");
  if (definition.category !== undefined) requireString(definition.category, "category");
  if (typeof definition.run !== "function") {
    throw new TypeError(`node \`${definition.nodeKey}\`: \`run\` must be a function (ctx) => outputs`);
  }
  const node = {
    nodeKey: definition.nodeKey,
    name: definition.name,
    description: definition.description,
    category: definition.category ?? DEFAULT_CATEGORY,
    inputs: pinMap(definition.inputs, definition.nodeKey, "inputs"),
    outputs: pinMap(definition.outputs, definition.nodeKey, "outputs"),
    run: definition.run,
  };
  return Object.freeze(node);
}

function pinMap(pins, nodeKey, which) {
  if (pins === undefined) return Object.freeze({});
  if (pins === null || typeof pins !== "object" || Array.isArray(pins)) {
    throw new TypeError(`node \`${nodeKey}\`: \`${which}\` must be an object of pin id to pin builder`);
  }
  for (const [id, pin] of Object.entries(pins)) {
    if (!(pin instanceof PinBuilder)) {
      throw new TypeError(`node \`${nodeKey}\`: ${which}.${id} must be a pin builder, such as t.string()`);
    }
  }
  return Object.freeze({ ...pins });
}

/** The publishable manifest of a node: its definition without `run`. */
export function buildManifestFromNode(node) {
  if (node === null || typeof node !== "object" || typeof node.nodeKey !== "string") {
    throw new TypeError("buildManifestFromNode(node) takes the result of defineCodeFunctionNode");
  }
  const manifest = { nodeKey: node.nodeKey, name: node.name };
  if (node.description !== undefined) manifest.description = node.description;
  manifest.category = node.category ?? DEFAULT_CATEGORY;
  manifest.inputs = pinsJson(node.inputs);
  manifest.outputs = pinsJson(node.outputs);
  return manifest;
}

function pinsJson(pins) {
  const out = {};
  for (const [id, pin] of Object.entries(pins ?? {})) out[id] = pin.toJSON();
  return out;
}

// --- named assets (spec §2.7) ---------------------------------------------------------

const ASSET_KIND = Symbol("svc.assetKind");

function asset(kind, value) {
  Object.defineProperty(value, ASSET_KIND, { value: kind });
  return Object.freeze(value);
}

function requireAssetObject(definition, call) {
  if (definition === null || typeof definition !== "object") {
    throw new TypeError(`${call} takes an object with a name`);
  }
  requireString(definition.name, `${call}: name`);
  if (definition.description !== undefined) requireString(definition.description, `${call}: description`);
}

/** A named set of string values. Each value is a string, or `{ key, value, label }`. */
export function defineEnum(definition) {
  requireAssetObject(definition, "defineEnum({...})");
  if (!Array.isArray(definition.values)) {
    throw new TypeError(`defineEnum \`${definition.name}\`: \`values\` must be an array`);
  }
  const values = definition.values.map((v) => {
    if (typeof v === "string") return v;
    if (v !== null && typeof v === "object" && typeof v.key === "string" && typeof v.value === "string") {
      const keyed = { key: v.key, value: v.value };
      if (v.label !== undefined) keyed.label = requireString(v.label, `defineEnum \`${definition.name}\`: label`);
      return Object.freeze(keyed);
    }
    throw new TypeError(`defineEnum \`${definition.name}\`: a value is a string or { key, value, label }`);
  });
  return asset("enum", withDescription(definition, { values: Object.freeze(values) }));
}

/** A named object type. Fields use raw type strings (`string`, `enum-value:Color`,
 *  `object:Line:array`), not `t.*` builders. */
export function defineStructure(definition) {
  requireAssetObject(definition, "defineStructure({...})");
  if (!Array.isArray(definition.fields)) {
    throw new TypeError(`defineStructure \`${definition.name}\`: \`fields\` must be an array`);
  }
  const fields = definition.fields.map((f) => {
    if (f === null || typeof f !== "object" || typeof f.name !== "string" || typeof f.type !== "string") {
      throw new TypeError(
        `defineStructure \`${definition.name}\`: a field is { name, type, required?, description? } with a raw type string`,
      );
    }
    const field = { name: f.name, type: f.type };
    if (f.required !== undefined && requireBoolean(f.required, `field \`${f.name}\`: required`)) field.required = true;
    if (f.description !== undefined) field.description = requireString(f.description, `field \`${f.name}\`: description`);
    for (const [key, kind] of CONSTRAINT_KEYS) {
      if (f[key] === undefined) continue;
      const what = `field \`${f.name}\`: ${key}`;
      field[key] = kind === "boolean" ? requireBoolean(f[key], what) : kind === "string" ? requireString(f[key], what) : requireNumber(f[key], what);
    }
    return Object.freeze(field);
  });
  return asset("structure", withDescription(definition, { fields: Object.freeze(fields) }));
}

// The constraint keys a field may carry, in the order svc writes them (svc-types'
// `constraints::KEYS`; a test compares the two lists).
export const CONSTRAINT_KEYS = Object.freeze([
  ["minimum", "number"],
  ["maximum", "number"],
  ["exclusiveMinimum", "number"],
  ["exclusiveMaximum", "number"],
  ["multipleOf", "number"],
  ["integer", "boolean"],
  ["minLength", "number"],
  ["maxLength", "number"],
  ["pattern", "string"],
  ["format", "string"],
  ["minItems", "number"],
  ["maxItems", "number"],
  ["uniqueItems", "boolean"],
]);

/** Declares a secret requirement (required unless `required: false`). It holds no value. */
export function defineSecret(definition) {
  requireAssetObject(definition, "defineSecret({...})");
  const required = definition.required === undefined ? true : requireBoolean(definition.required, "required");
  return asset("secret", withDescription(definition, { required }));
}

// `name`, then `description` when given, then the rest: the Rust SDK's field order.
function withDescription(definition, rest) {
  const value = { name: definition.name };
  if (definition.description !== undefined) value.description = definition.description;
  return Object.assign(value, rest);
}

/** Sorts a mixed list of enums, structures and secrets into `enums`, `structures` and
 *  `secrets`, each in the order given. */
export function collectAssets(assets) {
  if (!Array.isArray(assets)) throw new TypeError("collectAssets(assets) takes an array");
  const collected = { enums: [], structures: [], secrets: [] };
  const lists = { enum: collected.enums, structure: collected.structures, secret: collected.secrets };
  for (const a of assets) {
    const kind = a?.[ASSET_KIND];
    if (kind === undefined) {
      throw new TypeError("collectAssets takes values made by defineEnum, defineStructure and defineSecret");
    }
    lists[kind].push(a);
  }
  return collected;
}

// --- checks on plain-JavaScript callers (TypeScript callers get these as type errors) --

function requireString(value, what) {
  if (typeof value !== "string") throw new TypeError(`${what} must be a string`);
  return value;
}

function requireNumber(value, what) {
  if (typeof value !== "number" || !Number.isFinite(value)) throw new TypeError(`${what} must be a finite number`);
  return value;
}

function requireCount(value, what) {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`${what} must be a whole number, 0 or more`);
  return value;
}

function requireBoolean(value, what) {
  if (typeof value !== "boolean") throw new TypeError(`${what} must be a boolean`);
  return value;
}

// A default is written into the manifest, so it must survive JSON unchanged: no
// functions, undefined, NaN, Infinity, class instances or cycles.
function toJsonValue(value, what, seen = new Set()) {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`${what} must be JSON: ${value} is not a JSON number`);
    return value;
  }
  if (typeof value !== "object") throw new TypeError(`${what} must be JSON, not a ${typeof value}`);
  if (seen.has(value)) throw new TypeError(`${what} must be JSON: it refers to itself`);
  seen.add(value);
  let out;
  if (Array.isArray(value)) {
    out = value.map((v) => toJsonValue(v, what, seen));
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw new TypeError(`${what} must be a plain JSON object`);
    out = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJsonValue(v, what, seen);
  }
  seen.delete(value);
  return out;
}
