// @ts-check
// The side panel: what the selected node is, how it is set, each of its pins (type,
// optional or required, default, inline value, wire), and the problems placed on it.

import { el, typeLabel } from "./dom.js";

/** A table of pins; inputs (`side: "in"`) say whether they are required and how they
 *  take a value, outputs only whether they may be left out. */
export function pinTable(pins, { side = "in", showValues = false } = {}) {
  if (!pins.length) return el("p", { class: "muted" }, "None.");
  return el(
    "table",
    { class: "pins" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Pin"), el("th", { scope: "col" }, "Type"), el("th", { scope: "col" }, "Notes"))),
    el(
      "tbody",
      {},
      pins.map((pin) =>
        el(
          "tr",
          { "data-pin": pin.id },
          el("th", { scope: "row" }, el("code", {}, pin.id)),
          el("td", {}, el("code", {}, pin.sequence ? "sequence" : typeLabel(pin))),
          el(
            "td",
            {},
            [
              // An input with a default need not be wired: it is not "required".
              pin.sequence ? null : pin.optional ? "optional" : side === "in" && (pin.default === undefined || pin.default === null) ? "required" : null,
              pin.default !== undefined && pin.default !== null ? `default ${JSON.stringify(pin.default)}` : null,
              !pin.sequence && side === "in" ? (pin.takesInline ? "inline value or wire" : "wire only") : null,
              showValues && pin.value !== undefined && pin.value !== null ? `set to ${JSON.stringify(pin.value)}` : null,
            ]
              .filter(Boolean)
              .join(" · "),
            pin.description ? el("div", { class: "pin-description" }, pin.description) : null,
            pin.checks ? el("div", { class: "pin-checks" }, `checked: ${pin.checks}`) : null,
          ),
        ),
      ),
    ),
  );
}

/** The panel for `node` of `route`, with `form` (its settings, editable) when given, and
 *  a Remove button on each wire when `unwire(wire)` is. */
export function nodePanel(route, node, diagnostics, form = null, unwire = null) {
  const remove = (w) =>
    unwire ? el("button", { type: "button", class: "link-button", "data-unwire": `${w.from.node}.${w.from.pin}->${w.to.node}.${w.to.pin}`, onclick: () => unwire(w) }, "Remove") : null;
  const wiresIn = route.wires.filter((w) => w.to.node === node.id);
  const wiresOut = route.wires.filter((w) => w.from.node === node.id);
  const problems = diagnostics.filter((d) => d.node === node.id);
  // What the form edits is shown there only.
  const editable = new Set(form ? (node.settings ?? []).map((s) => s.label) : []);
  const config = node.config.filter(([k]) => !editable.has(k));
  return el(
    "section",
    { class: "inspector", "aria-label": `Node ${node.id}` },
    el("h2", {}, node.label),
    el(
      "p",
      { class: "muted" },
      [node.type === "code" ? `${node.nodeKey} · ${node.language === "typescript" ? "TypeScript" : "Rust"}` : node.type, `id ${node.id}`, `line ${node.line}`].join(" · "),
    ),
    node.unreadable
      ? el(
          "p",
          { class: "unreadable-note" },
          `svc could not read this node, so it is drawn with its settings and edges as ${route.file} writes them. Put right what is marked below, here or in the file.`,
        )
      : null,
    node.description ? el("p", {}, node.description) : null,
    problems.length
      ? el(
          "ul",
          // Focusable: a long list scrolls, and a keyboard must reach it.
          { class: "problems", tabindex: "0", "aria-label": "Problems of this node" },
          problems.map((d) =>
            el("li", { class: `problem problem--${d.severity}` }, el("strong", {}, d.code), " ", d.message, d.help ? el("div", { class: "muted" }, d.help) : null),
          ),
        )
      : null,
    config.length
      ? el(
          "dl",
          { class: "config" },
          config.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]),
        )
      : null,
    form,
    el("h3", {}, "Inputs"),
    pinTable(node.inputs, { showValues: true }),
    wiresIn.some((w) => w.kind === "data")
      ? el(
          "ul",
          { class: "wires-list" },
          wiresIn.filter((w) => w.kind === "data").map((w) => el("li", {}, el("code", {}, w.to.pin), " ← ", el("code", {}, w.text), " ", remove(w))),
        )
      : null,
    el("h3", {}, "Outputs"),
    pinTable(node.outputs, { side: "out" }),
    wiresOut.some((w) => w.kind === "sequence")
      ? el(
          "ul",
          { class: "wires-list" },
          wiresOut
            .filter((w) => w.kind === "sequence")
            .map((w) => el("li", {}, el("code", {}, w.from.pin), " → ", el("code", {}, w.to.node), " ", w.from.node === "(start)" && w.kind === "sequence" ? null : remove(w))),
        )
      : null,
  );
}
