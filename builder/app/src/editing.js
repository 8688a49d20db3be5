// @ts-check
// Editing a flow: the inspector's form for a node's settings and inline values, and the
// edits it makes, with undo and redo.
//
// Every change is an edit of the flow file's text made by the server
// (`compiler/src/builder/edit.rs`): a batch of operations (`set`, `push`, `remove`) at
// paths of the YAML document, against the version of the file the Builder showed. The
// server writes only the bytes the edit changes, so a changed value is one line of
// `git diff`; if the file changed since (a text editor, git, another tab), nothing is
// written and the edit stays on screen to make again. Undo puts back the text the file
// had before the edit, against the version the edit wrote: again nothing is overwritten.

import { api } from "./api.js";
import { el } from "./dom.js";

/** Edits of the flows, with their history. `onSaved` runs after every write (the
 *  Builder reads the project again); `say(message, isError, action)` reports. */
export class Editor {
  constructor({ onSaved, say }) {
    this.onSaved = onSaved;
    this.say = say;
    this.undone = [];
    this.done = [];
    // One change at a time, in the order asked: a quick Ctrl+Z after an edit undoes
    // that edit, once it is written.
    /** @type {Promise<unknown>} */
    this.queue = Promise.resolve();
    // For each flow, the writes of this Builder that its forms have not been redrawn
    // from yet (version replaced → version written): an edit made from a form drawn
    // before the Builder read its own last write back is made on top of that write, not
    // refused as a conflict with itself. A change made elsewhere still is one: the
    // server compares with the file, and the chain is dropped when the Builder reads a
    // version of the file it did not write last.
    this.unseen = new Map();
  }

  /** The version an edit of `route` drawn from `version` is made against. */
  latest(route, version) {
    const chain = this.unseen.get(route);
    for (let i = 0; chain?.has(version) && i < 50; i++) version = chain.get(version);
    return version;
  }

  wrote(route, replaced, version) {
    const chain = this.unseen.get(route) ?? new Map();
    chain.delete(version);
    chain.set(replaced, version);
    chain.last = version;
    this.unseen.set(route, chain);
  }

  /** The project was read: a flow whose file is not this Builder's last write of it was
   *  changed elsewhere (or put back by undo), and its chain no longer applies. */
  seen(routes) {
    for (const r of routes) {
      if (this.unseen.get(r.name)?.last !== r.version) this.unseen.delete(r.name);
    }
  }

  /**
   * Runs `work` after every edit sent before it.
   * @template T
   * @param {() => Promise<T>} work
   * @returns {Promise<T>}
   */
  serially(work) {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }

  /** Makes `edits` in route `route` (from the model: its name and version). */
  edit(route, edits, what) {
    return this.serially(() => this.send(route, "edit", (base) => ({ base, edits }), what));
  }

  /** Adds, renames or deletes a node (`{ action: "add", type, node }`, `{ action:
   *  "rename", id, to }`, `{ action: "delete", id }`); the answer names an added node. */
  node(route, action, what) {
    return this.serially(() => this.send(route, "node", (base) => ({ base, ...action }), what));
  }

  /** Draws the wire `from` → `to` (each `{ node, pin }`). */
  wire(route, from, to) {
    const what = `${[from.node, from.pin, ...(from.path ?? [])].join(".")} → ${to.node}.${to.pin}`;
    return this.serially(() => this.send(route, "wire", (base) => ({ base, from, to }), what));
  }

  /** @returns {Promise<any>} the server's answer, or null when it refused */
  async send(route, endpoint, body, what) {
    try {
      const answer = await api("POST", `/api/flows/${encodeURIComponent(route.name)}/${endpoint}`, body(this.latest(route.name, route.version)));
      this.wrote(route.name, answer.previous.version, answer.version);
      if (answer.text !== answer.previous.text) {
        this.done.push({ route: route.name, what, before: answer.previous.text, after: answer.version, afterText: answer.text });
        this.undone = [];
      }
      this.say(`Saved: ${what}.`);
      await this.onSaved();
      return answer;
    } catch (e) {
      if (e.status === 409) {
        // The file moved on: show it as it is now, and offer the edit again on top.
        this.say(`Not saved: ${e.message}`, true, {
          label: `Make the edit again (${what})`,
          run: async () => {
            await this.onSaved();
            await this.send({ name: route.name, version: e.body.current.version }, endpoint, body, what);
          },
        });
      } else {
        this.say(`Not saved (${what}): ${e.message}`, true);
      }
      await this.onSaved();
      return null;
    }
  }

  undo() {
    return this.serially(() => this.step(this.done, this.undone, "Undone", "undo"));
  }

  redo() {
    return this.serially(() => this.step(this.undone, this.done, "Redone", "redo"));
  }

  /** Takes the last step of `from`, puts the text it had back, and files it in `to`. */
  async step(from, to, said, verb) {
    const step = from.pop();
    if (!step) return this.say(`Nothing to ${verb}.`);
    try {
      const answer = await api("PUT", `/api/flows/${encodeURIComponent(step.route)}`, { base: step.after, text: step.before });
      this.wrote(step.route, step.after, answer.version);
      to.push({ ...step, before: step.afterText, after: answer.version, afterText: step.before });
      this.say(`${said}: ${step.what}.`);
    } catch (e) {
      from.push(step);
      this.say(`Cannot ${verb} ${step.what}: ${e.message}`, true);
    }
    await this.onSaved();
  }
}

const nodePath = (node, ...rest) => ["nodes", node.id, ...rest];

/** Marks `input` as holding typing not yet saved (`data-pending`) until it is: the
 *  Builder does not redraw a form under unsaved typing. */
function pending(input) {
  input.addEventListener("input", () => (input.dataset.pending = "1"));
  input.addEventListener("change", () => delete input.dataset.pending);
}

/** The attributes of a field that holds a number: text, not `type="number"`. A number
 *  field the browser cannot read reads as empty (a typo would unset the value), a
 *  scroll wheel over it changes it, and its caret and selection cannot be kept when a
 *  reading redraws the form. Each such field checks what is typed itself. `whole`: a
 *  count or a status, for which a touch keyboard shows digits only. */
const numberField = (whole) => ({ type: "text", inputmode: whole ? "numeric" : undefined, autocomplete: "off", spellcheck: "false" });

/** The form of `node`'s settings and inline values; `edit(edits, what)` saves. */
export function nodeForm(node, model, edit) {
  const rows = [];
  for (const setting of node.settings ?? []) rows.push(settingRow(node, setting, edit));
  if (node.type === "code") {
    const route = model.routes?.find((r) => r.nodes.includes(node));
    const wired = new Set((route?.wires ?? []).filter((w) => w.kind === "data" && w.to.node === node.id).map((w) => w.to.pin));
    for (const pin of node.inputs) {
      if (pin.sequence || !pin.takesInline) continue;
      const row = wired.has(pin.id) && isCompound(pin.type) ? null : pinRow(node, pin, model, edit);
      if (row) rows.push(row);
    }
  }
  if (node.type === "return-json") rows.push(...responseRows(node, edit));
  if (!rows.length) return null;
  return el("form", { class: "node-form", "aria-label": `Settings of ${node.id}`, onsubmit: (e) => e.preventDefault() }, el("h3", {}, "Settings"), rows);
}

/** The path of a Return JSON pin (`body.error.code`, `body.lines.0`, `headers.x-id`). */
const responsePath = (node, pinId) => {
  const [part, ...rest] = pinId.split(".");
  // A header's name may hold dots; a body path's numbers index its lists.
  const steps = part === "headers" ? [rest.join(".")] : rest.map((s) => (/^[0-9]+$/.test(s) ? Number(s) : s));
  return nodePath(node, part, ...steps);
};

/** A literal as typed: JSON when it reads as JSON (`42`, `true`, `"x"`, `[1]`), else text. */
function literalOf(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const literalText = (value) => (typeof value === "string" ? value : JSON.stringify(value));

/** Return JSON's headers and body fields: each literal edited in place, each removable,
 *  and new ones added (a wired one is changed by drawing another wire into it). */
function responseRows(node, edit) {
  return ["headers", "body"].map((part) => {
    const what = part === "body" ? "body field" : "header";
    const rows = node.inputs
      .filter((pin) => pin.id.startsWith(`${part}.`))
      .map((pin) => {
        const path = responsePath(node, pin.id);
        const name = pin.id.slice(part.length + 1);
        const remove = el("button", { type: "button", class: "link-button", "data-remove-field": pin.id, onclick: () => edit([{ op: "remove", path }], `${node.id} ${pin.id} removed`) }, "Remove");
        if (pin.value === undefined || pin.value === null) {
          return el("li", { class: "response-field" }, el("code", {}, name), el("span", { class: "muted" }, " wired"), " ", remove);
        }
        const input = el("input", { type: "text", value: literalText(pin.value), "data-field": pin.id, "aria-label": `${what} ${name}` });
        pending(input);
        input.addEventListener("change", () => {
          const value = literalOf(input.value.trim());
          if (JSON.stringify(value) !== JSON.stringify(pin.value)) edit([{ op: "set", path, value }], `${node.id} ${pin.id} = ${input.value.trim()}`);
        });
        return el("li", { class: "response-field" }, el("code", {}, name), input, remove);
      });
    const name = el("input", { type: "text", "data-new-field": part, "aria-label": `new ${what}'s name`, placeholder: part === "body" ? "total" : "x-request-id" });
    const value = el("input", { type: "text", "data-new-value": part, "aria-label": `new ${what}'s value`, placeholder: "value, or wire it after" });
    // Typing here is not redrawn away by a refresh.
    pending(name);
    pending(value);
    const add = el("button", {
      type: "button",
      "data-add-field": part,
      onclick: () => {
        const key = name.value.trim();
        if (!key) return;
        // `error.code` in the body is a field of an `error` object (made when missing).
        const steps = part === "body" ? key.split(".").filter(Boolean) : [key];
        edit([{ op: "set", path: nodePath(node, part, ...steps), value: literalOf(value.value.trim()) }], `${node.id} ${part}.${key} added`);
      },
    }, `Add a ${what}`);
    return el(
      "fieldset",
      { class: "field response-part", "data-response": part },
      el("legend", {}, part === "body" ? "Body" : "Headers"),
      rows.length ? el("ul", { class: "response-fields" }, rows) : el("p", { class: "muted" }, part === "body" ? "No body fields." : "No headers."),
      el("div", { class: "response-new" }, name, value, add),
    );
  });
}

function field(label, control, note) {
  const id = `field-${Math.random().toString(36).slice(2)}`;
  control.id = id;
  return el("div", { class: "field" }, el("label", { for: id }, label), control, note ?? null);
}

/** Whether `value` reads as setting `setting` of `node`, as `svc check` reads it (the
 *  server reads it with the flow reader); the field is marked and its note says why not.
 *  The field counts as being typed until the answer, so that no reading redraws it away. */
async function settingReads(node, setting, value, input, note) {
  input.dataset.pending = "1";
  let answer;
  try {
    const query = new URLSearchParams({ type: node.type, key: setting.key, value: JSON.stringify(value) });
    answer = await api("GET", `/api/check/setting?${query}`);
  } catch (error) {
    answer = { ok: false, message: error.message, hint: "" };
  } finally {
    delete input.dataset.pending;
  }
  input.setAttribute("aria-invalid", String(!answer.ok));
  note.textContent = answer.ok ? "" : `${answer.message}${answer.hint ? ` (${answer.hint})` : ""}; not saved.`;
  return answer.ok;
}

function settingRow(node, setting, edit) {
  const what = `${node.id} ${setting.label}`;
  const path = nodePath(node, setting.key);
  if (setting.kind === "choice") {
    const select = el(
      "select",
      { "data-setting": setting.key },
      setting.unset ? el("option", { value: "", selected: setting.value === "" }, `(${setting.unset})`) : null,
      setting.choices.map((c) => el("option", { value: c, selected: c === setting.value }, c)),
    );
    select.addEventListener("change", () => {
      // The default is the key left out.
      if (select.value === "") edit([{ op: "remove", path }], `${what} as the default`);
      else edit([{ op: "set", path, value: select.value }], `${what} = ${select.value}`);
    });
    return field(setting.label, select);
  }
  if (setting.kind === "origins") return originsRow(node, setting, edit);
  if (setting.kind === "headers") return headersRow(node, setting, edit);
  if (setting.kind === "names") return namesRow(node, setting, edit);
  const numeric = setting.kind === "count" || setting.kind === "status";
  const input = el("input", {
    "data-setting": setting.key,
    ...(numeric ? numberField(true) : { type: "text" }),
    value: setting.value,
    required: true,
  });
  if (setting.unset) input.placeholder = setting.unset;
  if (setting.unset) input.required = false;
  const note = el("div", { class: "field-note", role: "status" });
  pending(input);
  input.addEventListener("change", async () => {
    const text = input.value.trim();
    // An optional setting emptied: the key left out, and the default applies.
    if (text === "" && setting.unset) {
      input.setAttribute("aria-invalid", "false");
      note.textContent = "";
      if (setting.value !== "") edit([{ op: "remove", path }], `${what} as the default`);
      return;
    }
    // A number field's text as a number when it is one; anything else is sent as text,
    // and refused by the server's reading in its own words.
    const value = numeric && text !== "" && Number.isFinite(Number(text)) ? Number(text) : text;
    if ((await settingReads(node, setting, value, input, note)) && value !== setting.value) edit([{ op: "set", path, value }], `${what} = ${text}`);
  });
  return field(setting.label, input, note);
}

/** An inline value of `type` at `path` (`at` names it for tests and labels): a structure
 *  as its fields, an array as its items with Add and Remove, a scalar as one field. Each
 *  change is one edit at its own path, so the flow file changes where the value did. */
function valueEditor(type, path, value, at, model, edit, what) {
  const name = at.join(".");
  if (type.endsWith(":array")) {
    const item = type.slice(0, -":array".length);
    const items = Array.isArray(value) ? value : [];
    const list = el(
      "ol",
      { class: "value-items" },
      items.map((v, i) =>
        el(
          "li",
          {},
          valueEditor(item, [...path, i], v, [...at, i], model, edit, what),
          el("button", { type: "button", class: "link-button", "data-remove-item": `${name}.${i}`, onclick: () => edit([{ op: "remove", path: [...path, i] }], `${what}: item ${i + 1} removed`) }, "Remove"),
        ),
      ),
    );
    const add = el("button", {
      type: "button",
      class: "link-button",
      "data-add-item": name,
      onclick: () => {
        const fresh = emptyOf(item, model);
        if (Array.isArray(value)) edit([{ op: "push", path, value: fresh }], `${what}: an item added`);
        else edit([{ op: "set", path, value: [fresh] }], `${what}: an item added`);
      },
    }, "Add an item");
    return el("div", { class: "value-array" }, list, add);
  }
  const structure = /^object:([^:]+)$/.exec(type)?.[1];
  if (structure) {
    const fields = (model.assets?.structures ?? []).find((s) => s.name === structure)?.fields ?? [];
    return el(
      "div",
      { class: "value-fields" },
      fields.map((f) => {
        const inner = valueEditor(f.type, [...path, f.name], value?.[f.name], [...at, f.name], model, edit, what);
        return el("div", { class: "value-field" }, el("span", { class: "value-name" }, `${f.name}${f.required ? "" : " (optional)"}`), inner);
      }),
    );
  }
  // A scalar, an enum, or a value of any shape (JSON).
  const enumName = type.startsWith("enum-value:") ? type.slice("enum-value:".length) : null;
  const set = (v) => edit([{ op: "set", path, value: v }], `${what}: ${name} = ${JSON.stringify(v)}`);
  const unset = () => value !== undefined && edit([{ op: "remove", path }], `${what}: ${name} unset`);
  if (type === "boolean") {
    const box = el("input", { type: "checkbox", "data-value-path": name, checked: value === true, "aria-label": name });
    box.addEventListener("change", () => set(box.checked));
    return box;
  }
  if (enumName) {
    const values = (model.assets?.enums ?? []).find((e) => e.name === enumName)?.values ?? [];
    const select = el(
      "select",
      { "data-value-path": name, "aria-label": name },
      el("option", { value: "", selected: value === undefined }, "(not set)"),
      values.map((v) => {
        const key = typeof v === "string" ? v : v.value;
        return el("option", { value: key, selected: value === key }, typeof v === "string" ? v : v.label ?? v.value);
      }),
    );
    select.addEventListener("change", () => (select.value ? set(select.value) : unset()));
    return select;
  }
  const numeric = type === "number";
  const json = type !== "string" && !numeric;
  const input = el("input", {
    ...(numeric ? numberField(false) : { type: "text" }),
    "data-value-path": name,
    "aria-label": name,
    value: value === undefined ? "" : json ? JSON.stringify(value) : value,
    placeholder: json ? "JSON, such as {\"id\": 1}" : "",
  });
  pending(input);
  input.addEventListener("change", () => {
    const text = input.value.trim();
    if (text === "") return unset();
    const parsed = numeric ? Number(text) : json ? literalOf(text) : input.value;
    input.setAttribute("aria-invalid", String(numeric && !Number.isFinite(parsed)));
    if (numeric && !Number.isFinite(parsed)) return;
    if (JSON.stringify(parsed) !== JSON.stringify(value)) set(parsed);
  });
  return input;
}

/** What a new array item starts as. */
function emptyOf(type, model) {
  if (type.endsWith(":array")) return [];
  if (type === "number") return 0;
  if (type === "boolean") return false;
  if (type.startsWith("object")) return {};
  if (type.startsWith("enum-value:")) {
    const v = (model.assets?.enums ?? []).find((e) => `enum-value:${e.name}` === type)?.values?.[0];
    return v === undefined ? "" : typeof v === "string" ? v : v.value;
  }
  return "";
}

/** A list of header names, comma-separated in one field (`content-type, x-api-key`). */
function headersRow(node, setting, edit) {
  const path = nodePath(node, setting.key);
  const input = el("input", { type: "text", "data-setting": setting.key, value: setting.value.join(", "), placeholder: setting.unset ?? "" });
  const note = el("div", { class: "field-note", role: "status" });
  pending(input);
  input.addEventListener("change", () => {
    const names = input.value.split(",").map((h) => h.trim().toLowerCase()).filter(Boolean);
    const wrong = names.find((h) => !/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(h));
    input.setAttribute("aria-invalid", String(Boolean(wrong)));
    note.textContent = wrong ? `\`${wrong}\` is not a header name; not saved.` : "";
    if (wrong || JSON.stringify(names) === JSON.stringify(setting.value)) return;
    const what = `${node.id} ${setting.label}`;
    if (!names.length) edit([{ op: "remove", path }], `${what} as the default`);
    else edit([{ op: "set", path, value: names }], `${what} = ${names.join(", ")}`);
  });
  return field(setting.label, input, note);
}

/** A list of names or URLs (audiences, scopes, algorithms), comma-separated in one
 *  field, read as `svc check` reads the setting before it is saved. Emptied, an
 *  optional setting is left out. */
function namesRow(node, setting, edit) {
  const path = nodePath(node, setting.key);
  const what = `${node.id} ${setting.label}`;
  const input = el("input", { type: "text", "data-setting": setting.key, value: setting.value.join(", "), placeholder: setting.unset ?? "" });
  const note = el("div", { class: "field-note", role: "status" });
  pending(input);
  input.addEventListener("change", async () => {
    const names = input.value.split(",").map((n) => n.trim()).filter(Boolean);
    if (JSON.stringify(names) === JSON.stringify(setting.value)) return;
    if (!names.length && setting.unset) {
      input.setAttribute("aria-invalid", "false");
      note.textContent = "";
      edit([{ op: "remove", path }], `${what} as the default`);
      return;
    }
    if (await settingReads(node, setting, names, input, note)) edit([{ op: "set", path, value: names }], `${what} = ${names.join(", ")}`);
  });
  return field(setting.label, input, note);
}

/** One input per allowed origin, each checked as `svc check` checks it while typing;
 *  one that is not an origin is flagged and not saved. */
function originsRow(node, setting, edit) {
  const path = nodePath(node, setting.key);
  const list = el("ul", { class: "origins" });
  setting.value.forEach((origin, index) => {
    const input = el("input", { type: "text", value: origin, "data-origin": index, "aria-label": `allowed origin ${index + 1}` });
    const note = el("div", { class: "field-note", role: "status" });
    let checked = Promise.resolve(true);
    const check = () => {
      checked = api("GET", `/api/check/origin?value=${encodeURIComponent(input.value.trim())}`).then((answer) => {
        input.setAttribute("aria-invalid", String(!answer.ok));
        note.textContent = answer.ok ? "" : `${answer.message} (${answer.hint})`;
        return answer.ok;
      });
      return checked;
    };
    let timer;
    pending(input);
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(check, 150);
    });
    input.addEventListener("change", async () => {
      clearTimeout(timer);
      const value = input.value.trim();
      if (value === origin || !(await check())) return;
      edit([{ op: "set", path: [...path, index], value }], `${node.id} allowed origin ${value}`);
    });
    const remove = el("button", { type: "button", class: "link-button", "aria-label": `Remove ${origin}` }, "Remove");
    remove.addEventListener("click", () => edit([{ op: "remove", path: [...path, index] }], `${node.id} without ${origin}`));
    list.append(el("li", {}, input, setting.value.length > 1 ? remove : null, note));
  });
  const add = el("button", { type: "button", class: "link-button" }, "Add an origin");
  add.addEventListener("click", () => {
    const input = el("input", { type: "text", placeholder: "https://app.example.com", "data-origin": "new", "aria-label": "new allowed origin" });
    const note = el("div", { class: "field-note", role: "status" });
    input.addEventListener("change", async () => {
      const value = input.value.trim();
      const answer = await api("GET", `/api/check/origin?value=${encodeURIComponent(value)}`);
      input.setAttribute("aria-invalid", String(!answer.ok));
      note.textContent = answer.ok ? "" : `${answer.message} (${answer.hint})`;
      if (answer.ok) edit([{ op: "push", path, value }], `${node.id} allowed origin ${value}`);
    });
    list.append(el("li", {}, input, note));
    input.focus();
  });
  return el("div", { class: "field" }, el("span", { class: "field-label" }, setting.label), list, add);
}

/** A structure or an array: edited as nested fields or as a list of items. */
const isCompound = (type) => /^object:[^:]+$/.test(type) || type === "type:array" || type.endsWith(":array");

function pinRow(node, pin, model, edit) {
  const path = nodePath(node, "inputs", pin.id);
  const what = `${node.id} ${pin.id}`;
  const current = pin.value ?? null;
  const placeholder = pin.default !== undefined && pin.default !== null ? `default ${JSON.stringify(pin.default)}` : pin.optional ? "optional" : "";
  const label = `${pin.id} (${pin.type === "type:array" ? `${pin.items ?? "any"}[]` : pin.type})`;
  if (isCompound(pin.type)) {
    const type = pin.type === "type:array" ? `${pin.items ?? "any"}:array` : pin.type;
    // A flow writes an object literal as `{ value: { … } }` (a bare mapping would read
    // as a wire), a list as it is.
    const at = type.startsWith("object:") ? [...path, "value"] : path;
    return el("fieldset", { class: "field value-group", "data-value": pin.id }, el("legend", {}, label), valueEditor(type, at, current ?? undefined, [pin.id], model, edit, what));
  }
  if (pin.type === "boolean") {
    const box = el("input", { type: "checkbox", "data-pin-value": pin.id, checked: current === true });
    box.addEventListener("change", () => edit([{ op: "set", path, value: box.checked }], `${what} = ${box.checked}`));
    return field(label, box);
  }
  if (pin.type.startsWith("enum-value:")) {
    const name = pin.type.slice("enum-value:".length);
    const values = (model.assets?.enums ?? []).find((e) => e.name === name)?.values ?? [];
    const select = el(
      "select",
      { "data-pin-value": pin.id },
      el("option", { value: "", selected: current === null }, placeholder || "(not set)"),
      values.map((v) => {
        const value = typeof v === "string" ? v : v.value;
        return el("option", { value, selected: current === value }, typeof v === "string" ? v : v.label ?? v.value);
      }),
    );
    select.addEventListener("change", () => {
      if (select.value) edit([{ op: "set", path, value: select.value }], `${what} = ${select.value}`);
      else if (current !== null) edit([{ op: "remove", path }], `${what} unset`);
    });
    return field(label, select);
  }
  if (pin.type !== "string" && pin.type !== "number") return null;
  const numeric = pin.type === "number";
  const input = el("input", {
    ...(numeric ? numberField(false) : { type: "text" }),
    "data-pin-value": pin.id,
    value: current ?? "",
    placeholder,
  });
  const checked = pin.checks ? `checked: ${pin.checks}` : "";
  const note = el("div", { class: "field-note", role: "status" }, checked);
  pending(input);
  input.addEventListener("change", () => {
    const text = input.value;
    if (text === "") {
      if (current !== null) edit([{ op: "remove", path }], `${what} unset`);
      return;
    }
    const value = numeric ? Number(text) : text;
    const wrong = numeric && (text.trim() === "" || !Number.isFinite(value));
    input.setAttribute("aria-invalid", String(wrong));
    note.textContent = wrong ? "Expected a number; not saved." : checked;
    if (wrong) return;
    if (value !== current) edit([{ op: "set", path, value }], `${what} = ${JSON.stringify(value)}`);
  });
  return field(label, input, note);
}
