// The web globals of the Worker model that node code may use (issue 12): URL,
// URLSearchParams, TextEncoder, TextDecoder, atob, btoa, crypto, structuredClone,
// Headers, Request, Response and fetch. Appended to `svc:host` (prelude.js), whose
// `host` gives the Rust side: URL parsing (the `url` crate, WHATWG rules), random bytes,
// and `fetch` over the runtime's HTTP client with its timeout and size limits.
//
// Bodies cross to Rust as "binary strings" (one char per byte, U+0000–U+00FF).

function define(name, value) {
  Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
}

// --- bytes ----------------------------------------------------------------------------

function bytesOf(value, what) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(`${what} must be an ArrayBuffer or a typed array`);
}

function toBinaryString(bytes) {
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    out += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
  }
  return out;
}

function fromBinaryString(text) {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
  return bytes;
}

// --- TextEncoder / TextDecoder (UTF-8) ------------------------------------------------

function utf8Encode(text) {
  const out = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      } else c = 0xfffd;
    } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return new Uint8Array(out);
}

function utf8Decode(bytes, fatal) {
  let out = "";
  let i = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const bad = () => {
    if (fatal) throw new TypeError("The encoded data was not valid UTF-8");
    out += "\ufffd";
  };
  while (i < bytes.length) {
    const b = bytes[i];
    let need = 0;
    let c = 0;
    let min = 0;
    if (b < 0x80) {
      out += String.fromCharCode(b);
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) [need, c, min] = [1, b & 31, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [need, c, min] = [2, b & 15, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [need, c, min] = [3, b & 7, 0x10000];
    else {
      bad();
      i++;
      continue;
    }
    let j = 1;
    for (; j <= need && i + j < bytes.length && (bytes[i + j] & 0xc0) === 0x80; j++) c = (c << 6) | (bytes[i + j] & 63);
    if (j <= need || c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
      bad();
      i += j;
      continue;
    }
    out += String.fromCodePoint(c);
    i += need + 1;
  }
  return out;
}

class TextEncoder {
  get encoding() {
    return "utf-8";
  }
  encode(input = "") {
    return utf8Encode(String(input));
  }
}

class TextDecoder {
  #fatal;
  constructor(label = "utf-8", options = {}) {
    const name = String(label).trim().toLowerCase();
    if (name !== "utf-8" && name !== "utf8" && name !== "unicode-1-1-utf-8") {
      throw new RangeError(`TextDecoder: the encoding \`${label}\` is not supported (only utf-8)`);
    }
    this.#fatal = Boolean(options.fatal);
  }
  get encoding() {
    return "utf-8";
  }
  get fatal() {
    return this.#fatal;
  }
  decode(input) {
    return input === undefined ? "" : utf8Decode(bytesOf(input, "TextDecoder.decode(input)"), this.#fatal);
  }
}

// --- base64 ---------------------------------------------------------------------------

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function btoa(data) {
  const text = String(data);
  let out = "";
  for (let i = 0; i < text.length; i += 3) {
    const a = text.charCodeAt(i);
    const b = text.charCodeAt(i + 1);
    const c = text.charCodeAt(i + 2);
    if (a > 255 || b > 255 || c > 255) {
      throw new DOMException("btoa: the string has characters outside of Latin1", "InvalidCharacterError");
    }
    const n = (a << 16) | ((b || 0) << 8) | (c || 0);
    out += B64[n >> 18] + B64[(n >> 12) & 63];
    out += i + 1 < text.length ? B64[(n >> 6) & 63] : "=";
    out += i + 2 < text.length ? B64[n & 63] : "=";
  }
  return out;
}

function atob(data) {
  let text = String(data).replace(/[\t\n\f\r ]/g, "");
  if (text.length % 4 === 0) text = text.replace(/==?$/, "");
  if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text)) {
    throw new DOMException("atob: the string is not valid base64", "InvalidCharacterError");
  }
  let out = "";
  let bits = 0;
  let value = 0;
  for (const ch of text) {
    value = (value << 6) | B64.indexOf(ch);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += String.fromCharCode((value >> bits) & 255);
    }
  }
  return out;
}

// --- URLSearchParams and URL ----------------------------------------------------------

function formEncode(text) {
  return encodeURIComponent(text)
    .replace(/[!'()~]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/%20/g, "+");
}

function formDecode(text) {
  const spaced = text.replace(/\+/g, " ");
  try {
    return decodeURIComponent(spaced);
  } catch {
    return utf8Decode(
      fromBinaryString(spaced.replace(/%([0-9A-Fa-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)))),
      false,
    );
  }
}

let linkedParams;
let resetParams;

class URLSearchParams {
  #list = [];
  #onChange = null;

  constructor(init = "") {
    if (init instanceof URLSearchParams) this.#list = init.#list.map(([k, v]) => [k, v]);
    else if (Array.isArray(init) || (init !== null && typeof init === "object" && Symbol.iterator in init)) {
      for (const pair of init) {
        const [k, v, ...rest] = [...pair];
        if (rest.length > 0 || v === undefined) throw new TypeError("URLSearchParams: each pair needs a name and a value");
        this.#list.push([String(k), String(v)]);
      }
    } else if (init !== null && typeof init === "object") {
      for (const [k, v] of Object.entries(init)) this.#list.push([k, String(v)]);
    } else this.#parse(String(init));
  }

  #parse(text) {
    this.#list = [];
    for (const part of text.replace(/^\?/, "").split("&")) {
      if (part === "") continue;
      const eq = part.indexOf("=");
      const name = eq < 0 ? part : part.slice(0, eq);
      const value = eq < 0 ? "" : part.slice(eq + 1);
      this.#list.push([formDecode(name), formDecode(value)]);
    }
  }

  #changed() {
    if (this.#onChange !== null) this.#onChange(this.toString());
  }

  static {
    // For URL only (module-private): a `searchParams` whose changes update its URL.
    linkedParams = (text, onChange) => {
      const params = new URLSearchParams(text);
      params.#onChange = onChange;
      return params;
    };
    resetParams = (params, text) => params.#parse(text);
  }

  get size() {
    return this.#list.length;
  }
  append(name, value) {
    this.#list.push([String(name), String(value)]);
    this.#changed();
  }
  delete(name, value) {
    this.#list = this.#list.filter(([k, v]) => !(k === String(name) && (value === undefined || v === String(value))));
    this.#changed();
  }
  get(name) {
    const found = this.#list.find(([k]) => k === String(name));
    return found === undefined ? null : found[1];
  }
  getAll(name) {
    return this.#list.filter(([k]) => k === String(name)).map(([, v]) => v);
  }
  has(name, value) {
    return this.#list.some(([k, v]) => k === String(name) && (value === undefined || v === String(value)));
  }
  set(name, value) {
    const key = String(name);
    const index = this.#list.findIndex(([k]) => k === key);
    if (index < 0) this.#list.push([key, String(value)]);
    else {
      this.#list[index] = [key, String(value)];
      this.#list = this.#list.filter(([k], i) => k !== key || i === index);
    }
    this.#changed();
  }
  sort() {
    this.#list = this.#list
      .map((pair, i) => [pair, i])
      .sort(([a, i], [b, j]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : i - j))
      .map(([pair]) => pair);
    this.#changed();
  }
  forEach(callback, thisArg) {
    for (const [k, v] of this.#list) callback.call(thisArg, v, k, this);
  }
  *entries() {
    for (const [k, v] of this.#list) yield [k, v];
  }
  *keys() {
    for (const [k] of this.#list) yield k;
  }
  *values() {
    for (const [, v] of this.#list) yield v;
  }
  [Symbol.iterator]() {
    return this.entries();
  }
  toString() {
    return this.#list.map(([k, v]) => `${formEncode(k)}=${formEncode(v)}`).join("&");
  }
}

/** Each URL's parsed parts and its linked `searchParams`, out of reach of node code. */
const URL_STATE = new WeakMap();

function urlState(url) {
  const state = URL_STATE.get(url);
  if (state === undefined) throw new TypeError("not a URL");
  return state;
}

function parseUrl(url, base) {
  const parsed = host.url(String(url), base === undefined ? undefined : String(base));
  return parsed === undefined ? undefined : JSON.parse(parsed);
}

class URL {
  constructor(url, base) {
    const parts = parseUrl(url, base);
    if (parts === undefined) throw new TypeError(`Invalid URL: ${String(url)}`);
    const state = { parts, searchParams: null };
    state.searchParams = linkedParams(parts.search, (query) => setUrlPart(state, "search", query, false));
    URL_STATE.set(this, state);
  }

  static canParse(url, base) {
    return parseUrl(url, base) !== undefined;
  }

  static parse(url, base) {
    const parts = parseUrl(url, base);
    return parts === undefined ? null : new URL(parts.href);
  }

  get searchParams() {
    return urlState(this).searchParams;
  }
  toString() {
    return urlState(this).parts.href;
  }
  toJSON() {
    return urlState(this).parts.href;
  }
}

/** Sets one part through the `url` crate's setters (WHATWG rules); an invalid value
 *  is ignored, as browsers do, except for `href`. */
function setUrlPart(state, part, value, relink) {
  const updated = host.urlSet(state.parts.href, part, String(value));
  if (updated === undefined) {
    if (part === "href") throw new TypeError(`Invalid URL: ${String(value)}`);
    return;
  }
  state.parts = JSON.parse(updated);
  if (relink) resetParams(state.searchParams, state.parts.search);
}

for (const part of ["href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"]) {
  Object.defineProperty(URL.prototype, part, {
    get() {
      return urlState(this).parts[part];
    },
    set:
      part === "origin"
        ? undefined
        : function (value) {
            setUrlPart(urlState(this), part, value, true);
          },
    enumerable: true,
    configurable: true,
  });
}

// --- crypto ---------------------------------------------------------------------------

const crypto = Object.freeze({
  getRandomValues(array) {
    if (!ArrayBuffer.isView(array) || array instanceof Float32Array || array instanceof Float64Array || array instanceof DataView) {
      throw new TypeError("crypto.getRandomValues takes an integer typed array");
    }
    if (array.byteLength > 65536) {
      throw new DOMException("crypto.getRandomValues: at most 65536 bytes at a time", "QuotaExceededError");
    }
    const random = fromBinaryString(host.randomBytes(array.byteLength));
    new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(random);
    return array;
  },
  randomUUID() {
    const b = fromBinaryString(host.randomBytes(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  },
});

// --- structuredClone ------------------------------------------------------------------

function structuredClone(value) {
  const seen = new Map();
  const clone = (v) => {
    if (v === null || (typeof v !== "object" && typeof v !== "function" && typeof v !== "symbol")) return v;
    if (typeof v === "function" || typeof v === "symbol") {
      throw new DOMException(`${String(v)} could not be cloned`, "DataCloneError");
    }
    if (seen.has(v)) return seen.get(v);
    let out;
    if (v instanceof Date) out = new Date(v.getTime());
    else if (v instanceof RegExp) out = new RegExp(v.source, v.flags);
    else if (v instanceof ArrayBuffer) out = v.slice(0);
    else if (ArrayBuffer.isView(v)) {
      out = v instanceof DataView ? new DataView(v.buffer.slice(0)) : new v.constructor(v);
    } else if (v instanceof Map) {
      out = new Map();
      seen.set(v, out);
      for (const [k, x] of v) out.set(clone(k), clone(x));
      return out;
    } else if (v instanceof Set) {
      out = new Set();
      seen.set(v, out);
      for (const x of v) out.add(clone(x));
      return out;
    } else if (v instanceof Error) {
      out = new (globalThis[v.name] ?? Error)(v.message);
    } else if (Array.isArray(v)) {
      out = [];
      seen.set(v, out);
      for (let i = 0; i < v.length; i++) if (i in v) out[i] = clone(v[i]);
      return out;
    } else {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        throw new DOMException(`an instance of ${proto.constructor?.name ?? "a class"} could not be cloned`, "DataCloneError");
      }
      out = {};
      seen.set(v, out);
      for (const k of Object.keys(v)) out[k] = clone(v[k]);
      return out;
    }
    seen.set(v, out);
    return out;
  };
  return clone(value);
}

// --- Headers, Request, Response, fetch ------------------------------------------------

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

class Headers {
  #map = new Map();

  constructor(init) {
    if (init === undefined || init === null) return;
    const pairs =
      init instanceof Headers ? [...init] : Symbol.iterator in Object(init) ? [...init] : Object.entries(init);
    for (const pair of pairs) {
      const [name, value, ...rest] = [...pair];
      if (rest.length > 0 || value === undefined) throw new TypeError("Headers: each header needs a name and a value");
      this.append(name, value);
    }
  }

  #name(name) {
    const n = String(name);
    if (!TOKEN.test(n)) throw new TypeError(`Headers: \`${n}\` is not a valid header name`);
    return n.toLowerCase();
  }

  #value(value) {
    const v = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
    if (/[\0\r\n]/.test(v)) throw new TypeError("Headers: a header value may not hold NUL, CR or LF");
    return v;
  }

  append(name, value) {
    const key = this.#name(name);
    const values = this.#map.get(key) ?? [];
    values.push(this.#value(value));
    this.#map.set(key, values);
  }
  set(name, value) {
    this.#map.set(this.#name(name), [this.#value(value)]);
  }
  get(name) {
    const values = this.#map.get(this.#name(name));
    return values === undefined ? null : values.join(", ");
  }
  getSetCookie() {
    return [...(this.#map.get("set-cookie") ?? [])];
  }
  has(name) {
    return this.#map.has(this.#name(name));
  }
  delete(name) {
    this.#map.delete(this.#name(name));
  }
  forEach(callback, thisArg) {
    for (const [k, v] of this) callback.call(thisArg, v, k, this);
  }
  *entries() {
    for (const key of [...this.#map.keys()].sort()) {
      if (key === "set-cookie") for (const v of this.#map.get(key)) yield [key, v];
      else yield [key, this.#map.get(key).join(", ")];
    }
  }
  *keys() {
    for (const [k] of this) yield k;
  }
  *values() {
    for (const [, v] of this) yield v;
  }
  [Symbol.iterator]() {
    return this.entries();
  }
}

/** A body as bytes, and the content type it implies. */
function extractBody(body) {
  if (body === undefined || body === null) return [null, null];
  if (typeof body === "string") return [utf8Encode(body), "text/plain;charset=UTF-8"];
  if (body instanceof URLSearchParams) {
    return [utf8Encode(body.toString()), "application/x-www-form-urlencoded;charset=UTF-8"];
  }
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return [bytesOf(body, "a body").slice(), null];
  throw new TypeError("a body is a string, URLSearchParams, ArrayBuffer or typed array (streams are not supported)");
}

/** What Request and Response share: a body read once. */
class Body {
  #bytes;
  #used = false;

  constructor(bytes) {
    this.#bytes = bytes;
  }
  get bodyUsed() {
    return this.#used;
  }
  get body() {
    return null;
  }
  #take() {
    if (this.#used) return Promise.reject(new TypeError("the body has already been read"));
    this.#used = true;
    return Promise.resolve(this.#bytes ?? new Uint8Array(0));
  }
  _bytes() {
    return this.#bytes;
  }
  arrayBuffer() {
    return this.#take().then((b) => b.slice().buffer);
  }
  bytes() {
    return this.#take().then((b) => b.slice());
  }
  text() {
    return this.#take().then((b) => utf8Decode(b, false));
  }
  json() {
    return this.text().then((t) => JSON.parse(t));
  }
}

const METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"];

class Request extends Body {
  #method;
  #url;
  #headers;

  constructor(input, init = {}) {
    const from = input instanceof Request ? input : null;
    const [bytes, type] = init.body !== undefined ? extractBody(init.body) : [from?._bytes() ?? null, null];
    super(bytes);
    this.#url = new URL(from !== null ? from.url : String(input)).href;
    const method = String(init.method ?? from?.method ?? "GET");
    this.#method = METHODS.includes(method.toUpperCase()) ? method.toUpperCase() : method;
    if (!TOKEN.test(this.#method)) throw new TypeError(`Request: \`${method}\` is not a valid method`);
    if (bytes !== null && (this.#method === "GET" || this.#method === "HEAD")) {
      throw new TypeError(`Request: a ${this.#method} request has no body`);
    }
    this.#headers = new Headers(init.headers ?? from?.headers);
    if (type !== null && !this.#headers.has("content-type")) this.#headers.set("content-type", type);
  }
  get method() {
    return this.#method;
  }
  get url() {
    return this.#url;
  }
  get headers() {
    return this.#headers;
  }
  clone() {
    return new Request(this);
  }
}

class Response extends Body {
  #status;
  #statusText;
  #headers;
  #url = "";

  constructor(body, init = {}) {
    const [bytes, type] = extractBody(body);
    super(bytes);
    this.#status = init.status ?? 200;
    if (!Number.isInteger(this.#status) || this.#status < 200 || this.#status > 599) {
      throw new RangeError(`Response: the status ${init.status} is not in 200–599`);
    }
    this.#statusText = String(init.statusText ?? "");
    this.#headers = new Headers(init.headers);
    if (type !== null && !this.#headers.has("content-type")) this.#headers.set("content-type", type);
  }
  static json(data, init = {}) {
    const headers = new Headers(init.headers);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
    return new Response(JSON.stringify(data), { ...init, headers });
  }
  static _received(bytes, status, headers, url) {
    const response = new Response(bytes, { status, headers });
    response.#url = url;
    return response;
  }
  get status() {
    return this.#status;
  }
  get statusText() {
    return this.#statusText;
  }
  get ok() {
    return this.#status >= 200 && this.#status < 300;
  }
  get headers() {
    return this.#headers;
  }
  get url() {
    return this.#url;
  }
  get redirected() {
    return false;
  }
  get type() {
    return "basic";
  }
  clone() {
    return Response._received(this._bytes(), this.#status, this.#headers, this.#url);
  }
}

/** `fetch` over the runtime's HTTP client: its timeout (capped by the node's deadline),
 *  its response size limit, and its refusal of what the runtime refuses. */
function fetch(input, init) {
  try {
    const request = new Request(input, init);
    const body = request._bytes();
    const answer = JSON.parse(
      host.fetch(
        JSON.stringify({
          method: request.method,
          url: request.url,
          headers: [...request.headers],
          body: body === null ? null : toBinaryString(body),
        }),
      ),
    );
    if (answer.error !== undefined) return Promise.reject(new TypeError(`fetch failed: ${answer.error}`));
    return Promise.resolve(
      Response._received(fromBinaryString(answer.body), answer.status, answer.headers, answer.url),
    );
  } catch (error) {
    return Promise.reject(error);
  }
}

for (const [name, value] of Object.entries({
  TextEncoder,
  TextDecoder,
  atob,
  btoa,
  URL,
  URLSearchParams,
  crypto,
  structuredClone,
  Headers,
  Request,
  Response,
  fetch,
})) {
  define(name, value);
}
