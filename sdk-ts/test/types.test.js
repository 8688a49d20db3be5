// The types of index.d.ts, proven with the TypeScript compiler:
// - test/types/pass/*.ts must compile without an error;
// - test/types/fail/*.ts must fail exactly where they say: a line that ends with
//   `// error: TS<code> <fragment>` must carry that error (and the fragment must be in
//   its message), and no other line may carry one.
// The fail files are compiled as one program, so a file's `declare module` augmentation
// is seen by the others: keep augmentations consistent.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const typesDir = join(here, "types");
const packageDir = dirname(here);

function tscPath() {
  try {
    return createRequire(join(packageDir, "package.json")).resolve("typescript/bin/tsc");
  } catch {
    assert.fail("TypeScript is not installed: run `npm ci` in sdk-ts/ (the type tests need tsc)");
  }
}

/** Compiles `files` with test/types/tsconfig.json; returns tsc's diagnostics. */
function compile(name, files) {
  const config = join(typesDir, `tsconfig.${name}.json`);
  writeFileSync(
    config,
    JSON.stringify({ extends: "./tsconfig.json", files: files.map((f) => relative(typesDir, f)) }),
  );
  try {
    execFileSync(process.execPath, [tscPath(), "-p", config, "--pretty", "false"], { encoding: "utf8" });
    return [];
  } catch (e) {
    if (e.status === undefined || e.status === null) throw e;
    return parseDiagnostics(e.stdout + e.stderr);
  } finally {
    rmSync(config, { force: true });
  }
}

// `path(line,col): error TS1234: message`, with continuation lines indented.
function parseDiagnostics(output) {
  const diagnostics = [];
  for (const line of output.split("\n")) {
    const m = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
    if (m) {
      diagnostics.push({ file: join(typesDir, m[1].replace(/^.*test\/types\//, "")), line: Number(m[2]), code: m[4], message: m[5] });
    } else if (diagnostics.length > 0 && /^\s/.test(line)) {
      diagnostics.at(-1).message += `\n${line.trim()}`;
    } else if (line.trim() !== "") {
      diagnostics.push({ file: "", line: 0, code: "?", message: line });
    }
  }
  return diagnostics;
}

function tsFiles(dir) {
  return readdirSync(join(typesDir, dir))
    .filter((f) => f.endsWith(".ts"))
    .sort()
    .map((f) => join(typesDir, dir, f));
}

/** The `// error: TS1234 fragment` markers of a file, by line. */
function expectedErrors(file) {
  const expected = [];
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((text, i) => {
      const m = /\/\/ error: (TS\d+)\s*(.*)$/.exec(text);
      if (m) expected.push({ line: i + 1, code: m[1], fragment: m[2].trim() });
    });
  return expected;
}

const show = (d) => `${relative(packageDir, d.file)}:${d.line} ${d.code} ${d.message}`;

test("every file in test/types/pass compiles", () => {
  const diagnostics = compile("pass", tsFiles("pass"));
  assert.deepEqual(diagnostics.map(show), []);
});

test("every file in test/types/fail fails to compile exactly where it says, for the reason it says", () => {
  const files = tsFiles("fail");
  assert.ok(files.length > 0);
  const diagnostics = compile("fail", files);
  const problems = [];
  for (const file of files) {
    const expected = expectedErrors(file);
    if (expected.length === 0) problems.push(`${relative(packageDir, file)}: no \`// error: TS…\` marker`);
    const actual = diagnostics.filter((d) => d.file === file);
    for (const e of expected) {
      const hit = actual.find((d) => d.line === e.line && d.code === e.code && d.message.includes(e.fragment));
      if (!hit) {
        const there = actual.filter((d) => d.line === e.line).map(show);
        problems.push(
          `${relative(packageDir, file)}:${e.line}: expected ${e.code} containing "${e.fragment}", got ${there.length ? there.join(" | ") : "no error"}`,
        );
      }
    }
    for (const d of actual) {
      if (!expected.some((e) => e.line === d.line)) problems.push(`unexpected error ${show(d)}`);
    }
  }
  for (const d of diagnostics.filter((d) => !files.includes(d.file))) problems.push(`error outside the fail files: ${show(d)}`);
  assert.deepEqual(problems, []);
});
