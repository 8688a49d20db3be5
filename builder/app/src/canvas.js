// @ts-check
// The canvas: one route drawn in SVG, with pan, zoom, fit, node dragging and selection.
//
// Nodes are `<g class="node">` groups whose header is their control (focusable, labelled,
// are `<path class="wire">`; each pin is a row of its node with a native tooltip (type
// and description). Positions come from `layout.js`, and positions the user drags nodes
// to are handed to `onMove` to be kept.

import { el, shortJson, svg, typeFamily, typeLabel } from "./dom.js";
import { HEADER, NODE_WIDTH, ROW, layout } from "./layout.js";
import { PALETTE_NODE } from "./palette.js";

/** What `ctx.fail(message, code)` leaves on a code node's `failure` output. */
const FAILURE_FIELDS = [
  { name: "code", type: "string", required: true, description: "the code `ctx.fail` gave" },
  { name: "message", type: "string", required: true, description: "the message `ctx.fail` gave" },
];

const MIN_SCALE = 0.2;
const MAX_SCALE = 2.5;

export class Canvas {
  /**
   * @param {HTMLElement} host where the canvas goes
   * @param {{onSelect: Function, onMove: Function, checkWire?: Function, onWire?: Function, onRefused?: Function, onDrop?: Function}} handlers
   *   `checkWire(route, from, to)` resolves to `{ok, message}`; `onWire` draws a wire;
   *   `onDrop(key, at)` adds a palette node dropped on the canvas.
   */
  constructor(host, handlers) {
    this.handlers = handlers;
    this.view = { x: 0, y: 0, scale: 1 };
    this.saved = {};
    this.selected = null;
    this.highlight = null;
    this.root = svg("svg", { class: "canvas", role: "group", "aria-label": "Flow canvas" });
    this.viewport = svg("g", { class: "viewport" });
    this.root.append(svg("defs", {}, arrowMarker("arrow-sequence"), arrowMarker("arrow-data")), this.viewport);
    const tools = el(
      "div",
      { class: "canvas-tools", role: "toolbar", "aria-label": "Canvas" },
      el("button", { type: "button", "aria-label": "Zoom in", title: "Zoom in (+)", onclick: () => this.zoom(1.2) }, "+"),
      el("button", { type: "button", "aria-label": "Zoom out", title: "Zoom out (-)", onclick: () => this.zoom(1 / 1.2) }, "−"),
      el("button", { type: "button", "aria-label": "Fit the flow", title: "Fit (0)", onclick: () => this.fit() }, "Fit"),
    );
    host.replaceChildren(this.root, tools);
    this.listen();
  }

  /** Draws `route`; `positions` are the saved ones, `diagnostics` those of this route,
   *  `assets` the project's (a structure output opens into its fields). */
  show(route, positions, diagnostics, assets) {
    const sameRoute = this.route?.name === route.name;
    this.route = route;
    this.structures = new Map((assets?.structures ?? []).map((s) => [s.name, s.fields]));
    if (!sameRoute) this.expanded = new Set();
    this.saved = { ...positions };
    this.diagnostics = diagnostics;
    if (!sameRoute) this.selected = null;
    this.draw();
    if (!sameRoute) this.fit();
  }

  /** Nothing drawn: the flow shown is no longer in the project. */
  clear() {
    this.route = null;
    this.shown = null;
    this.placed = null;
    this.selected = null;
    this.highlight = null;
    this.viewport.replaceChildren();
  }

  /** The route as drawn: each opened structure output followed by its fields, as pins
   *  of their own (`quote.total`), and the wires that read a field drawn from its pin. */
  displayRoute() {
    const route = this.route;
    const nodes = route.nodes.map((node) => {
      const outputs = [];
      const open = (pin, depth) => {
        outputs.push(depth ? { ...pin, depth } : pin);
        if (!this.expanded.has(`${node.id}/${pin.id}`)) return;
        for (const field of this.fieldsOf(pin) ?? []) {
          open({ id: `${pin.id}.${field.name}`, type: field.type, sequence: false, optional: !field.required, description: field.description, checks: field.checks, field: true }, depth + 1);
        }
      };
      node.outputs.forEach((pin) => open(pin, 0));
      return outputs.length === node.outputs.length ? node : { ...node, outputs };
    });
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const wires = route.wires.map((wire) => {
      if (!wire.from.path?.length) return wire;
      const pins = byId.get(wire.from.node)?.outputs ?? [];
      // The deepest opened field the wire reads through.
      for (let n = wire.from.path.length; n > 0; n--) {
        const id = [wire.from.pin, ...wire.from.path.slice(0, n)].join(".");
        if (pins.some((p) => p.id === id)) return { ...wire, from: { ...wire.from, pin: id, path: wire.from.path.slice(n) }, original: wire };
      }
      return wire;
    });
    return { ...route, nodes, wires };
  }

  /** The fields of a structure pin (`object:Quote`, and a code node's `failure`), or
   *  nothing. */
  fieldsOf(pin) {
    return structureFields(pin, this.structures);
  }

  draw() {
    const route = this.displayRoute();
    this.shown = route;
    const placed = layout(route, this.saved);
    this.placed = placed;
    const byId = new Map(route.nodes.map((n) => [n.id, n]));
    const problems = new Map();
    for (const d of this.diagnostics) {
      if (d.node) problems.set(d.node, [...(problems.get(d.node) ?? []), d]);
    }
    const wires = svg("g", { class: "wires" });
    for (const { wire, points } of placed.wires) {
      const on = this.highlight?.wires?.has(wireKey(wire.original ?? wire));
      wires.append(
        svg(
          "path",
          {
            class: `wire wire--${wire.kind}${on ? " is-taken" : ""}${this.highlight && !on ? " is-dim" : ""}`,
            d: pathThrough(points),
            "data-from": `${wire.from.node}.${wire.from.pin}`,
            "data-to": `${wire.to.node}.${wire.to.pin}`,
            "marker-end": `url(#arrow-${wire.kind})`,
          },
          svg("title", { text: wire.text ?? `${wire.from.node} → ${wire.to.node} (${wire.from.pin})` }),
        ),
      );
    }
    const nodes = svg("g", { class: "nodes" });
    for (const [id, box] of placed.nodes) {
      nodes.append(this.drawNode(byId.get(id), box, problems.get(id) ?? []));
    }
    this.viewport.replaceChildren(wires, nodes);
    // A redraw (the project read again, a trace arriving) while a wire is being drawn
    // keeps the wire and the verdict on the pin under the pointer: the pin is a new
    // element now.
    if (this.wiring?.routeName === route.name) {
      this.viewport.append(this.wiring.path, this.wiring.note);
      this.markTarget(this.wiring);
    }
    this.applyView();
  }

  drawNode(node, box, problems) {
    const taken = this.highlight?.nodes?.get(node.id);
    const classes = [
      "node",
      `node--${node.type}`,
      node.id === this.selected ? "is-selected" : "",
      node.unreadable ? "is-unreadable" : "",
      problems.some((d) => d.severity === "error") ? "has-error" : problems.length ? "has-warning" : "",
      taken ? `is-taken outcome--${taken.outcome ?? "ran"}` : this.highlight ? "is-dim" : "",
    ];
    const label = node.type === "code" ? `${node.label} (${node.id})` : node.label;
    const title = clip(node.label, 24);
    const subtitle = clip(nodeSubtitle(node), 30);
    const group = svg("g", {
      class: classes.filter(Boolean).join(" "),
      transform: `translate(${box.x} ${box.y})`,
      "data-node": node.id,
    });
    // The header is the node's control: focusable, and named by what it shows (and the
    // node id and problems, which it does not).
    const extra = [node.type === "code" ? `node ${node.id}` : null, problems.length ? `${problems.length} problem${problems.length > 1 ? "s" : ""}` : null];
    group.append(
      svg("rect", { class: "node-body", width: NODE_WIDTH, height: box.h, rx: 8 }),
      svg(
        "g",
        {
          class: "node-handle",
          tabindex: 0,
          role: "button",
          "aria-label": [`${title} ${subtitle}`, ...extra].filter(Boolean).join(", "),
        },
        svg("rect", { class: "node-header", width: NODE_WIDTH, height: HEADER - 6, rx: 8 }),
        // The trailing space keeps the two lines apart in the text a screen reader reads.
        svg("text", { class: "node-label", x: 10, y: 16, text: `${title} ` }),
        svg("text", { class: "node-category", x: 10, y: 30, text: subtitle }),
      ),
    );
    if (problems.length) {
      group.append(
        svg(
          "g",
          { class: "node-problems", transform: `translate(${NODE_WIDTH - 22} 8)` },
          svg("circle", { r: 9, cx: 8, cy: 8 }),
          svg("text", { x: 8, y: 12, "text-anchor": "middle", text: problems.length }),
          svg("title", { text: problems.map((d) => `${d.code}: ${d.message}`).join("\n") }),
        ),
      );
    }
    node.inputs.forEach((pin, i) => group.append(this.drawPin(node, pin, i, "in", problems)));
    node.outputs.forEach((pin, i) => group.append(this.drawPin(node, pin, i, "out", problems)));
    group.append(svg("title", { text: [label, node.description].filter(Boolean).join("\n") }));
    return group;
  }

  drawPin(node, pin, index, side, problems) {
    const y = HEADER + ROW * index + ROW / 2;
    const x = side === "in" ? 0 : NODE_WIDTH;
    const problem = side === "in" && problems.find((d) => d.pin === pin.id);
    // An input shows the inline value the flow gives it, else its default, in brackets.
    const given = pin.value !== undefined && pin.value !== null;
    const defaulted = !given && pin.default !== undefined && pin.default !== null;
    const parts = [pin.id];
    if (!pin.sequence && side === "in" && given) parts.push(`= ${shortJson(pin.value, 14)}`);
    if (!pin.sequence && side === "in" && defaulted) parts.push(`(${shortJson(pin.default, 12)})`);
    // A field of an opened structure output reads as `.total`, indented under it.
    if (pin.field) parts[0] = `.${pin.id.split(".").at(-1)}`;
    const opens = side === "out" && this.fieldsOf(pin)?.length;
    const opened = opens && this.expanded.has(`${node.id}/${pin.id}`);
    const text = clip(parts.join(" "), side === "in" ? 22 : 20 - (opens ? 2 : 0) - (pin.depth ?? 0));
    const tip = [
      `${pin.id}: ${pin.sequence ? "sequence" : typeLabel(pin)}${pin.optional ? " (optional)" : ""}`,
      pin.description,
      pin.checks ? `checked: ${pin.checks}` : null,
      pin.default !== undefined && pin.default !== null ? `default: ${JSON.stringify(pin.default)}` : null,
      pin.value !== undefined && pin.value !== null ? `inline value: ${JSON.stringify(pin.value)}` : null,
      !pin.sequence && side === "in" ? (pin.takesInline ? "takes an inline value or a wire" : "takes a wire only") : null,
      problem ? `${problem.code}: ${problem.message}` : null,
    ];
    const marker = pin.sequence
      ? svg("path", { class: "pin-mark", d: "M -4 -5 L 4 0 L -4 5 Z" })
      : svg("circle", { class: "pin-mark", r: 4.5 });
    return svg(
      "g",
      {
        class: `pin pin--${side} pin--${typeFamily(pin)}${problem ? " has-error" : ""}`,
        transform: `translate(${x} ${y})`,
        "data-pin": pin.id,
      },
      marker,
      svg("text", {
        class: `pin-label${pin.field ? " pin-label--field" : ""}`,
        x: side === "in" ? 10 : opens ? -24 : -10,
        y: 4,
        "text-anchor": side === "in" ? "start" : "end",
        text,
      }),
      opens
        ? svg(
            "g",
            { class: "pin-expand", role: "button", tabindex: 0, "aria-expanded": opened ? "true" : "false", "aria-label": `${opened ? "Close" : "Open"} the fields of ${pin.id}` },
            svg("rect", { x: -21, y: -7, width: 10, height: 14, rx: 2 }),
            svg("text", { x: -16, y: 4, "text-anchor": "middle", text: opened ? "−" : "+" }),
          )
        : null,
      svg("title", { text: tip.filter(Boolean).join("\n") }),
    );
  }

  /** Marks the path a request took: `{nodes: Map(id → {outcome}), wires: Set(key)}`. */
  setHighlight(highlight) {
    this.highlight = highlight;
    if (this.route) this.draw();
  }

  select(id) {
    this.selected = id;
    if (this.route) this.draw();
    const node = this.route?.nodes.find((n) => n.id === id);
    if (node) this.handlers.onSelect(node);
  }

  applyView() {
    const { x, y, scale } = this.view;
    this.viewport.setAttribute("transform", `translate(${x} ${y}) scale(${scale})`);
  }

  zoom(factor, around) {
    const rect = this.root.getBoundingClientRect();
    const cx = around?.x ?? rect.width / 2;
    const cy = around?.y ?? rect.height / 2;
    const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, this.view.scale * factor));
    const k = scale / this.view.scale;
    this.view = { scale, x: cx - (cx - this.view.x) * k, y: cy - (cy - this.view.y) * k };
    this.applyView();
  }

  /** The whole flow in view (not magnified past 1), below the buttons over the canvas. */
  fit() {
    if (!this.placed) return;
    const rect = this.root.getBoundingClientRect();
    const margin = 24;
    const top = 56;
    const { width, height } = this.placed;
    const scale = Math.min(1, (rect.width - 2 * margin) / Math.max(width, 1), (rect.height - top - margin) / Math.max(height, 1));
    const s = Math.max(MIN_SCALE, scale);
    this.view = { scale: s, x: margin + (rect.width - 2 * margin - width * s) / 2, y: top };
    this.applyView();
  }

  /** A point of the page in the flow's coordinates. */
  toFlow(event) {
    const rect = this.root.getBoundingClientRect();
    return { x: (event.clientX - rect.left - this.view.x) / this.view.scale, y: (event.clientY - rect.top - this.view.y) / this.view.scale };
  }

  /** Where pin `pin` of node `id` sits, in the flow's coordinates. */
  pinPoint(id, pin, side) {
    const node = this.shown.nodes.find((n) => n.id === id);
    const box = this.placed.nodes.get(id);
    const pins = side === "in" ? node.inputs : node.outputs;
    const index = pins.findIndex((p) => p.id === pin);
    return { x: box.x + (side === "in" ? 0 : NODE_WIDTH), y: box.y + HEADER + ROW * index + ROW / 2 };
  }

  /** Opens or closes the fields of a structure output. */
  toggleFields(toggle) {
    const key = `${toggle.closest("[data-node]").dataset.node}/${toggle.closest("[data-pin]").dataset.pin}`;
    if (this.expanded.has(key)) this.expanded.delete(key);
    else this.expanded.add(key);
    this.draw();
    this.root.querySelector(`[data-node="${key.split("/")[0]}"] [data-pin="${key.split("/")[1]}"] .pin-expand`)?.focus();
  }

  /** A wire being drawn from an output pin: checked against each input it reaches (by
   *  `handlers.checkWire`, the checker's rules), drawn on release if it holds. */
  startWire(event, pinGroup) {
    const node = pinGroup.closest("[data-node]").dataset.node;
    // A field's pin (`quote.total`) is its output pin and the path read past it.
    const [pin, ...fields] = pinGroup.dataset.pin.split(".");
    const from = { node, pin, path: fields };
    const start = this.pinPoint(node, pinGroup.dataset.pin, "out");
    const path = svg("path", { class: "wire wire--drawing", d: `M ${start.x} ${start.y}` });
    const note = svg("text", { class: "wire-note", x: start.x + 8, y: start.y - 8 });
    this.viewport.append(path, note);
    // The route's name is kept: a wire drawn in one route is never saved in another the
    // canvas switched to meanwhile.
    return { kind: "wire", routeName: this.route.name, from, start, path, note, verdicts: new Map(), settled: new Map(), target: null };
  }

  moveWire(drag, event) {
    if (drag.routeName !== this.route?.name) return;
    const at = this.toFlow(event);
    drag.moved ||= Math.abs(at.x - drag.start.x) + Math.abs(at.y - drag.start.y) > 6;
    const bend = Math.max(24, Math.abs(at.x - drag.start.x) / 2);
    drag.path.setAttribute("d", `M ${drag.start.x} ${drag.start.y} C ${drag.start.x + bend} ${drag.start.y}, ${at.x - bend} ${at.y}, ${at.x} ${at.y}`);
    const pinGroup = /** @type {HTMLElement | null | undefined} */ (document.elementFromPoint(event.clientX, event.clientY)?.closest?.(".pin--in"));
    const to = pinGroup ? { node: /** @type {HTMLElement} */ (pinGroup.closest("[data-node]")).dataset.node, pin: pinGroup.dataset.pin } : null;
    const key = to ? `${to.node}.${to.pin}` : null;
    if (key === drag.target?.key) return;
    drag.target = to ? { ...to, key, at } : null;
    this.markTarget(drag);
    if (!to) return;
    if (!drag.verdicts.has(key)) {
      const verdict = this.handlers.checkWire(this.route, drag.from, to);
      drag.verdicts.set(key, verdict);
      verdict.then((settled) => {
        drag.settled.set(key, settled);
        if (drag.target?.key === key) this.markTarget(drag);
      });
    }
  }

  /** Shows the verdict on the input pin a wire is over, once the checker gave it: the
   *  pin found by its name, as a redraw may have replaced the element the pointer met. */
  markTarget(drag) {
    this.viewport.querySelectorAll(".pin.can-wire, .pin.cannot-wire").forEach((p) => p.classList.remove("can-wire", "cannot-wire"));
    const verdict = drag.target && drag.settled.get(drag.target.key);
    drag.path.classList.toggle("is-refused", verdict?.ok === false);
    drag.note.textContent = verdict?.ok === false ? verdict.message : "";
    if (!verdict) return;
    const { node, pin, at } = drag.target;
    const pinGroup = this.viewport.querySelector(`[data-node="${CSS.escape(node)}"] .pin--in[data-pin="${CSS.escape(pin)}"]`);
    pinGroup?.classList.add(verdict.ok ? "can-wire" : "cannot-wire");
    drag.note.setAttribute("x", at.x + 10);
    drag.note.setAttribute("y", at.y - 10);
  }

  async endWire(drag) {
    const target = drag.target;
    this.wiring = null;
    drag.path.remove();
    drag.note.remove();
    this.viewport.querySelectorAll(".pin.can-wire, .pin.cannot-wire").forEach((p) => p.classList.remove("can-wire", "cannot-wire"));
    if (!target) return;
    const verdict = await drag.verdicts.get(target.key);
    const to = { node: target.node, pin: target.pin };
    if (drag.routeName !== this.route?.name) return;
    if (verdict.ok) this.handlers.onWire(this.route, drag.from, to);
    else this.handlers.onRefused(verdict.message);
  }

  listen() {
    let drag = null;
    this.root.addEventListener("pointerdown", (event) => {
      const toggle = event.target.closest?.(".pin-expand");
      if (toggle) {
        event.preventDefault();
        this.toggleFields(toggle);
        return;
      }
      const outputPin = event.target.closest?.(".pin--out");
      if (outputPin && this.handlers.checkWire) {
        // No text selection, and so no native drag of it that would cancel this one.
        event.preventDefault();
        drag = this.startWire(event, outputPin);
        this.wiring = drag;
        this.root.setPointerCapture(event.pointerId);
        return;
      }
      const nodeGroup = event.target.closest?.("[data-node]");
      if (nodeGroup) {
        const id = nodeGroup.dataset.node;
        const box = this.placed.nodes.get(id);
        drag = { kind: "node", id, startX: event.clientX, startY: event.clientY, x: box.x, y: box.y, moved: false };
      } else {
        drag = { kind: "pan", startX: event.clientX, startY: event.clientY, x: this.view.x, y: this.view.y };
      }
      this.root.setPointerCapture(event.pointerId);
    });
    this.root.addEventListener("pointermove", (event) => {
      if (!drag) return;
      const dx = event.clientX - drag.startX;
      const dy = event.clientY - drag.startY;
      if (drag.kind === "wire") {
        this.moveWire(drag, event);
      } else if (drag.kind === "pan") {
        this.view = { ...this.view, x: drag.x + dx, y: drag.y + dy };
        this.applyView();
      } else if (drag.moved || Math.abs(dx) + Math.abs(dy) > 3) {
        drag.moved = true;
        this.saved[drag.id] = { x: drag.x + dx / this.view.scale, y: drag.y + dy / this.view.scale };
        this.draw();
      }
    });
    this.root.addEventListener("pointerup", () => {
      // A click on an output pin selects its node; a drag from it draws a wire.
      if (drag?.kind === "wire" && drag.moved) this.endWire(drag);
      if (drag?.kind === "wire" && !drag.moved) {
        this.wiring = null;
        drag.path.remove();
        drag.note.remove();
        this.select(drag.from.node);
      }
      if (drag?.kind === "node") {
        if (drag.moved) {
          const at = this.saved[drag.id];
          this.saved[drag.id] = { x: Math.round(at.x), y: Math.round(at.y) };
          this.handlers.onMove(this.route, { ...this.saved });
        } else {
          this.select(drag.id);
        }
      }
      drag = null;
    });
    // The browser took the pointer over (a native drag, a touch gesture): drop what was
    // being dragged, without drawing or moving anything.
    this.root.addEventListener("pointercancel", () => {
      if (drag?.kind === "wire") {
        this.wiring = null;
        drag.path.remove();
        drag.note.remove();
      }
      drag = null;
    });
    this.root.addEventListener(
      "wheel",
      (event) => {
        event.preventDefault();
        const rect = this.root.getBoundingClientRect();
        this.zoom(event.deltaY < 0 ? 1.1 : 1 / 1.1, { x: event.clientX - rect.left, y: event.clientY - rect.top });
      },
      { passive: false },
    );
    // A palette node dropped on the canvas: added where it lands.
    this.root.addEventListener("dragover", (event) => {
      if (this.handlers.onDrop && event.dataTransfer.types.includes(PALETTE_NODE)) {
        event.preventDefault();
        event.dataTransfer.dropEffect = "copy";
      }
    });
    this.root.addEventListener("drop", (event) => {
      const key = event.dataTransfer.getData(PALETTE_NODE);
      if (!key || !this.handlers.onDrop) return;
      event.preventDefault();
      const at = this.toFlow(event);
      this.handlers.onDrop(key, { x: Math.round(at.x - NODE_WIDTH / 2), y: Math.round(at.y - HEADER / 2) });
    });
    this.root.addEventListener("keydown", (event) => {
      const nodeGroup = event.target.closest?.("[data-node]");
      const toggle = event.target.closest?.(".pin-expand");
      if (toggle && (event.key === "Enter" || event.key === " ")) {
        event.preventDefault();
        this.toggleFields(toggle);
      } else if (nodeGroup && (event.key === "Enter" || event.key === " ")) {
        event.preventDefault();
        this.select(nodeGroup.dataset.node);
        this.root.querySelector(`[data-node="${CSS.escape(nodeGroup.dataset.node)}"] .node-handle`)?.focus();
      } else if (event.key === "+" || event.key === "=") {
        this.zoom(1.2);
      } else if (event.key === "-") {
        this.zoom(1 / 1.2);
      } else if (event.key === "0") {
        this.fit();
      }
    });
  }
}

/** The fields of a structure pin (`object:Quote`, by `structures`: name → fields) and of
 *  a code node's `failure`, or nothing. */
export function structureFields(pin, structures) {
  if (pin.id === "failure" && pin.type === "object") return FAILURE_FIELDS;
  const match = /^object:([^:]+)$/.exec(pin.sequence ? "" : (pin.type ?? ""));
  return match ? structures?.get(match[1]) : undefined;
}

/** A wire's identity, for highlighting. */
export function wireKey(wire) {
  return `${wire.kind}:${wire.from.node}.${wire.from.pin}->${wire.to.node}.${wire.to.pin}`;
}

function nodeSubtitle(node) {
  if (node.unreadable) return `${node.type.replace(/-/g, " ")} · not read`;
  switch (node.type) {
    case "code":
      return `${node.category} · ${node.nodeKey}${node.language === "typescript" ? " · TS" : ""}`;
    case "return-json":
      return `Return JSON · ${node.config.find(([k]) => k === "status")?.[1] ?? ""}`;
    case "start":
      return node.config.map(([, v]) => v).reverse().join(" ");
    default:
      return node.type.replace(/-/g, " ");
  }
}

function clip(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A smooth path through the points: straight across each column, curved in the gaps. */
function pathThrough(points) {
  let d = `M ${points[0].x} ${points[0].y}`;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1];
    const b = points[i];
    if (a.y === b.y && i % 2 === 0) {
      d += ` L ${b.x} ${b.y}`;
    } else {
      const bend = Math.max(24, Math.abs(b.x - a.x) / 2);
      d += ` C ${a.x + bend} ${a.y}, ${b.x - bend} ${b.y}, ${b.x} ${b.y}`;
    }
  }
  return d;
}

function arrowMarker(id) {
  return svg(
    "marker",
    { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
    svg("path", { d: "M 0 0 L 10 5 L 0 10 z" }),
  );
}
