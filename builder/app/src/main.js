// @ts-check
// The Builder's shell: the route list, the canvas, the palette, Settings, the inspector
// and the problems list, kept in step with the project on disk.
//
// Addresses: `#/flows/<route>`, `#/palette`, `#/settings`. The project is the store's
// (`store.js`: read again when its files change, checked by the server as `svc check`
// does); a change redraws what it touches and keeps the selection.

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
import { Problems } from "./problems.js";
import { RouteList } from "./routes.js";
import { ProjectStore } from "./store.js";
import { TraceList, highlightOf, stepPanel, tracePanel } from "./traces.js";
import { wiringForm } from "./wiring.js";

const $ = (selector) => document.querySelector(selector);

class Builder {
  constructor() {
    this.store = new ProjectStore(
      (model, applied) => this.showReading(model, applied),
      (message) => this.say(`Cannot read the project: ${message}`, true),
    );
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
        this.store.wrote();
        return this.refresh();
      },
      say: (message, isError, action) => this.say(message, isError, action),
    });
    this.trace = null;
    this.traceList = new TraceList($("#traces"), (trace) => this.showTrace(trace));
    window.addEventListener("hashchange", () => this.navigate());
    this.problems = new Problems((d) => this.goTo(d));
    this.routes = new RouteList($("#routes"), {
      say: (message, isError) => this.say(message, isError),
      created: async (name) => {
        await this.refresh();
        location.hash = `#/flows/${encodeURIComponent(name)}`;
      },
    });
    $("#panel-close").addEventListener("click", () => this.showPanel(null));
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.showPanel(null);
      const typing = /** @type {Element} */ (event.target).closest?.("input, textarea, select");
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
    // A new server: its project is read at once.
    followDevStatus($("#dev-status"), () => this.refresh().catch(() => {}));
    this.store.follow();
  }

  /** The project as last read (the store's). */
  get model() {
    return this.store.model;
  }

  async refresh() {
    await this.store.read();
  }

  /** Draws a reading the store took (`applied`: whether the project changed). */
  async showReading(model, applied) {
    if (applied === "same") {
      // An edit of ours may have been read back by another reading already: its form
      // is drawn again all the same.
      if (this.forceInspect && this.view === "flows" && this.routeName) await this.showRoute(this.routeName, { keepPositions: true });
      return;
    }
    this.editor.seen(model.routes);
    this.problems.render(model);
    this.routes.render(model, this.routeName);
    this.palette.show(model.palette);
    if (this.view === "flows" && this.routeName) await this.showRoute(this.routeName, { keepPositions: true });
  }

  navigate() {
    // Links within Settings (`#keys-title`) scroll, they do not change the view.
    if (location.hash && !location.hash.startsWith("#/")) return;
    const [, view = "flows", name] = (location.hash || "#/flows").split("/");
    this.view = ["flows", "palette", "settings"].includes(view) ? view : "flows";
    for (const tab of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-view]"))) {
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

  /** Shows where problem `d` is: its route, and its node selected. */
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
    this.routes.mark(name);
    this.canvas.show(route, this.positions, this.model.diagnostics.filter((d) => d.route === name), this.model.assets);
    if (!$("#code").hidden) this.code.show(name, this.model.revision);
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
    if (show && this.routeName) this.code.show(this.routeName, this.model.revision);
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
