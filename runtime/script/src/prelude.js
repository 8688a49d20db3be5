// svc:host, the glue between the server and a node's `run(ctx)`. Compiled to bytecode
// with the project's modules; it runs in a context without `eval`.
//
// `host` is installed by the engine (engine.rs `install_host`, Rust functions that act for
// the current call): `secret` and `log` here, `url`, `urlSet`, `randomBytes` and `fetch`
// for the web globals of web.js, which is appended to this module. Everything a node sees
// is built here, per call.

const host = globalThis.__svc_host;
delete globalThis.__svc_host;

const FAILURE = Symbol("svc.failure");

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

function line(args) {
  return args.map(text).join(" ");
}

/** `ctx.fail(message, code?)`: a structured failure, thrown (spec §2.6). */
function fail(message, code) {
  const failure = new Error(String(message));
  failure[FAILURE] = true;
  failure.code = code === undefined || code === null ? undefined : String(code);
  throw failure;
}

/** Whether the current call's log lines are read (a log subscriber or the dev trace):
 *  when not, `ctx.log` and `console` do not even format them. Set by `invoke`. */
let logging = true;

/** `ctx.log(...args)`, and `console`'s methods. */
function log(...args) {
  if (logging) host.log(line(args));
}

// `console` writes into the node's log, like `ctx.log`.
globalThis.console = Object.freeze({ log, info: log, warn: log, error: log, debug: log });

/** `ctx.secret(name)`: the current call's secret (the host knows which call runs). */
function secret(name) {
  const value = host.secret(String(name));
  if (value === undefined) fail(`secret \`${name}\` is not available`, "SECRET_MISSING");
  return value;
}

/**
 * The prototype of every node's `ctx`. The engine makes each call's `ctx` (engine.rs
 * `context`) as a frozen object of this prototype with `inputs`, `request` and `env`, as
 * `Object.freeze` would make it of an object literal but without a second pass over it.
 * The functions are plain, so `const { log, fail } = ctx` works.
 */
export const context = Object.freeze(
  Object.create(Object.prototype, {
    secret: { value: secret, enumerable: true },
    log: { value: log, enumerable: true },
    fail: { value: fail, enumerable: true },
  }),
);

/** How a call ended when it did not return outputs: the engine knows it by its
 *  prototype (`stopped`), which node code cannot reach. */
class Stopped {
  constructor(failure, message, code) {
    this.failure = failure;
    this.message = message;
    this.code = code;
  }
}

/** The prototype the engine compares a settled value's with. */
export const stopped = Stopped.prototype;

function thrown(error) {
  return error !== null && typeof error === "object" && error[FAILURE] === true
    ? new Stopped(true, error.message, error.code)
    : new Stopped(false, error instanceof Error ? `${error.name}: ${error.message}` : text(error), undefined);
}

/**
 * Calls `run` with this call's `ctx`. A synchronous `run` settles at once: to its outputs
 * (read by the engine as JSON.stringify would write them, convert.rs), or to a `Stopped`.
 * An async one (or one returning a promise) gives a promise of either.
 */
export function invoke(run, ctx, keepLogs) {
  logging = keepLogs;
  let result;
  try {
    result = run(ctx);
  } catch (error) {
    return thrown(error);
  }
  if (result !== null && typeof result === "object" && typeof result.then === "function") {
    return Promise.resolve(result).then(undefined, thrown);
  }
  return result;
}

/**
 * Makes what every call of every node shares unchangeable, once, before any node module
 * loads: one engine runtime serves all calls on a thread, so a call that added to
 * `Object.prototype` (a `__proto__` merged from request JSON, or on purpose), replaced a
 * global or set `Object.prototype.then` would change what every later call sees, for
 * other users too (docs/security.md). Every object reachable from `globalThis` and the
 * intrinsics only reachable through syntax (iterators, generators, async functions,
 * typed arrays) is frozen, as SES's `lockdown()` hardens them.
 *
 * Freezing alone breaks ordinary code through JavaScript's "override mistake": with
 * `Error.prototype.name` read-only, `this.name = "MyError"` in a subclass throws. As SES
 * does ("moderate" enablements), the properties code commonly sets on its own objects
 * become accessors on the prototypes they would come from: reading gives the shared
 * value, assigning on an object that inherits it gives that object its own property,
 * and assigning on the prototype itself throws. Only those: an accessor costs a call
 * where the engine reads the property itself (`Array.prototype.constructor` on every
 * `map`: 825 instructions a call more with every prototype converted, docs/performance.md).
 */
export function lockdown() {
  const errors = ["name", "message", "constructor", "toString"];
  const overridable = new Map([
    [Object.prototype, ["constructor", "toString", "valueOf", "toLocaleString"]],
    [Function.prototype, ["toString"]],
    [Error.prototype, errors],
    ...[EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError].map((e) => [
      e.prototype,
      errors,
    ]),
  ]);
  const syntaxOnly = [
    Object.getPrototypeOf(function* () {}),
    Object.getPrototypeOf(async function () {}),
    Object.getPrototypeOf(async function* () {}),
    Object.getPrototypeOf([][Symbol.iterator]()),
    Object.getPrototypeOf(new Map()[Symbol.iterator]()),
    Object.getPrototypeOf(new Set()[Symbol.iterator]()),
    Object.getPrototypeOf(""[Symbol.iterator]()),
    Object.getPrototypeOf(/x/[Symbol.matchAll]("")),
    Object.getPrototypeOf(Uint8Array),
  ];
  const seen = new Set();
  const stack = [globalThis, ...syntaxOnly];
  const order = [];
  while (stack.length > 0) {
    const object = stack.pop();
    if (object === null || (typeof object !== "object" && typeof object !== "function") || seen.has(object)) {
      continue;
    }
    seen.add(object);
    order.push(object);
    for (const key of Reflect.ownKeys(object)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(object, key);
      if ("value" in descriptor) {
        stack.push(descriptor.value);
      } else {
        stack.push(descriptor.get, descriptor.set);
      }
    }
    stack.push(Object.getPrototypeOf(object));
  }
  for (const [prototype, keys] of overridable) {
    for (const key of keys) {
      const descriptor = Reflect.getOwnPropertyDescriptor(prototype, key);
      if (descriptor === undefined || !("value" in descriptor) || !descriptor.configurable) continue;
      const value = descriptor.value;
      Object.defineProperty(prototype, key, {
        get() {
          return value;
        },
        set(next) {
          if (this === prototype) {
            throw new TypeError(`Cannot assign to read only property '${key}' of a shared prototype`);
          }
          Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
        },
        enumerable: descriptor.enumerable,
        configurable: false,
      });
    }
  }
  for (const object of order) Object.freeze(object);
}
