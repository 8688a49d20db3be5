// Unit tests of both nodes, run by Node's test runner (`npm test`) as the server runs them
// (`@svc/sdk/testing`). The flow tests (tests/tickets.yaml) expect the same answers from
// svc's server: one project, the same results in JavaScript and in svc.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runNode } from "@svc/sdk/testing";
import createTicket from "./create-ticket.ts";
import summarize from "./summarize.ts";

const secrets = { SIGNING_KEY: "test-signing-key" };

function request(overrides: Record<string, unknown> = {}) {
  return {
    subject: "Printer on fire",
    body: "The third-floor printer is on fire again",
    reporterEmail: "ada@Example.COM",
    tags: ["Hardware", " printers ", "hardware"],
    ...overrides,
  };
}

test("tags, links and signs a ticket", async () => {
  const run = await runNode(createTicket, { request: request(), maxTags: 3 }, { secrets });
  assert.equal(run.failure, undefined);
  assert.deepEqual(run.outputs, {
    ticket: {
      id: "UHJpbnRlciBv",
      subject: "Printer on fire",
      priority: "normal",
      tags: ["hardware", "printers"],
      reporterDomain: "example.com",
      link: "https://help.example.com/tickets/UHJpbnRlciBv?from=api",
      signature: "4898df4c",
    },
    tagCount: 2,
  });
  assert.deepEqual(run.logs, ["ticket UHJpbnRlciBv: 2 tags, normal"]);
});

test("refuses what it cannot open, with a code where one helps", async () => {
  const failure = async (overrides: Record<string, unknown>) =>
    (await runNode(createTicket, { request: request(overrides), maxTags: 3 }, { secrets })).failure;
  assert.deepEqual(await failure({ subject: "  " }), { message: "a ticket needs a subject", code: "EMPTY_SUBJECT" });
  assert.deepEqual(await failure({ tags: ["a", "b", "c", "d"] }), {
    message: "a ticket takes at most 3 tags, not 4",
    code: "TOO_MANY_TAGS",
  });
  assert.equal((await failure({ reporterEmail: "nobody" }))?.message, "`nobody` is not an e-mail address");
});

test("an outage is urgent whatever the reporter chose", async () => {
  const run = await runNode(createTicket, { request: request({ body: "site down", priority: "low" }), maxTags: 3 }, { secrets });
  assert.equal(run.outputs?.ticket.priority, "urgent");
});

test("the summary keeps its keys in the order the node wrote them", async () => {
  const ticket = (await runNode(createTicket, { request: request(), maxTags: 3 }, { secrets })).outputs!.ticket;
  const run = await runNode(summarize, { ticket, tagCount: 2 }, { request: { method: "POST" }, env: { isDev: false } });
  assert.equal(
    JSON.stringify(run.outputs),
    '{"summary":{"note":"URGENT Printer on fire [example.com]","labels":"hardware, printers","dev":false,"method":"POST","share":0.6666666666666666},"urgent":true}',
  );
});
