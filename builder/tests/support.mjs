// What the Builder's test files share (not a test file itself: `node --test` runs
// `*.test.mjs`).

import { createServer } from "node:net";

/** A TCP port free on loopback now. */
export function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
    server.on("error", fail);
  });
}
