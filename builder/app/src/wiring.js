// @ts-check
// Wiring without a mouse: in the inspector, each sequence output of the selected node
// chooses the node it leads to, and each data input the output or request value it reads
// (a structure's fields listed too). The server checks each choice as it checks a wire
// drawn on the canvas, and a refused one says why in the status line.

import { structureFields } from "./canvas.js";
import { el } from "./dom.js";

/**
 * @param {object} route the route, as the model has it
 * @param {object} node the selected node
 * @param {object} assets the project's assets (a structure output lists its fields)
 * @param {{wire: (from, to) => void, unwireEdge: (pin) => void}} actions
 */
export function wiringForm(route, node, assets, { wire, unwireEdge }) {
  const rows = [];
  const targets = route.nodes.filter((n) => n.id !== node.id && n.type !== "start");
  for (const pin of node.outputs.filter((p) => p.sequence)) {
    const current = route.wires.find((w) => w.kind === "sequence" && w.from.node === node.id && w.from.pin === pin.id)?.to.node ?? "";
    const select = el(
      "select",
      { "data-next": pin.id },
      el("option", { value: "" }, "(not wired)"),
      targets.map((n) => el("option", { value: n.id, selected: n.id === current }, n.id)),
    );
    select.addEventListener("change", () => {
      if (select.value) wire({ node: node.id, pin: pin.id, path: [] }, { node: select.value, pin: "exec" });
      else if (current && node.type !== "start") unwireEdge(pin.id);
    });
    rows.push(row(`${pin.id} →`, select));
  }
  if (node.type === "code" || node.type === "return-json") {
    const sources = valueSources(route, node, assets);
    for (const pin of node.inputs.filter((p) => !p.sequence)) {
      const wired = route.wires.find((w) => w.kind === "data" && w.to.node === node.id && w.to.pin === pin.id);
      const select = el(
        "select",
        { "data-wire-from": pin.id },
        el("option", { value: "" }, wired ? (wired.text ?? `${wired.from.node}.${wired.from.pin}`) : "(choose a source)"),
        sources.map((s, i) => el("option", { value: String(i) }, s.label)),
      );
      select.addEventListener("change", () => {
        const source = sources[Number(select.value)];
        if (select.value !== "" && source) wire(source.from, { node: node.id, pin: pin.id });
      });
      rows.push(row(`${pin.id} ←`, select));
    }
  }
  if (!rows.length) return null;
  return el("form", { class: "node-form wiring-form", "aria-label": `Wires of ${node.id}`, onsubmit: (e) => e.preventDefault() }, el("h3", {}, "Wire"), rows);
}

/** Every value a node's input can read: the other nodes' data outputs and the request's,
 *  each structure's fields after it. */
function valueSources(route, node, assets) {
  const structures = new Map((assets?.structures ?? []).map((s) => [s.name, s.fields]));
  const out = [];
  for (const n of route.nodes) {
    if (n.id === node.id) continue;
    for (const pin of n.outputs.filter((p) => !p.sequence)) {
      // Start's pins are the request's (`body`, `query.page`).
      const [first, ...rest] = pin.id.split(".");
      const from = { node: n.id, pin: first, path: rest };
      const name = n.type === "start" ? `request.${pin.id}` : `${n.id}.${pin.id}`;
      out.push({ from, label: name });
      for (const field of structureFields(pin, structures) ?? []) {
        out.push({ from: { ...from, path: [...rest, field.name] }, label: `${name}.${field.name}` });
      }
    }
  }
  return out;
}

function row(label, control) {
  const id = `wire-${Math.random().toString(36).slice(2)}`;
  control.id = id;
  return el("div", { class: "field" }, el("label", { for: id }, label), control);
}
