// The benchmarked route (bench/project's `orders` flow) written by hand on Express 5, the
// way a Node.js team would serve the same TypeScript node code without svc: the
// protections in plain middleware-free code, then examples/shop-ts's two nodes (compiled
// by tsc into examples/shop-ts/.svc/tsc), called with a small `ctx`. It sends the headers
// and JSON the generated server sends. bench/typescript.py measures it beside svc.
//
//   BENCH_API_KEY=svck_… node bench/express/server.mjs --port 0

import express from "express";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import priceOrder from "../../examples/shop-ts/.svc/tsc/src/nodes/price-order.js";
import decideStatus from "../../examples/shop-ts/.svc/tsc/src/nodes/decide-status.js";

const port = Number(process.argv[process.argv.indexOf("--port") + 1] ?? 0);
const apiKey = process.env.BENCH_API_KEY ?? "";

// Check Origin: exact origins and one `*.` wildcard pattern.
const EXACT = new Set(["https://shop.example.com", "http://localhost:5173"]);
const SUFFIX = ".shop.example.com";
function originAllowed(origin) {
  if (EXACT.has(origin)) return true;
  if (!origin.startsWith("https://") || !origin.endsWith(SUFFIX)) return false;
  const label = origin.slice("https://".length, -SUFFIX.length);
  return label.length > 0 && /^[a-z0-9-]+$/.test(label);
}

// Check API Key: SHA-256 digests, compared in constant time.
const sha256 = (text) => createHash("sha256").update(text).digest();
const KEYS = [{ digest: sha256(apiKey), owner: "bench" }];
function keyOwner(key) {
  if (typeof key !== "string" || key.length === 0) return null;
  const digest = sha256(key);
  for (const k of KEYS) if (timingSafeEqual(digest, k.digest)) return k.owner;
  return null;
}

// Rate Limit by API key: GCRA, 1e9 per second (as the flow), in memory.
const LIMIT = 1_000_000_000;
const WINDOW_MS = 1000;
const EMISSION = WINDOW_MS / LIMIT;
const tat = new Map();
function allow(id, now) {
  const t = Math.max(tat.get(id) ?? now, now);
  if (t - now > WINDOW_MS - EMISSION) return { ok: false, remaining: 0, reset: Math.ceil((t - now) / 1000) };
  tat.set(id, t + EMISSION);
  return { ok: true, remaining: Math.floor((WINDOW_MS - (t + EMISSION - now)) / EMISSION), reset: 1 };
}

function fail(message, code) {
  const e = new Error(message);
  e.failure = true;
  e.code = code;
  throw e;
}

async function runNode(node, inputs) {
  const ctx = { inputs, env: { isDev: false, version: "bench", gitSha: "bench" }, log() {}, fail, secret() { return ""; } };
  try {
    return { outputs: await node.run(ctx) };
  } catch (e) {
    if (e.failure) return { failure: { message: e.message, code: e.code } };
    throw e;
  }
}

function validOrder(o) {
  return (
    o !== null && typeof o === "object" && !Array.isArray(o) &&
    typeof o.customerEmail === "string" && ["EUR", "USD", "GBP"].includes(o.currency) &&
    (o.couponCode === undefined || typeof o.couponCode === "string") &&
    Array.isArray(o.lines) &&
    o.lines.every((l) => l !== null && typeof l === "object" && typeof l.sku === "string" &&
      typeof l.quantity === "number" && typeof l.unitPrice === "number" &&
      (l.tags === undefined || (Array.isArray(l.tags) && l.tags.every((t) => typeof t === "string"))))
  );
}

const app = express();
app.disable("x-powered-by");
app.disable("etag");

app.post("/acme/shop/orders", express.json({ limit: "1mb" }), async (req, res) => {
  res.set("x-request-id", randomBytes(8).toString("hex"));
  const origin = req.get("origin");
  if (origin !== undefined) {
    res.set("vary", "Origin");
    if (!originAllowed(origin)) return res.status(403).json({ error: { code: "forbidden", message: "origin not allowed" } });
    res.set("access-control-allow-origin", origin);
  }
  const owner = keyOwner(req.get("x-api-key"));
  if (owner === null) return res.status(401).json({ error: { code: "unauthorized", message: "a valid API key is required" } });
  const limit = allow(req.get("x-api-key"), Date.now());
  res.set("ratelimit-policy", `"limit";q=${LIMIT};w=1`);
  res.set("ratelimit", `"limit";r=${limit.remaining};t=${limit.reset}`);
  if (!limit.ok) return res.status(429).json({ error: { code: "rate_limited", message: "too many requests" } });
  if (!validOrder(req.body)) return res.status(400).json({ error: { code: "invalid_body", message: "the body is not an Order" } });
  const priced = await runNode(priceOrder, { order: req.body, max_lines: 50 });
  if (priced.failure) return res.status(422).json({ error: { code: priced.failure.code, message: priced.failure.message } });
  const decided = await runNode(decideStatus, { total: priced.outputs.quote.total, currency: req.body.currency, review_above: 1000 });
  res.set("x-quote-status", decided.outputs.status);
  res.status(201).json({
    status: decided.outputs.status,
    customer: owner,
    quote: priced.outputs.quote,
    lineCount: priced.outputs.line_count,
  });
});

const server = app.listen(port, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
