// The Builder's shell: the route list, the canvas, the palette, Settings, the inspector
// and the problems list, kept in step with the project on disk.
//
// Addresses: `#/flows/<route>`, `#/palette`, `#/settings`. The project is read again every
// two seconds (the server checks it as `svc check` does); a change redraws what it
// touches and keeps the selection.

import { api } from "./api.js";
import { Canvas } from "./canvas.js";
import { CodeView } from "./code.js";
import { followDevStatus } from "./devstatus.js";
import { el } from "./dom.js";
import { Editor, nodeForm } from "./editing.js";
import { freeSpot, nodeHeight } from "./layout.js";
import { nodePanel } from "./inspector.js";
import { Palette } from "./palette.js";
import { Settings } from "./settings.js";
import { TraceList, highlightOf, stepPanel, tracePanel } from "./traces.js";
import { wiringForm } from "./wiring.js";

const REFRESH_MS = 2000;

const $ = (selector) => document.querySelector(selector);

class Builder {
  constructor() {
    this.model = null;
    this.text = "";
    // Readings of the project: how many were begun, the newest shown, and the newest
    // begun before this Builder's last write (see `refresh`).
    this.readings = 0;
    this.shownReading = 0;
    this.staleUpTo = 0;
    this.routeName = null;
    this.positions = {};
    this.canvas = new Canvas($("#canvas"), {
      onSelect: (node) => this.inspect(node),
      onMove: (route, positions) => this.savePositions(route, positions),
      checkWire: (route, from, to) =>
        api("POST", `/api/flows/${encodeURIComponent(route.name)}/wire`, { base: route.version, from, to, check: true }).catch((e) => ({ ok: false, message: e.message })),
      onWire: (route, from, to) => this.editor.wire(route, from, to),
      onRefused: (message) => this.say(`Not wired: ${message}`, true),
      onDrop: (key, at) => {
        const n = this.palette.find(key);
        if (n) this.addNode(n, at);
      },
    });
    this.palette = new Palette($("#palette"), (panel) => this.showPanel(panel), {
      onAdd: (n) => this.addNode(n),
      target: () => this.routeName,
    });
    this.code = new CodeView($("#code"), (id) => this.canvas.select(id));
    $("#code-toggle").addEventListener("click", () => this.toggleCode());
    $("#sidebar-toggle").addEventListener("click", () => this.toggleSidebar());
    this.settings = new Settings($("#settings"), (message, isError) => this.say(message, isError));
    this.editor = new Editor({
      onSaved: () => {
        this.forceInspect = true;
        // A reading begun before this write answers with the file as it was.
        this.staleUpTo = this.readings;
        return this.refresh();
      },
      say: (message, isError, action) => this.say(message, isError, action),
    });
    this.trace = null;
    this.traceList = new TraceList($("#traces"), (trace) => this.showTrace(trace));
    window.addEventListener("hashchange", () => this.navigate());
    $("#problems-toggle").addEventListener("click", () => this.toggleProblems());
    $("#panel-close").addEventListener("click", () => this.showPanel(null));
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.showPanel(null);
      const typing = event.target.closest?.("input, textarea, select");
      if (event.key === "[" && !typing) this.toggleSidebar();
      // Undo and redo of flow edits (in a field, the browser's own undo of the text).
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "z" && !typing) {
        event.preventDefault();
        if (event.shiftKey) this.editor.redo();
        else this.editor.undo();
      }
      // The selected node: Delete deletes it, F2 renames it.
      if (!typing && this.view === "flows" && this.canvas.selected && this.canvas.selected !== "(start)") {
        if (event.key === "Delete") this.deleteNode(this.canvas.selected);
        if (event.key === "F2") this.renameNode(this.canvas.selected);
      }
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "y" && !typing) {
        event.preventDefault();
        this.editor.redo();
      }
    });
  }

  async start() {
    await this.refresh();
    this.navigate();
    this.traceList.follow();
    // A new server: its project is read at once, not at the next periodic refresh.
    followDevStatus($("#dev-status"), () => this.refresh().catch(() => {}));
    setInterval(() => {
      if (document.visibilityState === "visible") this.refresh().catch(() => {});
    }, REFRESH_MS);
  }

  async refresh() {
    // Readings overlap (the periodic one, svc dev's "serving", each save's) and can
    // answer out of order: one begun before a write of this Builder, or older than the
    // one on screen, would put an older file back, and an edit made from that form
    // would be refused as a conflict with the Builder's own write.
    const reading = ++this.readings;
    let model;
    try {
      model = await api("GET", "/api/project");
    } catch (e) {
      this.say(`Cannot read the project: ${e.message}`, true);
      return;
    }
    if (reading <= this.staleUpTo || reading < this.shownReading) return;
    this.shownReading = reading;
    const text = JSON.stringify(model);
    if (text === this.text) {
      // An edit of ours may have been read back by the periodic refresh already: its
      // form is drawn again all the same.
      if (this.forceInspect && this.view === "flows" && this.routeName) await this.showRoute(this.routeName, { keepPositions: true });
      return;
    }
    this.text = text;
    this.model = model;
    this.editor.seen(model.routes);
    this.renderHeader();
    this.renderRoutes();
    this.renderProblems();
    this.palette.show(model.palette);
    if (this.view === "flows" && this.routeName) await this.showRoute(this.routeName, { keepPositions: true });
  }

  navigate() {
    // Links within Settings (`#keys-title`) scroll, they do not change the view.
    if (location.hash && !location.hash.startsWith("#/")) return;
    const [, view = "flows", name] = (location.hash || "#/flows").split("/");
    this.view = ["flows", "palette", "settings"].includes(view) ? view : "flows";
    for (const tab of document.querySelectorAll("[data-view]")) {
      const on = tab.dataset.view === this.view;
      tab.setAttribute("aria-current", on ? "page" : "false");
    }
    $("#routes").hidden = this.view !== "flows";
    $("#traces").hidden = this.view !== "flows";
    $("#palette").hidden = this.view !== "palette";
    $("#settings-nav").hidden = this.view !== "settings";
    $("#canvas").hidden = this.view === "settings";
    $("#settings").hidden = this.view !== "settings";
    if (this.view === "settings") {
      this.showPanel(null);
      this.settings.show(this.model);
      return;
    }
    const routes = this.model?.routes ?? [];
    const wanted = decodeURIComponent(name ?? this.routeName ?? routes[0]?.name ?? "");
    if (this.trace && this.routeOf(this.trace)?.name !== wanted) this.clearTrace();
    if (routes.some((r) => r.name === wanted)) this.showRoute(wanted);
  }

  renderHeader() {
    const { project } = this.model;
    $("#project-name").textContent = project.name || "(unnamed project)";
    const button = $("#problems-toggle");
    const { errors, warnings } = project;
    button.textContent = errors || warnings ? `${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}` : "No problems";
    button.className = errors ? "problems-toggle has-error" : warnings ? "problems-toggle has-warning" : "problems-toggle";
  }

  renderRoutes() {
    const list = this.model.routes.map((r) => {
      const problems = this.model.diagnostics.filter((d) => d.route === r.name);
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
            "aria-current": r.name === this.routeName ? "true" : "false",
          },
          el("span", { class: "route-methods" }, r.methods.map((m) => el("span", { class: `method method--${m.toLowerCase()}` }, m))),
          el("span", { class: "route-path" }, r.path),
          r.summary ? el("span", { class: "route-summary" }, r.summary) : null,
          el(
            "span",
            { class: "route-badges" },
            r.protections.map((p) => el("span", { class: `badge badge--${p}` }, this.badgeOf(p))),
            problems.length ? el("span", { class: "badge badge--problem" }, `${problems.length} problem${problems.length > 1 ? "s" : ""}`) : null,
          ),
        ),
      );
    });
    $("#routes").replaceChildren(
      el("h2", { class: "sidebar-title" }, "Routes"),
      this.newRouteForm ?? el("button", { type: "button", class: "new-route", onclick: () => this.openNewRoute() }, "New route"),
      list.length ? el("ul", { class: "route-list" }, list) : el("p", { class: "muted" }, "No flows yet: add one under flows/."),
    );
  }

  /** A built-in node type's short name, from the server's table of them. */
  badgeOf(type) {
    return this.model.nodeTypes?.find((t) => t.type === type)?.badge ?? type;
  }

  renderProblems() {
    const diagnostics = this.model.diagnostics;
    const list = $("#problems-list");
    list.replaceChildren(
      ...diagnostics.map((d) =>
        el(
          "li",
          { class: `problem problem--${d.severity}` },
          el(
            "button",
            {
              type: "button",
              class: "problem-link",
              onclick: () => this.goTo(d),
            },
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

  toggleProblems(open) {
    const drawer = $("#problems");
    const show = open ?? drawer.hidden;
    drawer.hidden = !show;
    $("#problems-toggle").setAttribute("aria-expanded", String(show));
  }

  goTo(d) {
    if (!d.route) return;
    location.hash = `#/flows/${encodeURIComponent(d.route)}`;
    if (d.node) {
      setTimeout(() => this.canvas.select(d.node), 0);
    }
  }

  async showRoute(name, { keepPositions = false } = {}) {
    const route = this.model.routes.find((r) => r.name === name);
    if (!route) {
      if (name === this.routeName) this.closeRoute(name);
      return;
    }
    if (this.routeName !== name || !keepPositions) {
      try {
        this.positions = (await api("GET", `/api/layout/${encodeURIComponent(name)}`)).positions ?? {};
      } catch {
        this.positions = {};
      }
    }
    this.routeName = name;
    for (const link of document.querySelectorAll(".route-link")) {
      link.setAttribute("aria-current", link.dataset.route === name ? "true" : "false");
    }
    this.canvas.show(route, this.positions, this.model.diagnostics.filter((d) => d.route === name), this.model.assets);
    if (!$("#code").hidden) this.code.show(name, this.text);
    const selected = this.canvas.selected && route.nodes.find((n) => n.id === this.canvas.selected);
    if (selected) this.inspect(selected);
    document.title = `${route.methods.join(", ")} ${route.route} · svc Builder`;
  }

  /** The open flow is gone from the project (its file removed or renamed): its canvas,
   *  its form and its trace go, it is said, and the first route left opens. */
  closeRoute(name) {
    this.routeName = null;
    this.inspected = null;
    this.canvas.clear();
    if (!$("#panel").hidden) this.showPanel(null);
    if (this.trace) this.clearTrace();
    document.title = "svc Builder";
    this.say(`The flow ${name} is no longer in the project: its file was removed or renamed.`);
    const first = this.model.routes[0]?.name;
    location.hash = first ? `#/flows/${encodeURIComponent(first)}` : "#/flows";
  }

  /** More room for the canvas: the sidebar out of the way, the flow fitted again. */
  toggleSidebar() {
    const hidden = document.body.classList.toggle("sidebar-hidden");
    const button = $("#sidebar-toggle");
    button.setAttribute("aria-pressed", String(hidden));
    button.textContent = hidden ? "Show sidebar" : "Hide sidebar";
    this.canvas.fit();
  }

  toggleCode(open) {
    const pane = $("#code");
    const show = open ?? pane.hidden;
    pane.hidden = !show;
    $("#code-toggle").setAttribute("aria-pressed", String(show));
    $(".stage").classList.toggle("with-code", show);
    if (show && this.routeName) this.code.show(this.routeName, this.text);
    this.canvas.fit();
  }

  inspect(node) {
    if (!$("#code").hidden) this.code.mark(node.id);
    const route = this.model.routes.find((r) => r.name === this.routeName);
    // Typing not saved yet is not redrawn under the user's hands, not even to show a save
    // just made in another field (that waits for the next reading after this typing is
    // saved too; an edit from this form is made on top of the Builder's own writes).
    const same = this.inspected === `${route.name}/${node.id}`;
    if (same && document.querySelector("#panel-body .node-form [data-pending]")) return;
    this.forceInspect = false;
    this.inspected = `${route.name}/${node.id}`;
    // The field that had the focus has it again in the redrawn form.
    const focused = same ? document.activeElement?.closest?.("#panel-body .node-form")?.querySelector(":focus") : null;
    const key = focused && ["data-setting", "data-pin-value", "data-origin", "data-next", "data-wire-from", "data-field", "data-value-path"].map((a) => [a, focused.getAttribute(a)]).find(([, v]) => v !== null);
    const form = nodeForm(node, this.model, (edits, what) => this.editor.edit(route, edits, what));
    const actions =
      node.type === "start"
        ? null
        : el(
            "div",
            { class: "node-actions" },
            el("button", { type: "button", "data-action": "rename", onclick: () => this.renameNode(node.id) }, "Rename…"),
            el("button", { type: "button", class: "danger", "data-action": "delete", onclick: () => this.deleteNode(node.id) }, "Delete"),
          );
    // A sequence wire is its edge's key; a data wire a code node input's `{ from: … }`,
    // or a Return JSON's header or body field (`body.error.code`).
    const unwire = (w) => {
      const target = route.nodes.find((n) => n.id === w.to.node);
      const path =
        w.kind === "sequence"
          ? ["nodes", w.from.node, w.from.pin]
          : target?.type === "return-json"
            ? ["nodes", w.to.node, ...w.to.pin.split(".")]
            : ["nodes", w.to.node, "inputs", w.to.pin];
      return this.editor.edit(route, [{ op: "remove", path }], `${w.from.node}.${w.from.pin} → ${w.to.node}.${w.to.pin} removed`);
    };
    const panel = nodePanel(route, node, this.model.diagnostics.filter((d) => d.route === this.routeName), form, unwire);
    const wiring = wiringForm(route, node, this.model.assets, {
      wire: (from, to) => this.editor.wire(route, from, to),
      unwireEdge: (pin) => this.editor.edit(route, [{ op: "remove", path: ["nodes", node.id, pin] }], `${node.id}.${pin} unwired`),
    });
    if (wiring) panel.append(wiring);
    if (actions) panel.append(actions);
    if (this.trace && this.routeOf(this.trace)?.name === this.routeName) panel.append(stepPanel(this.trace, node.id));
    this.showPanel(panel);
    if (key) refocus(focused, panel.querySelector(`[${key[0]}="${CSS.escape(key[1])}"]`));
  }

  /** The form of a new route: its file name, path, methods, summary, request body, query
   *  parameters and headers. */
  openNewRoute() {
    const name = el("input", { type: "text", name: "name", required: true, placeholder: "create-order", pattern: "[A-Za-z0-9][A-Za-z0-9_-]*" });
    const path = el("input", { type: "text", name: "route", required: true, placeholder: "orders/{id}" });
    const summary = el("input", { type: "text", name: "summary", placeholder: "What it does" });
    const assets = this.model?.assets ?? {};
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
      this.newRouteForm = null;
      this.renderRoutes();
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
        methods: methods.map((l) => l.querySelector("input")).filter((i) => i.checked).map((i) => i.value),
        summary: summary.value.trim() || undefined,
        body: body.value || undefined,
        query: query.values(),
        headers: headers.values(),
      };
      try {
        const created = await api("POST", "/api/flows", request);
        this.say(`Created flows/${created.name}.yaml.`);
        close();
        await this.refresh();
        location.hash = `#/flows/${encodeURIComponent(created.name)}`;
      } catch (e) {
        this.say(`Not created: ${e.message}`, true);
      }
    });
    this.newRouteForm = form;
    this.renderRoutes();
    name.focus();
  }

  currentRoute() {
    return this.model?.routes.find((r) => r.name === this.routeName);
  }

  /** Adds palette node `n` to the open flow, then shows it selected. */
  /** Adds palette node `n` to the open flow; `at`, where it was dropped on the canvas. */
  async addNode(n, at) {
    const route = this.currentRoute();
    if (!route) return;
    const action = n.language === "built-in" ? { action: "add", type: n.key } : { action: "add", type: "code", node: n.key };
    const answer = await this.editor.node(route, action, `${n.label} added to ${route.name}`);
    if (!answer?.node) return;
    if (at) {
      // Not on top of a node already drawn (the canvas shows this route: it was dropped on it).
      const drawn = [...(this.canvas.placed?.nodes ?? [])].filter(([id]) => id !== answer.node).map(([, box]) => box);
      at = freeSpot(at, nodeHeight(n), drawn);
      // Kept before the flow is drawn again, which reads the positions back.
      this.positions = { ...this.positions, [answer.node]: at };
      await api("PUT", `/api/layout/${encodeURIComponent(route.name)}`, { positions: this.positions }).catch((e) => this.say(`Position not kept: ${e.message}`, true));
    }
    location.hash = `#/flows/${encodeURIComponent(route.name)}`;
    await this.refresh();
    setTimeout(() => this.canvas.select(answer.node), 0);
  }

  async renameNode(id) {
    const route = this.currentRoute();
    const to = window.prompt(`Rename node ${id} to (every wire and edge follows):`, id)?.trim();
    if (!route || !to || to === id) return;
    const answer = await this.editor.node(route, { action: "rename", id, to }, `${id} renamed ${to}`);
    // Still selected under its new name, unless another node was selected meanwhile.
    if (answer && (this.canvas.selected === id || this.canvas.selected === to)) setTimeout(() => this.canvas.select(to), 0);
  }

  async deleteNode(id) {
    const route = this.currentRoute();
    if (!route || !window.confirm(`Delete node ${id}, the edges that lead to it and the wires that read from it?`)) return;
    const deleted = await this.editor.node(route, { action: "delete", id }, `${id} deleted`);
    // Close the panel if it still shows the deleted node (another may be open by now).
    if (deleted && this.inspected === `${route.name}/${id}`) this.showPanel(null);
  }

  /** The route a trace belongs to (traces name routes as flows write `route:`). */
  routeOf(trace) {
    return this.model?.routes.find((r) => r.route === trace.route);
  }

  async showTrace(trace) {
    const route = this.routeOf(trace);
    if (!route) {
      this.say(`The route of this request (${trace.route}) is no longer in the project.`, true);
      return;
    }
    this.trace = trace;
    if (this.view !== "flows" || this.routeName !== route.name) {
      history.replaceState(null, "", `#/flows/${encodeURIComponent(route.name)}`);
      this.view = "flows";
      await this.showRoute(route.name);
    }
    this.canvas.setHighlight(highlightOf(route, trace));
    this.showPanel(tracePanel(trace, () => this.replay(trace)));
  }

  clearTrace() {
    this.trace = null;
    this.traceList.selected = null;
    this.traceList.render();
    this.canvas.setHighlight(null);
  }

  async replay(trace) {
    try {
      const answer = await api("POST", `/api/traces/${trace.seq}/replay`);
      this.say(`Replayed: ${answer.status}. The new request is at the top of the list.`);
    } catch (e) {
      this.say(e.message, true);
    }
  }

  showPanel(content) {
    const panel = $("#panel");
    panel.hidden = !content;
    $("#panel-body").replaceChildren(...(content ? [content] : []));
    // Closing the panel lets go of what it showed: the selected node, and the request
    // whose path the canvas lit (and dimmed the rest for).
    if (!content && this.trace) this.clearTrace();
    if (!content && this.canvas.selected) {
      this.canvas.selected = null;
      if (this.canvas.route) this.canvas.draw();
    }
  }

  savePositions(route, positions) {
    this.positions = positions;
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(async () => {
      try {
        await api("PUT", `/api/layout/${encodeURIComponent(route.name)}`, { positions });
      } catch (e) {
        this.say(`Positions not kept: ${e.message}`, true);
      }
    }, 300);
  }

  /** A message in the status line; with `action` (`{ label, run }`), a button that
   *  stays until used or replaced (a conflict's "make the edit again"). */
  say(message, isError = false, action = null) {
    const status = $("#status");
    status.replaceChildren(message);
    status.className = isError ? "status is-error" : "status";
    clearTimeout(this.statusTimer);
    if (action) {
      const button = el("button", { type: "button", class: "status-action" }, action.label);
      button.addEventListener("click", () => {
        status.replaceChildren();
        action.run();
      });
      status.append(" ", button);
      return;
    }
    this.statusTimer = setTimeout(() => status.replaceChildren(), 6000);
  }
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


new Builder().start();

/** Gives the focus of `was`, a field of a form being redrawn, to `now`, its counterpart
 *  in the new form, with its caret or selection: a field focused (its text selected,
 *  say) but not yet typed in is redrawn by a reading, and the typing that follows goes
 *  where the user put it, not before the old text. */
function refocus(was, now) {
  if (!now) return;
  now.focus();
  if (now.value !== was.value) return;
  try {
    now.setSelectionRange(was.selectionStart, was.selectionEnd, was.selectionDirection ?? "none");
  } catch {
    // Fields without a caret (a select, a checkbox) keep just the focus.
  }
}
