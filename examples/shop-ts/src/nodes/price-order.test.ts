// Unit tests of the pricing node, run by Node's test runner (`npm test`) with the node
// run as the server runs it (`@svc/sdk/testing`). Test files are not nodes: svc leaves
// `*.test.ts` out of the server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runNode } from "@svc/sdk/testing";
import priceOrder from "./price-order.ts";

type Line = [quantity: number, unitPrice: number];

function order(couponCode: string | undefined, lines: Line[]) {
  return {
    customerEmail: "ada@example.com",
    currency: "EUR" as const,
    ...(couponCode === undefined ? {} : { couponCode }),
    lines: lines.map(([quantity, unitPrice], i) => ({ sku: `sku-${i}`, quantity, unitPrice })),
  };
}

test("prices lines and applies coupons", async () => {
  const run = await runNode(priceOrder, { order: order("welcome10", [[2, 10], [1, 5.5]]), max_lines: 10 });
  assert.equal(run.failure, undefined);
  assert.deepEqual(
    { subtotal: run.outputs?.quote.subtotal, discount: run.outputs?.quote.discount, total: run.outputs?.quote.total },
    { subtotal: 25.5, discount: 2.55, total: 22.95 },
  );
  assert.equal(run.outputs?.line_count, 2);
  assert.deepEqual(run.logs, ["priced 2 lines for EUR: 25.5 - 2.55"]);
});

test("refuses bad orders with a code", async () => {
  const code = async (o: ReturnType<typeof order>) =>
    (await runNode(priceOrder, { order: o, max_lines: 2 })).failure?.code;
  assert.equal(await code(order(undefined, [[1, 1], [1, 1], [1, 1]])), "TOO_MANY_LINES");
  assert.equal(await code(order("FREE", [[1, 1]])), "UNKNOWN_COUPON");
});
