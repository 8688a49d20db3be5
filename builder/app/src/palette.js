// @ts-check
// The palette: every node a flow of this project can use, built-in and code nodes,
// grouped by category and searchable by label, key, category and description.

import { el } from "./dom.js";
import { pinTable } from "./inspector.js";

/** Whether `node` matches every word of `query`. */
export function matches(node, query) {
  const haystack = [node.label, node.key, node.category, node.description ?? ""].join(" ").toLowerCase();
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((word) => haystack.includes(word));
}

/** The drag data type of a palette node (its key) dragged onto the canvas. */
export const PALETTE_NODE = "application/x-svc-palette-node";

export class Palette {
  /**
   * `onAdd(node)` adds a palette node to the open flow; `target()` names that flow.
   * @param {HTMLElement} host
   * @param {(panel: HTMLElement | null) => void} onShow
   * @param {{ onAdd?: (node: import("./model").PaletteNode) => void, target?: () => string | null }} handlers
   */
  constructor(host, onShow, { onAdd, target } = {}) {
    this.host = host;
    this.onShow = onShow;
    this.onAdd = onAdd;
    this.target = target ?? (() => null);
    this.query = "";
    this.search = el("input", {
      type: "search",
      class: "palette-search",
      placeholder: "Search nodes",
      "aria-label": "Search the palette",
      oninput: () => {
        this.query = this.search.value;
        this.renderList();
      },
    });
    this.list = el("div", { class: "palette-list" });
    host.replaceChildren(this.search, this.list);
  }

  show(palette) {
    this.palette = palette;
    this.renderList();
  }

  /** The palette node with key `key`. */
  find(key) {
    return (this.palette ?? []).find((n) => n.key === key);
  }

  renderList() {
    const found = (this.palette ?? []).filter((n) => matches(n, this.query));
    const categories = [...new Set(found.map((n) => n.category))].sort();
    if (!found.length) {
      this.list.replaceChildren(el("p", { class: "muted" }, `No node matches “${this.query}”.`));
      return;
    }
    this.list.replaceChildren(
      ...categories.map((category) =>
        el(
          "section",
          { class: "palette-group" },
          el("h3", {}, category),
          el(
            "ul",
            {},
            found
              .filter((n) => n.category === category)
              .map((n) =>
                el(
                  "li",
                  {},
                  el(
                    "button",
                    {
                      type: "button",
                      class: "palette-item",
                      "data-key": n.key,
                      // Dragged onto the canvas, it is added where it is dropped.
                      draggable: "true",
                      ondragstart: (event) => {
                        event.dataTransfer.setData(PALETTE_NODE, n.key);
                        event.dataTransfer.effectAllowed = "copy";
                      },
                      onclick: () => this.onShow(details(n, this.onAdd, this.target())),
                    },
                    el("span", { class: "palette-label" }, n.label),
                    el("span", { class: "palette-key" }, n.key),
                    el("span", { class: `badge badge--${n.language}` }, n.language),
                  ),
                ),
              ),
          ),
        ),
      ),
    );
  }
}

/** The panel for one palette node, with a button that adds it to flow `target`. */
function details(n, onAdd, target) {
  return el(
    "section",
    { class: "inspector", "aria-label": `Palette node ${n.key}` },
    el("h2", {}, n.label),
    el("p", { class: "muted" }, `${n.key} · ${n.category} · ${n.language}`),
    onAdd && target ? el("button", { type: "button", class: "primary", "data-add": n.key, onclick: () => onAdd(n) }, `Add to ${target}`) : null,
    n.description ? el("p", {}, n.description) : el("p", { class: "muted" }, "No description."),
    el("h3", {}, "Inputs"),
    pinTable(n.inputs),
    el("h3", {}, "Outputs"),
    pinTable(n.outputs, { side: "out" }),
  );
}
