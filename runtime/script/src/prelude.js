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
 * A node's `ctx`. Read-only as a frozen object would be (assigning to one of its fields
 * or adding one throws), without freezing one object per call: the fields are getters of
 * a frozen prototype over private fields, and each instance is made non-extensible.
 */
class Context {
  #inputs;
  #request;
  #env;
  constructor(inputs, request, env) {
    this.#inputs = inputs;
    this.#request = request ?? undefined;
    this.#env = env;
    Object.preventExtensions(this);
  }
  get inputs() {
    return this.#inputs;
  }
  get request() {
    return this.#request;
  }
  get env() {
    return this.#env;
  }
}
// Plain functions, so that `const { log, fail } = ctx` works as with an object literal.
for (const [name, value] of Object.entries({ secret, log, fail })) {
  Object.defineProperty(Context.prototype, name, { value, enumerable: true });
}
Object.freeze(Context.prototype);
Object.freeze(Context);

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
 * Calls `run` with a fresh context. A synchronous `run` settles at once: to its outputs
 * (read by the engine as JSON.stringify would write them, convert.rs), or to a `Stopped`.
 * An async one (or one returning a promise) gives a promise of either.
 */
export function invoke(run, inputs, request, env, keepLogs) {
  logging = keepLogs;
  let result;
  try {
    result = run(new Context(inputs, request, env));
  } catch (error) {
    return thrown(error);
  }
  if (result !== null && typeof result === "object" && typeof result.then === "function") {
    return Promise.resolve(result).then(undefined, thrown);
  }
  return result;
}
