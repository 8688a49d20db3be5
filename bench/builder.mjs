// The Builder's speed, in the same headless Chromium as its tests (not a timed test: run
// it, read the figures, record them in docs/performance.md):
//
//   - the shop's canvas drawn, in ms after the page starts loading;
//   - a synthetic flow of 300 nodes laid out and drawn, in ms;
//   - a trace shown, in ms after its response reached the client (median of 20);
//   - an edit in the inspector (the rate limit) checked and shown: in ms from the
//     change to the Builder showing the re-checked flow (median of 10);
//   - the embedded web app's size, gzipped.
//
// Run from the repository, after `cargo build -p svc` and `npm ci` in builder/:
//
//   node bench/builder.mjs
//
// It copies the shop to a temporary directory and serves it with `svc dev`.

import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { chromium } = createRequire(join(repo, "builder/package.json"))("playwright-core");
const svcBin = process.env.SVC_BIN ?? join(repo, "target/debug/svc");

const freePort = () =>
  new Promise((ok) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function appSize() {
  let raw = 0;
  let gz = 0;
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const bytes = readFileSync(path);
        raw += bytes.length;
        gz += gzipSync(bytes, { level: 9 }).length;
      }
    }
  };
  walk(join(repo, "builder/app"));
  return { raw, gz };
}

const project = mkdtempSync(join(tmpdir(), "svc-bench-builder-"));
for (const file of execFileSync("git", ["ls-files", "examples/shop"], { cwd: repo, encoding: "utf8" }).split("\n").filter(Boolean)) {
  const to = join(project, file.slice("examples/shop/".length));
  mkdirSync(dirname(to), { recursive: true });
  cpSync(join(repo, file), to);
}
const [port, builderPort] = [await freePort(), await freePort()];
let log = "";
const dev = spawn(svcBin, ["dev", project, "--port", String(port), "--builder-port", String(builderPort)], {
  env: { ...process.env, CARGO_TARGET_DIR: process.env.CARGO_TARGET_DIR ?? join(repo, "target") },
  stdio: ["pipe", "pipe", "pipe"],
});
dev.stdout.on("data", (c) => (log += c));
dev.stderr.on("data", (c) => (log += c));
const wait = async (f, ms = 600_000) => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};
try {
  const url = await wait(() => log.match(/Builder: (http:\/\/\S+)/)?.[1]);
  await wait(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", headless: true, args: ["--no-sandbox"] });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();

  // 1. The canvas after a cold page load (the cookie set, then the page itself).
  await page.goto(url);
  const loads = [];
  for (let i = 0; i < 5; i++) {
    await page.goto(`${new URL(url).origin}/#/flows/create-order`);
    await page.locator('g.node[data-node="created"]').waitFor();
    loads.push(await page.evaluate(() => performance.now()));
  }

  // 2. 300 nodes: a chain with branches and data wires, laid out and drawn.
  const big = await page.evaluate(async () => {
    const { Canvas } = await import("/app/src/canvas.js");
    const seq = (id) => ({ id, type: "sequence", sequence: true });
    const data = (id) => ({ id, type: "number", sequence: false, takesInline: true });
    const nodes = [{ id: "n0", type: "start", label: "Start", category: "start", config: [], inputs: [], outputs: [seq("start"), data("v")] }];
    const wires = [];
    for (let i = 1; i < 300; i++) {
      nodes.push({ id: `n${i}`, type: "code", label: `Node ${i}`, category: "code", nodeKey: `b.n${i}`, config: [], inputs: [seq("exec"), data("a")], outputs: [seq("next"), seq("on_fail"), data("v")] });
      const from = Math.max(0, i - 1 - (i % 3));
      wires.push({ kind: "sequence", from: { node: `n${from}`, pin: from === 0 ? "start" : i % 4 ? "next" : "on_fail" }, to: { node: `n${i}`, pin: "exec" } });
      if (i > 4 && i % 2) wires.push({ kind: "data", from: { node: `n${i - 4}`, pin: "v" }, to: { node: `n${i}`, pin: "a" } });
    }
    const host = document.createElement("div");
    host.style.cssText = "position:absolute;inset:0";
    document.body.append(host);
    const canvas = new Canvas(host, { onSelect() {}, onMove() {} });
    const began = performance.now();
    canvas.show({ name: "big", nodes, wires }, {}, []);
    await new Promise((r) => requestAnimationFrame(() => r()));
    const took = performance.now() - began;
    host.remove();
    return took;
  });

  // 3. A trace on the page after its response: 20 requests, one at a time.
  await page.goto(`${new URL(url).origin}/#/flows/create-order`);
  await page.locator("#traces .sidebar-title").waitFor();
  const lags = [];
  for (let i = 0; i < 20; i++) {
    const before = await page.locator(".trace-item").count();
    await fetch(`http://127.0.0.1:${port}/acme/shop/orders`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    const answered = Date.now();
    await wait(async () => (await page.locator(".trace-item").count()) > before, 10_000);
    lags.push(Date.now() - answered);
  }
  // 4. An edit checked and shown: the create-order rate limit set in the inspector, until
  // the Builder shows the flow's new version (saved, read back and checked as svc check
  // does, its problems placed).
  await page.locator('[data-node="limit"] .node-header').click();
  const edits = [];
  for (let i = 0; i < 10; i++) {
    const link = page.locator('.route-link[data-route="create-order"]');
    const before = await link.getAttribute("data-version");
    const field = page.locator('#panel [data-setting="limit"]');
    await field.fill(String(50 + i));
    const began = Date.now();
    await field.press("Enter");
    await wait(async () => (await link.getAttribute("data-version")) !== before, 10_000);
    edits.push(Date.now() - began);
  }
  await browser.close();

  const size = appSize();
  console.log(`shop canvas after page start: median ${median(loads).toFixed(0)} ms (${loads.map((x) => x.toFixed(0)).join(", ")})`);
  console.log(`300-node flow laid out and drawn: ${big.toFixed(0)} ms`);
  console.log(`trace shown after the response: median ${median(lags)} ms, max ${Math.max(...lags)} ms (20 requests)`);
  console.log(`edit checked and shown: median ${median(edits)} ms, max ${Math.max(...edits)} ms (10 edits)`);
  console.log(`embedded web app: ${size.raw} bytes, ${size.gz} gzipped`);
} finally {
  dev.stdin.end();
  dev.kill("SIGTERM");
  rmSync(project, { recursive: true, force: true });
}
