// The layout alone, under Node.js: no two nodes overlap, every wire runs left to right
// between columns, and no wire's straight run through a column crosses a node, for a
// flow shaped like the shop's and for synthetic flows of up to 300 nodes.

import assert from "node:assert/strict";
import { test } from "node:test";
import { NODE_GAP, NODE_WIDTH, freeSpot, layout, overlaps } from "../app/src/layout.js";

const seq = (id) => ({ id, type: "sequence", sequence: true });
const data = (id, type = "string") => ({ id, type, sequence: false });
const wire = (kind, from, fromPin, to, toPin) => ({ kind, from: { node: from, pin: fromPin, path: [] }, to: { node: to, pin: toPin, path: [] } });

/** A protection chain like the shop's create-order flow, with failure responses. */
function shopLike() {
  const node = (id, inputs, outputs) => ({ id, type: "code", inputs, outputs });
  const nodes = [
    node("(start)", [], [seq("start"), data("body", "object:Order")]),
    node("origin", [seq("exec")], [seq("allowed"), seq("blocked")]),
    node("auth", [seq("exec")], [seq("valid"), seq("invalid"), data("user")]),
    node("limit", [seq("exec")], [seq("ok"), seq("limited")]),
    node("price", [seq("exec"), data("order", "object:Order")], [seq("next"), seq("on_fail"), data("quote", "object:Quote"), data("failure", "object")]),
    node("decide", [seq("exec"), data("total", "number")], [seq("next"), data("status")]),
    node("created", [seq("exec"), data("body.status"), data("body.customer"), data("body.quote")], []),
    node("rejected", [seq("exec"), data("body.error")], []),
    node("unauthorized", [seq("exec")], []),
    node("forbidden", [seq("exec")], []),
    node("too-many", [seq("exec")], []),
  ];
  const wires = [
    wire("sequence", "(start)", "start", "origin", "exec"),
    wire("sequence", "origin", "allowed", "auth", "exec"),
    wire("sequence", "origin", "blocked", "forbidden", "exec"),
    wire("sequence", "auth", "valid", "limit", "exec"),
    wire("sequence", "auth", "invalid", "unauthorized", "exec"),
    wire("sequence", "limit", "ok", "price", "exec"),
    wire("sequence", "limit", "limited", "too-many", "exec"),
    wire("sequence", "price", "next", "decide", "exec"),
    wire("sequence", "price", "on_fail", "rejected", "exec"),
    wire("sequence", "decide", "next", "created", "exec"),
    wire("data", "(start)", "body", "price", "order"),
    wire("data", "price", "quote", "decide", "total"),
    wire("data", "decide", "status", "created", "body.status"),
    wire("data", "auth", "user", "created", "body.customer"),
    wire("data", "price", "quote", "created", "body.quote"),
    wire("data", "price", "failure", "rejected", "body.error"),
  ];
  return { name: "shop-like", nodes, wires };
}

/** `n` nodes: a main chain with side branches, and data wires from ancestors several
 *  columns back (as the checker requires: a value is read only where its node ran),
 *  deterministic for a seed. */
function synthetic(n, seed = 7) {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const nodes = [{ id: "n0", inputs: [], outputs: [seq("start"), data("v")] }];
  const parent = [null];
  const wires = [];
  for (let i = 1; i < n; i++) {
    nodes.push({ id: `n${i}`, inputs: [seq("exec"), data("a"), data("b")], outputs: [seq("next"), seq("other"), data("v")] });
    const from = Math.max(0, i - 1 - Math.floor(random() * 3));
    parent.push(from);
    wires.push(wire("sequence", `n${from}`, from === 0 ? "start" : random() < 0.7 ? "next" : "other", `n${i}`, "exec"));
  }
  for (let i = 2; i < n; i++) {
    if (random() < 0.5) {
      // An ancestor: up the chain of parents a few steps.
      let from = parent[i];
      for (let up = Math.floor(random() * 4); up > 0 && parent[from] !== null; up--) from = parent[from];
      wires.push(wire("data", `n${from}`, "v", `n${i}`, random() < 0.5 ? "a" : "b"));
    }
  }
  return { name: `synthetic-${n}`, nodes, wires };
}

function checkDrawing(route) {
  const drawn = layout(route);
  const boxes = [...drawn.nodes.entries()];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      assert.ok(!overlaps(boxes[i][1], boxes[j][1]), `${route.name}: ${boxes[i][0]} overlaps ${boxes[j][0]}`);
    }
  }
  for (const { wire: w, points } of drawn.wires) {
    // Straight runs through columns (every second segment after the first) cross no node.
    for (let k = 1; k + 1 < points.length; k += 2) {
      const [a, b] = [points[k], points[k + 1]];
      assert.equal(a.y, b.y, "a run through a column is straight");
      for (const [id, box] of boxes) {
        const inside = a.y > box.y && a.y < box.y + box.h && a.x < box.x + box.w && b.x > box.x;
        assert.ok(!inside, `${route.name}: the wire ${w.from.node}.${w.from.pin} → ${w.to.node}.${w.to.pin} crosses ${id}`);
      }
    }
    // Each wire leaves its source to the right and reaches its target from the left.
    for (let k = 0; k + 1 < points.length; k++) {
      assert.ok(points[k + 1].x >= points[k].x, `${route.name}: ${w.from.node} → ${w.to.node} runs backwards`);
    }
  }
  return drawn;
}

test("the shop-like flow: no overlaps, wires left to right, none through a node", () => {
  const drawn = checkDrawing(shopLike());
  // The main path reads left to right in sequence order.
  const x = (id) => drawn.nodes.get(id).x;
  assert.ok(x("(start)") < x("origin") && x("origin") < x("auth") && x("auth") < x("limit"));
  assert.ok(x("limit") < x("price") && x("price") < x("decide") && x("decide") < x("created"));
  // A failure response sits in the column after the check that sends to it.
  assert.equal(x("forbidden"), x("auth"));
  assert.equal(x("unauthorized"), x("limit"));
});

test("saved positions win over computed ones", () => {
  const drawn = layout(shopLike(), { origin: { x: 999, y: 555 } });
  assert.deepEqual([drawn.nodes.get("origin").x, drawn.nodes.get("origin").y], [999, 555]);
  const first = drawn.wires.find((w) => w.wire.to.node === "origin");
  assert.equal(first.points.at(-1).x, 999);
});

test("a flow with a cycle (an error the checker reports) still lays out", () => {
  const route = shopLike();
  route.wires.push(wire("sequence", "decide", "next", "auth", "exec"));
  const drawn = layout(route);
  assert.equal(drawn.nodes.size, route.nodes.length);
});

for (const n of [20, 100, 300]) {
  test(`a synthetic flow of ${n} nodes`, () => {
    checkDrawing(synthetic(n));
  });
}

test("every node is as wide as the layout says", () => {
  for (const box of layout(shopLike()).nodes.values()) assert.equal(box.w, NODE_WIDTH);
});

test("a node dropped on others goes below them; one dropped in the open stays put", () => {
  const drawn = [...layout(shopLike()).nodes.values()];
  const h = 88;
  const box = (at) => ({ ...at, w: NODE_WIDTH, h });
  // On every node of the flow in turn, and between two of them: never over one.
  for (const b of drawn) {
    for (const at of [{ x: b.x, y: b.y }, { x: b.x + 40, y: b.y + b.h - 10 }]) {
      const spot = freeSpot(at, h, drawn);
      assert.equal(spot.x, at.x, "moved sideways");
      assert.ok(spot.y >= at.y, "moved up");
      for (const other of drawn) assert.ok(!overlaps(box(spot), other), `${JSON.stringify(at)} → ${JSON.stringify(spot)} covers a node`);
    }
  }
  // Below everything: where it was dropped.
  const bottom = Math.max(...drawn.map((b) => b.y + b.h));
  assert.deepEqual(freeSpot({ x: 10, y: bottom + 2 * NODE_GAP }, h, drawn), { x: 10, y: bottom + 2 * NODE_GAP });
  assert.deepEqual(freeSpot({ x: 5, y: 7 }, h, []), { x: 5, y: 7 });
});
