// @svc/sdk installs offline, from the repository: as a packed tarball and as a path.
// Both are installed into a fresh project in a temporary directory with `--offline`
// (npm may not reach a registry), then imported the way a node module imports it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const quiet = ["--offline", "--no-audit", "--no-fund", "--loglevel=error"];

function freshProject(t) {
  const dir = mkdtempSync(join(tmpdir(), "svc-sdk-install-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "my-nodes", private: true, type: "module" }));
  writeFileSync(
    join(dir, "node.js"),
    `import { defineCodeFunctionNode, buildManifestFromNode, t } from "@svc/sdk";
const node = defineCodeFunctionNode({ nodeKey: "acme.greet", name: "Greet", inputs: { name: t.string() },
  outputs: { greeting: t.string() }, run: (ctx) => ({ greeting: "Hello, " + ctx.inputs.name }) });
console.log(JSON.stringify(buildManifestFromNode(node)), JSON.stringify(node.run({ inputs: { name: "Ada" } })));
`,
  );
  return dir;
}

const expected =
  '{"nodeKey":"acme.greet","name":"Greet","category":"code-function","inputs":{"name":{"type":"string"}},' +
  '"outputs":{"greeting":{"type":"string"}}} {"greeting":"Hello, Ada"}\n';

test("the packed tarball installs offline and holds only the package's files", (t) => {
  const packDir = mkdtempSync(join(tmpdir(), "svc-sdk-pack-"));
  t.after(() => rmSync(packDir, { recursive: true, force: true }));
  const listing = JSON.parse(
    execFileSync(npm, ["pack", "--json", "--pack-destination", packDir, ...quiet], { cwd: packageDir, encoding: "utf8" }),
  );
  assert.deepEqual(listing[0].files.map((f) => f.path).sort(), ["README.md", "index.d.ts", "index.js", "package.json", "testing.d.ts", "testing.js"]);
  const [tarball] = readdirSync(packDir);
  assert.equal(tarball, "svc-sdk-0.1.0.tgz");

  const project = freshProject(t);
  execFileSync(npm, ["install", join(packDir, tarball), ...quiet], { cwd: project });
  assert.equal(execFileSync(process.execPath, ["node.js"], { cwd: project, encoding: "utf8" }), expected);
});

test("the package installs offline from its path in the repository", (t) => {
  const project = freshProject(t);
  execFileSync(npm, ["install", packageDir, ...quiet], { cwd: project });
  assert.equal(execFileSync(process.execPath, ["node.js"], { cwd: project, encoding: "utf8" }), expected);
});
