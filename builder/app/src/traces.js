// @ts-check
// Live traces: each request `svc dev`'s server answers, as it arrives. Selecting one
// marks on the canvas the path it took (each node's outcome), and the side panel shows
// the request, each step's duration, inputs, outputs, failure and logs, and Replay.
// Credentials never get here: the server redacts them (`compiler/src/builder/traces.rs`).

import { longPoll } from "./api.js";
import { el } from "./dom.js";
import { wireKey } from "./canvas.js";

const KEEP = 200;

export class TraceList {
  /**
   * @param {HTMLElement} host the list's place in the sidebar
   * @param {(trace) => void} onSelect
   */
  constructor(host, onSelect) {
    this.host = host;
    this.onSelect = onSelect;
    this.traces = [];
    this.selected = null;
    this.live = false;
  }

  /** Polls for new traces for as long as the page is open. */
  follow() {
    return longPoll("/api/traces", (answer, after) => {
      this.live = answer.live;
      if (!answer.live) {
        this.render();
        return null;
      }
      if (answer.traces.length) {
        this.traces = [...this.traces, ...answer.traces].slice(-KEEP);
        this.render();
        return answer.traces.at(-1).seq;
      }
      if (after === undefined) {
        this.render();
        return -1;
      }
      return after;
    });
  }

  render() {
    if (!this.live) {
      this.host.replaceChildren();
      return;
    }
    const items = [...this.traces].reverse().map((t) =>
      el(
        "li",
        {},
        el(
          "button",
          {
            type: "button",
            class: "trace-item",
            "data-trace": t.seq,
            "aria-pressed": this.selected?.seq === t.seq ? "true" : "false",
            onclick: () => this.select(t),
          },
          el("span", { class: `http-status http-status--${Math.floor(t.status / 100)}xx` }, String(t.status)),
          el("span", { class: "trace-what" }, `${t.method} ${t.path}`),
          el("span", { class: "trace-time" }, `${(t.durationUs / 1000).toFixed(1)} ms`),
        ),
      ),
    );
    this.host.replaceChildren(
      el("h2", { class: "sidebar-title" }, "Requests"),
      items.length ? el("ul", { class: "trace-list" }, items) : el("p", { class: "muted" }, "Requests to the dev server appear here as they are answered."),
    );
  }

  select(trace) {
    this.selected = trace;
    this.render();
    this.onSelect(trace);
  }
}

/** What a trace lit up on `route`: nodes by id with their outcome, and wire keys. */
export function highlightOf(route, trace) {
  const nodes = new Map();
  const wires = new Set();
  if (!trace.steps.length && !route) return { nodes, wires };
  const start = route.nodes[0]?.id;
  const first = route.wires.find((w) => w.kind === "sequence" && w.from.node === start);
  if (first) {
    nodes.set(start, { outcome: "start" });
    wires.add(wireKey(first));
    nodes.set(first.to.node, { outcome: "ran" });
  }
  trace.steps.forEach((step) => {
    nodes.set(step.node, { outcome: step.outcome === "on_fail" || step.failure ? "failed" : "ran", step });
    const taken = route.wires.find((w) => w.kind === "sequence" && w.from.node === step.node && w.from.pin === step.outcome);
    if (taken) {
      wires.add(wireKey(taken));
      if (!nodes.has(taken.to.node)) nodes.set(taken.to.node, { outcome: "ran" });
    }
  });
  // The data wires into the nodes that ran, from nodes that ran.
  for (const w of route.wires) {
    if (w.kind === "data" && nodes.has(w.from.node) && nodes.has(w.to.node)) wires.add(wireKey(w));
  }
  return { nodes, wires };
}

/** How long each step took: from the previous step's end to its own. */
function durations(trace) {
  let previous = 0;
  return trace.steps.map((s) => {
    const d = s.finishedUs === undefined ? null : s.finishedUs - previous;
    if (s.finishedUs !== undefined) previous = s.finishedUs;
    return d;
  });
}

const json = (value) => el("pre", { class: "json" }, JSON.stringify(value, null, 2));

/** The side panel for a trace. */
export function tracePanel(trace, onReplay) {
  const took = durations(trace);
  return el(
    "section",
    { class: "inspector", "aria-label": "Request" },
    el("h2", {}, `${trace.method} ${trace.path}`),
    el(
      "p",
      { class: "muted" },
      `${trace.status} · ${(trace.durationUs / 1000).toFixed(2)} ms · route ${trace.route} · request ${trace.id}`,
    ),
    el("button", { type: "button", class: "replay", onclick: onReplay }, "Replay"),
    el("h3", {}, "Steps"),
    el(
      "ol",
      { class: "steps" },
      trace.steps.map((s, i) =>
        el(
          "li",
          { "data-step": s.node },
          el("code", {}, s.node),
          " → ",
          el("strong", {}, s.outcome),
          took[i] === null ? null : el("span", { class: "muted" }, ` ${(took[i] / 1000).toFixed(2)} ms`),
          s.failure ? el("div", { class: "error" }, `${s.failure.code ? `${s.failure.code}: ` : ""}${s.failure.message}`) : null,
        ),
      ),
    ),
    trace.logs.length
      ? [el("h3", {}, "Logs"), el("ul", { class: "logs" }, trace.logs.map((l) => el("li", {}, el("code", {}, l.node), ` ${l.message}`)))]
      : null,
    el("h3", {}, "Request headers"),
    el(
      "table",
      { class: "headers" },
      el("tbody", {}, trace.headers.map(([name, value]) => el("tr", {}, el("th", { scope: "row" }, name), el("td", {}, value)))),
    ),
    trace.query ? [el("h3", {}, "Query"), el("code", {}, trace.query)] : null,
    trace.body ? [el("h3", {}, `Body (${trace.body.bytes} bytes${trace.body.cut ? ", cut" : ""})`), el("pre", { class: "json" }, pretty(trace.body.text))] : null,
  );
}

/** A node's part of a trace: how it went, its inputs, outputs and logs. */
export function stepPanel(trace, nodeId) {
  const index = trace.steps.findIndex((s) => s.node === nodeId);
  if (index < 0) return el("p", { class: "muted" }, "This request did not reach this node.");
  const step = trace.steps[index];
  const logs = trace.logs.filter((l) => l.node === nodeId);
  return el(
    "section",
    { class: "step", "aria-label": `What ${nodeId} did` },
    el("h3", {}, "In this request"),
    el("p", {}, "Left by ", el("strong", {}, step.outcome), ` (${(durations(trace)[index] / 1000).toFixed(2)} ms)`),
    step.failure ? el("p", { class: "error" }, `${step.failure.code ? `${step.failure.code}: ` : ""}${step.failure.message}`) : null,
    step.inputs !== undefined ? [el("h3", {}, "Inputs"), json(step.inputs)] : null,
    step.outputs !== undefined ? [el("h3", {}, "Outputs"), json(step.outputs)] : null,
    logs.length ? [el("h3", {}, "Logs"), el("ul", { class: "logs" }, logs.map((l) => el("li", {}, l.message)))] : null,
  );
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
