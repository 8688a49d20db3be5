// @ts-check
// The project's name and its problems: the count in the top bar, and the drawer listing
// every diagnostic `svc check` gives, each a link to where it is.

import { el } from "./dom.js";

/** @typedef {import("./model").Model} Model */
/** @typedef {import("./model").Diagnostic} Diagnostic */

const $ = (/** @type {string} */ selector) => /** @type {HTMLElement} */ (document.querySelector(selector));

export class Problems {
  /** @param {(d: Diagnostic) => void} goTo shows where a problem is */
  constructor(goTo) {
    this.goTo = goTo;
    $("#problems-toggle").addEventListener("click", () => this.toggle());
  }

  /** @param {Model} model */
  render(model) {
    const { project, diagnostics } = model;
    $("#project-name").textContent = project.name || "(unnamed project)";
    const button = $("#problems-toggle");
    const { errors, warnings } = project;
    button.textContent = errors || warnings ? `${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}` : "No problems";
    button.className = errors ? "problems-toggle has-error" : warnings ? "problems-toggle has-warning" : "problems-toggle";
    const list = $("#problems-list");
    list.replaceChildren(
      ...diagnostics.map((d) =>
        el(
          "li",
          { class: `problem problem--${d.severity}` },
          el(
            "button",
            { type: "button", class: "problem-link", onclick: () => this.goTo(d) },
            el("strong", {}, `${d.severity} ${d.code}`),
            ` ${d.message} `,
            el("span", { class: "muted" }, `${d.file}:${d.line}:${d.column}`),
          ),
          d.help ? el("div", { class: "muted problem-help" }, d.help) : null,
        ),
      ),
    );
    if (!diagnostics.length) list.replaceChildren(el("li", { class: "muted" }, "svc check finds no problems."));
  }

  /** Opens or closes the drawer (`open` unset: the other way). @param {boolean} [open] */
  toggle(open) {
    const drawer = $("#problems");
    const show = open ?? drawer.hidden;
    drawer.hidden = !show;
    $("#problems-toggle").setAttribute("aria-expanded", String(show));
  }
}
