// The page's types against the server's JSON: the modules marked `// @ts-check` must
// type-check against `app/src/model.d.ts`, and every example's real `GET /api/project`
// answer (and one of a project with an unreadable node) must be a `Model` as that file
// says, field for field. A field the server adds, drops, renames or makes nullable fails
// here, not in a view.

import assert from "node:assert/strict";
import { spawn, execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { freePort } from "./support.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const builder = resolve(here, "..");
const repo = resolve(builder, "..");
const svcBin = process.env.SVC_BIN ?? join(repo, "target/debug/svc");
const tsc = join(builder, "node_modules/.bin/tsc");
const scratch = mkdtempSync(join(tmpdir(), "svc-builder-types-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The files git knows of `examples/<name>`, copied to a scratch directory. */
function exampleCopy(name) {
  const to = join(scratch, name);
  const files = execFileSync("git", ["ls-files", `examples/${name}`], { cwd: repo, encoding: "utf8" }).split("\n").filter(Boolean);
  for (const file of files) {
    const target = join(to, file.slice(`examples/${name}/`.length));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(join(repo, file), target);
  }
  return to;
}

/** `GET /api/project` of `svc studio` on `dir`, as the page reads it. */
async function projectOf(dir) {
  const studio = spawn(svcBin, ["studio", dir, "--port", String(await freePort())], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  let said = "";
  studio.stdout.on("data", (c) => (said += c));
  studio.stderr.on("data", (c) => (said += c));
  try {
    const deadline = Date.now() + 30_000;
    let url;
    while (!(url = said.match(/Builder: (http:\/\/\S+)/)?.[1])) {
      assert.ok(Date.now() < deadline, `svc studio printed no URL:\n${said}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const opened = await fetch(url, { redirect: "manual" });
    const cookie = opened.headers.get("set-cookie")?.split(";")[0];
    assert.ok(cookie, `no cookie from ${url}`);
    const answer = await fetch(new URL("/api/project", url), { headers: { cookie } });
    assert.equal(answer.status, 200, await answer.clone().text());
    return await answer.text();
  } finally {
    studio.kill("SIGTERM");
  }
}

test("the page's modules type-check against the model's types", () => {
  const run = spawnSync(tsc, ["-p", builder], { encoding: "utf8" });
  assert.equal(run.status, 0, `tsc -p builder:\n${run.stdout}${run.stderr}`);
});

test("every example's /api/project is a Model as model.d.ts says, field for field", async () => {
  const examples = readdirSync(join(repo, "examples"), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  assert.ok(examples.length >= 4, `examples: ${examples}`);
  const projects = [];
  for (const name of examples) projects.push([name, exampleCopy(name)]);
  // A project with a node svc cannot read, and a problem on it.
  const broken = exampleCopy("hello");
  const flow = join(broken, "flows/greeting.yaml");
  writeFileSync(flow, readFileSync(flow, "utf8").replace("window: 1m", "window: soon"));
  projects.push(["hello, a node unreadable", broken]);

  const checked = join(scratch, "checked");
  mkdirSync(checked);
  const files = [];
  for (const [name, dir] of projects) {
    const json = await projectOf(dir);
    if (name.includes("unreadable")) assert.match(json, /"unreadable":true/, "the broken copy has an unreadable node");
    const file = join(checked, `${name.replace(/\W+/g, "-")}.ts`);
    writeFileSync(file, `import type { Model } from ${JSON.stringify(join(builder, "app/src/model"))};\n// ${name}\nexport const model: Model = ${json};\n`);
    files.push(file);
  }
  // Strict: a field that can be null must say so.
  const run = spawnSync(tsc, ["--noEmit", "--strict", "--target", "es2022", "--module", "esnext", "--moduleResolution", "bundler", "--skipLibCheck", ...files], { encoding: "utf8" });
  assert.equal(run.status, 0, `the server's JSON is not a Model:\n${run.stdout}${run.stderr}`);
});
