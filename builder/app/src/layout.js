// @ts-check
// Automatic layout of one route, left to right in sequence order (a layered layout in
// the manner of Sugiyama et al.):
//
// 1. Layers: each node's column is its longest sequence path from Start, so every
//    sequence wire runs left to right (data wires do too: a value is read only after the
//    node that made it ran).
// 2. A wire that spans several columns gets a placeholder in each column it crosses, so
//    that the slot it passes through is kept free of nodes.
// 3. Order within a column: first as the flow reaches the nodes (a node's outputs in
//    order: `allowed` above `blocked`), then a few sweeps towards the median of each
//    node's neighbours, which untangles wires.
// 4. Heights: each node placed level with what feeds it where there is room, never
//    overlapping the one above.
//
// Pure: no DOM. `builder/tests/layout.test.mjs` checks it under Node.js.

export const NODE_WIDTH = 184;
export const HEADER = 40;
export const ROW = 20;
export const PADDING = 8;
export const COLUMN_GAP = 52;
export const NODE_GAP = 24;
const LANE = 10; // the height a passing wire keeps free in a column

/** The height of a node: its header and one row per pin on its busier side. */
export function nodeHeight(node) {
  return HEADER + ROW * Math.max(1, node.inputs.length, node.outputs.length) + PADDING;
}

/** Where a pin meets its wires, relative to the node's top-left corner. */
export function pinOffset(node, side, pinId) {
  const pins = side === "in" ? node.inputs : node.outputs;
  let index = pins.findIndex((p) => p.id === pinId);
  if (index < 0) index = 0; // an unknown pin (an error the diagnostics name): the first row
  return { x: side === "in" ? 0 : NODE_WIDTH, y: HEADER + ROW * index + ROW / 2 };
}

/**
 * Lays a route out. `saved` holds positions the user dragged nodes to (by node id); they
 * win over the computed ones. Returns `{ nodes: Map(id → {x, y, w, h}), wires: [{wire,
 * points}], width, height }`; each wire's `points` run from its output pin to its input
 * pin, through the slots kept for it.
 */
export function layout(route, saved = {}) {
  const byId = new Map(route.nodes.map((n) => [n.id, n]));
  const start = route.nodes[0]?.id;
  const layerOf = layers(route, byId, start);

  // Columns of real nodes, then placeholders for long wires.
  const columns = [];
  const put = (layer, item) => (columns[layer] ??= []).push(item);
  for (const id of discoveryOrder(route, byId, start)) put(layerOf.get(id), { id, node: byId.get(id) });
  const wires = route.wires.filter((w) => byId.has(w.from.node) && byId.has(w.to.node));
  const routes = wires.map((wire) => {
    const from = layerOf.get(wire.from.node);
    const to = layerOf.get(wire.to.node);
    const lanes = [];
    for (let layer = from + 1; layer < to; layer++) {
      const lane = { id: null, lane: true };
      put(layer, lane);
      lanes.push(lane);
    }
    return { wire, lanes };
  });
  for (let i = 0; i < columns.length; i++) columns[i] ??= [];

  orderColumns(columns, routes);
  const placed = placeColumns(columns, routes);

  // Saved positions win; a wire's lanes keep their computed places.
  for (const [id, at] of Object.entries(saved)) {
    const box = placed.get(id);
    if (box && Number.isFinite(at?.x) && Number.isFinite(at?.y)) Object.assign(box, { x: at.x, y: at.y });
  }

  const drawn = routes.map(({ wire, lanes }) => {
    const a = placed.get(wire.from.node);
    const b = placed.get(wire.to.node);
    const out = pinOffset(a.node, "out", wire.from.pin);
    const inn = pinOffset(b.node, "in", wire.to.pin);
    const points = [{ x: a.x + out.x, y: a.y + out.y }];
    for (const lane of lanes) {
      points.push({ x: lane.x, y: lane.y }, { x: lane.x + NODE_WIDTH, y: lane.y });
    }
    points.push({ x: b.x + inn.x, y: b.y + inn.y });
    return { wire, points };
  });

  let width = 0;
  let height = 0;
  const nodes = new Map();
  for (const [id, box] of placed) {
    nodes.set(id, { x: box.x, y: box.y, w: NODE_WIDTH, h: box.h });
    width = Math.max(width, box.x + NODE_WIDTH);
    height = Math.max(height, box.y + box.h);
  }
  return { nodes, wires: drawn, width, height };
}

/** Each node's column: its longest sequence path from Start (cycles, which the checker
 *  refuses, are cut where they close). Nodes Start does not reach go after their data
 *  sources, or in the first column. */
function layers(route, byId, start) {
  const next = new Map(route.nodes.map((n) => [n.id, []]));
  for (const w of route.wires) {
    if (w.kind === "sequence" && byId.has(w.from.node) && byId.has(w.to.node)) next.get(w.from.node).push(w.to.node);
  }
  // Depth-first from Start, dropping the edges that close a cycle.
  const state = new Map();
  const forward = new Map(route.nodes.map((n) => [n.id, []]));
  const order = [];
  const visit = (id) => {
    state.set(id, "open");
    for (const to of next.get(id)) {
      if (state.get(to) === "open") continue;
      forward.get(id).push(to);
      if (!state.has(to)) visit(to);
    }
    state.set(id, "done");
    order.push(id);
  };
  if (start !== undefined) visit(start);
  for (const n of route.nodes) if (!state.has(n.id)) visit(n.id);
  const layer = new Map(route.nodes.map((n) => [n.id, 0]));
  for (const id of order.reverse()) {
    for (const to of forward.get(id)) layer.set(to, Math.max(layer.get(to), layer.get(id) + 1));
  }
  // A node no sequence wire reaches sits right of what feeds it data.
  const reached = new Set([start, ...route.wires.filter((w) => w.kind === "sequence").map((w) => w.to.node)]);
  for (const n of route.nodes) {
    if (reached.has(n.id)) continue;
    const sources = route.wires.filter((w) => w.to.node === n.id && byId.has(w.from.node) && w.from.node !== n.id);
    for (const w of sources) layer.set(n.id, Math.max(layer.get(n.id), layer.get(w.from.node) + 1));
  }
  return layer;
}

/** Nodes in the order the flow reaches them: depth first from Start, outputs in order. */
function discoveryOrder(route, byId, start) {
  const seen = new Set();
  const order = [];
  const visit = (id) => {
    if (seen.has(id) || !byId.has(id)) return;
    seen.add(id);
    order.push(id);
    const node = byId.get(id);
    const outputs = route.wires
      .filter((w) => w.kind === "sequence" && w.from.node === id)
      .sort((a, b) => pinIndex(node, a.from.pin) - pinIndex(node, b.from.pin));
    for (const w of outputs) visit(w.to.node);
  };
  if (start !== undefined) visit(start);
  for (const n of route.nodes) visit(n.id);
  return order;
}

function pinIndex(node, pin) {
  const i = node.outputs.findIndex((p) => p.id === pin);
  return i < 0 ? node.outputs.length : i;
}

/** A few sweeps, left to right then back, sorting each column by the median position
 *  of its items' neighbours in the column just visited; ties keep the current order. */
function orderColumns(columns, routes) {
  // Each item's neighbours: for a lane, the items before and after it on its wire.
  const left = new Map();
  const right = new Map();
  const link = (a, b) => {
    (right.get(a) ?? right.set(a, []).get(a)).push(b);
    (left.get(b) ?? left.set(b, []).get(b)).push(a);
  };
  const itemOf = new Map();
  for (const column of columns) for (const item of column) if (item.id !== null) itemOf.set(item.id, item);
  for (const { wire, lanes } of routes) {
    const chain = [itemOf.get(wire.from.node), ...lanes, itemOf.get(wire.to.node)];
    for (let i = 0; i + 1 < chain.length; i++) if (chain[i] !== chain[i + 1]) link(chain[i], chain[i + 1]);
  }
  const position = new Map();
  const index = () => columns.forEach((column) => column.forEach((item, i) => position.set(item, i)));
  index();
  const sortBy = (column, neighbours) => {
    const keyed = column.map((item, i) => {
      const ps = (neighbours.get(item) ?? []).map((n) => position.get(n)).filter((p) => p !== undefined).sort((a, b) => a - b);
      return { item, i, key: ps.length ? ps[Math.floor((ps.length - 1) / 2)] : i };
    });
    keyed.sort((a, b) => a.key - b.key || a.i - b.i);
    column.splice(0, column.length, ...keyed.map((k) => k.item));
    column.forEach((item, i) => position.set(item, i));
  };
  for (let sweep = 0; sweep < 4; sweep++) {
    for (let c = 1; c < columns.length; c++) sortBy(columns[c], left);
    for (let c = columns.length - 2; c >= 0; c--) sortBy(columns[c], right);
  }
  // The last sweep left to right, so that the flow's main path stays on top.
  for (let c = 1; c < columns.length; c++) sortBy(columns[c], left);
}

/** x by column; y stacked in order, each item level with its first input's source
 *  where there is room. Returns the boxes of the nodes (lanes get x and y in place). */
function placeColumns(columns, routes) {
  const placed = new Map();
  const feeders = new Map();
  for (const { wire, lanes } of routes) {
    const chain = [{ id: wire.from.node, pin: wire.from.pin }, ...lanes, { id: wire.to.node }];
    for (let i = 1; i < chain.length; i++) {
      const target = chain[i].lane ? chain[i] : chain[i].id;
      if (!feeders.has(target)) feeders.set(target, { source: chain[i - 1], wire, last: i === chain.length - 1 });
    }
  }
  columns.forEach((column, c) => {
    const x = c * (NODE_WIDTH + COLUMN_GAP);
    let floor = 0;
    for (const item of column) {
      const h = item.lane ? LANE : nodeHeight(item.node);
      let desired = floor;
      const feed = feeders.get(item.lane ? item : item.id);
      if (feed) {
        const source = feed.source.lane ? feed.source : placed.get(feed.source.id);
        if (source) {
          const sourceY = feed.source.lane ? source.y : source.y + pinOffset(source.node, "out", feed.source.pin).y;
          const ownY = item.lane ? 0 : pinOffset(item.node, "in", feed.last ? feed.wire.to.pin : "exec").y;
          desired = Math.max(floor, sourceY - ownY);
        }
      }
      if (item.lane) {
        item.x = x;
        item.y = desired;
      } else {
        placed.set(item.id, { x, y: desired, h, node: item.node });
      }
      floor = desired + h + (item.lane ? LANE : NODE_GAP);
    }
  });
  return placed;
}

/** Whether two boxes overlap (for tests and for the Builder's own checks). */
export function overlaps(a, b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/**
 * Where a node `h` high dropped with its top-left corner at `at` goes, among the nodes
 * drawn (`boxes`): where it was dropped, or, if it would cover one of them, straight
 * below the nodes it meets, a node's gap apart. A node dropped on another is never
 * hidden under it, and one dropped in the open stays exactly where it was put.
 */
export function freeSpot(at, h, boxes) {
  const spot = { x: at.x, y: at.y, w: NODE_WIDTH, h };
  const margin = NODE_GAP / 2;
  const near = (b) => overlaps(spot, { x: b.x - margin, y: b.y - margin, w: b.w + 2 * margin, h: b.h + 2 * margin });
  // Each step moves below one node it met: at most one step per node.
  for (let step = 0; step <= boxes.length; step++) {
    const met = boxes.filter(near);
    if (!met.length) break;
    spot.y = Math.max(...met.map((b) => b.y + b.h)) + NODE_GAP;
  }
  return { x: spot.x, y: spot.y };
}
