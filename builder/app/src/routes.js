// @ts-check
// The route list in the sidebar (each route's methods, path, summary, protections and
// problems, the open one marked) and the form that makes a new route.

import { api } from "./api.js";
import { el } from "./dom.js";

/** @typedef {import("./model").Model} Model */

export class RouteList {
  /**
   * @param {HTMLElement} host the sidebar's list
   * @param {{ say: (message: string, isError?: boolean) => void, created: (name: string) => Promise<void> }} handlers
   *   `created(name)` opens a route the form made
   */
  constructor(host, { say, created }) {
    this.host = host;
    this.say = say;
    this.created = created;
    /** @type {Model | null} */
    this.model = null;
    /** @type {string | null} */
    this.current = null;
    /** The new route's form, while it is open. @type {HTMLFormElement | null} */
    this.form = null;
  }

  /**
   * Lists `model`'s routes, `current` marked as the one open.
   * @param {Model} model
   * @param {string | null} current
   */
  render(model, current) {
    this.model = model;
    this.current = current;
    const list = model.routes.map((r) => {
      const problems = model.diagnostics.filter((d) => d.route === r.name);
      return el(
        "li",
        {},
        el(
          "a",
          {
            href: `#/flows/${encodeURIComponent(r.name)}`,
            class: "route-link",
            "data-route": r.name,
            // The file version shown (what edits are made against).
            "data-version": r.version,
            "aria-current": r.name === current ? "true" : "false",
          },
          el("span", { class: "route-methods" }, r.methods.map((m) => el("span", { class: `method method--${m.toLowerCase()}` }, m))),
          el("span", { class: "route-path" }, r.path),
          r.summary ? el("span", { class: "route-summary" }, r.summary) : null,
          el(
            "span",
            { class: "route-badges" },
            r.protections.map((p) => el("span", { class: `badge badge--${p}` }, badgeOf(model, p))),
            problems.length ? el("span", { class: "badge badge--problem" }, `${problems.length} problem${problems.length > 1 ? "s" : ""}`) : null,
          ),
        ),
      );
    });
    this.host.replaceChildren(
      el("h2", { class: "sidebar-title" }, "Routes"),
      this.form ?? el("button", { type: "button", class: "new-route", onclick: () => this.open() }, "New route"),
      list.length ? el("ul", { class: "route-list" }, list) : el("p", { class: "muted" }, "No flows yet: add one under flows/."),
    );
  }

  /** Marks `name` as the route open. @param {string} name */
  mark(name) {
    this.current = name;
    for (const link of /** @type {NodeListOf<HTMLElement>} */ (this.host.querySelectorAll(".route-link"))) {
      link.setAttribute("aria-current", link.dataset.route === name ? "true" : "false");
    }
  }

  redraw() {
    if (this.model) this.render(this.model, this.current);
  }

  /** The form of a new route: its file name, path, methods, summary, request body, query
   *  parameters and headers. */
  open() {
    const name = el("input", { type: "text", name: "name", required: true, placeholder: "create-order", pattern: "[A-Za-z0-9][A-Za-z0-9_-]*" });
    const path = el("input", { type: "text", name: "route", required: true, placeholder: "orders/{id}" });
    const summary = el("input", { type: "text", name: "summary", placeholder: "What it does" });
    const assets = this.model?.assets ?? { enums: [], structures: [], secrets: [] };
    const body = el(
      "select",
      { name: "body" },
      el("option", { value: "" }, "(no body)"),
      (assets.structures ?? []).map((s) => el("option", { value: `object:${s.name}` }, s.name)),
    );
    const types = ["string", "number", "boolean", ...(assets.enums ?? []).map((e) => `enum-value:${e.name}`)];
    const query = inputRows("query parameter", "name", types);
    const headers = inputRows("header", "x-request-id", types);
    const methods = ["GET", "POST", "PUT", "PATCH", "DELETE"].map((m) => el("label", { class: "method-choice" }, el("input", { type: "checkbox", value: m, checked: m === "GET" }), ` ${m}`));
    const close = () => {
      this.form = null;
      this.redraw();
    };
    const form = el(
      "form",
      { class: "new-route-form node-form", "aria-label": "New route" },
      el("div", { class: "field" }, el("label", {}, "File name (flows/…yaml)", name)),
      el("div", { class: "field" }, el("label", {}, "Path", path)),
      el("fieldset", { class: "field" }, el("legend", {}, "Methods"), methods),
      el("div", { class: "field" }, el("label", {}, "Summary", summary)),
      el("div", { class: "field" }, el("label", {}, "Request body", body)),
      el("fieldset", { class: "field" }, el("legend", {}, "Query parameters"), query.element),
      el("fieldset", { class: "field" }, el("legend", {}, "Headers"), headers.element),
      el("div", { class: "node-actions" }, el("button", { type: "submit" }, "Create"), el("button", { type: "button", onclick: close }, "Cancel")),
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const request = {
        name: name.value.trim(),
        route: path.value.trim().replace(/^\/+/, ""),
        methods: methods.map((l) => /** @type {HTMLInputElement} */ (l.querySelector("input"))).filter((i) => i.checked).map((i) => i.value),
        summary: summary.value.trim() || undefined,
        body: body.value || undefined,
        query: query.values(),
        headers: headers.values(),
      };
      try {
        const created = await api("POST", "/api/flows", request);
        this.say(`Created flows/${created.name}.yaml.`);
        close();
        await this.created(created.name);
      } catch (e) {
        this.say(`Not created: ${e instanceof Error ? e.message : e}`, true);
      }
    });
    this.form = form;
    this.redraw();
    name.focus();
  }
}

/** A built-in node type's short name, from the server's table of them.
 *  @param {Model} model @param {string} type */
function badgeOf(model, type) {
  return model.nodeTypes?.find((t) => t.type === type)?.badge ?? type;
}

/** Rows of request inputs (a name, a type, required), with Add and Remove. */
function inputRows(what, placeholder, types) {
  const list = el("ul", { class: "input-rows" });
  const add = () => {
    const row = el(
      "li",
      { class: "input-row" },
      el("input", { type: "text", class: "input-name", "aria-label": `The ${what}'s name`, placeholder }),
      el("select", { class: "input-type", "aria-label": `The ${what}'s type` }, types.map((t) => el("option", { value: t }, t))),
      el("label", { class: "input-required" }, el("input", { type: "checkbox" }), " required"),
      el("button", { type: "button", class: "link-button", onclick: () => row.remove() }, "Remove"),
    );
    list.append(row);
    row.querySelector("input").focus();
  };
  return {
    element: [list, el("button", { type: "button", class: "link-button", "data-add-input": what, onclick: add }, `Add a ${what}`)],
    values: () =>
      [...list.children]
        .map((row) => ({
          name: row.querySelector(".input-name").value.trim(),
          type: row.querySelector(".input-type").value,
          required: row.querySelector(".input-required input").checked,
        }))
        .filter((i) => i.name),
  };
}
