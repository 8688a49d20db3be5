// @ts-check
// Settings: API Keys (spec: "Settings > API Keys"), Secrets and Assets. Keys and secrets
// go through the same store and rules as `svc keys` and `svc secrets`; a new key is shown
// once, in the answer that created it, and a secret's value is never shown back.

import { api } from "./api.js";
import { el } from "./dom.js";

const when = (seconds) => (seconds ? new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 16) + " UTC" : "never");

export class Settings {
  constructor(host, status) {
    this.host = host;
    this.status = status;
  }

  async show(model) {
    this.model = model;
    this.keysSection = el("section", { class: "settings-section", "aria-labelledby": "keys-title" });
    this.secretsSection = el("section", { class: "settings-section", "aria-labelledby": "secrets-title" });
    this.host.replaceChildren(this.keysSection, this.secretsSection, assetsSection(model.assets));
    await Promise.all([this.renderKeys(), this.renderSecrets()]);
  }

  async renderKeys(revealed) {
    const listing = await listed("/api/keys", this.keysSection, el("h2", { id: "keys-title" }, "API Keys"));
    if (!listing) return;
    const name = el("input", { id: "key-name", name: "name", required: true, autocomplete: "off" });
    const owner = el("input", { id: "key-owner", name: "owner", required: true, autocomplete: "off" });
    const expires = el("input", { id: "key-expires", name: "expiresIn", placeholder: "never (or 30d, 12h)", autocomplete: "off" });
    const form = el(
      "form",
      {
        class: "key-form",
        "aria-label": "Create an API key",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            const made = await api("POST", "/api/keys", { name: name.value, owner: owner.value, expiresIn: expires.value });
            this.status(`Created key “${made.record.name}”.`);
            await this.renderKeys({ title: `New key “${made.record.name}”`, key: made.key });
          } catch (e) {
            this.status(e.message, true);
          }
        },
      },
      el("label", { for: "key-name" }, "Name"),
      name,
      el("label", { for: "key-owner" }, "Owner"),
      owner,
      el("label", { for: "key-expires" }, "Expires in"),
      expires,
      el("button", { type: "submit" }, "Create key"),
    );
    const rows = listing.keys.map((k) =>
      el(
        "tr",
        { "data-key-id": k.id },
        el("th", { scope: "row" }, k.name),
        el("td", {}, k.owner),
        el("td", {}, el("code", {}, k.prefix)),
        el("td", {}, when(k.createdAt)),
        el("td", {}, when(k.expiresAt)),
        el("td", {}, el("span", { class: `badge badge--${k.status}` }, k.status)),
        el(
          "td",
          {},
          k.status === "active"
            ? [
                el("button", { type: "button", "aria-label": `Rotate ${k.name}`, onclick: () => this.rotate(k) }, "Rotate"),
                " ",
                el("button", { type: "button", class: "danger", "aria-label": `Revoke ${k.name}`, onclick: () => this.revoke(k) }, "Revoke"),
              ]
            : null,
        ),
      ),
    );
    this.keysSection.replaceChildren(
      el("h2", { id: "keys-title" }, "API Keys"),
      el("p", { class: "muted" }, `In ${listing.store}. Servers pick up new, revoked and rotated keys within a second.`),
      revealed ? reveal(revealed) : null,
      rows.length
        ? el(
            "table",
            { class: "keys" },
            el(
              "thead",
              {},
              el("tr", {}, ...["Name", "Owner", "Key", "Created", "Expires", "Status", "Actions"].map((h) => el("th", { scope: "col" }, h))),
            ),
            el("tbody", {}, rows),
          )
        : el("p", { class: "muted" }, "No API keys yet."),
      form,
    );
  }

  async revoke(k) {
    if (!confirm(`Revoke the key “${k.name}”? Requests with it are refused within a second.`)) return;
    try {
      await api("POST", `/api/keys/${encodeURIComponent(k.id)}/revoke`);
      this.status(`Revoked key “${k.name}”.`);
      await this.renderKeys();
    } catch (e) {
      this.status(e.message, true);
    }
  }

  async rotate(k) {
    const grace = prompt(`Rotate “${k.name}”: how long may the old key keep working? (empty: stop now; or 1h, 1d)`, "");
    if (grace === null) return;
    try {
      const made = await api("POST", `/api/keys/${encodeURIComponent(k.id)}/rotate`, { grace });
      this.status(made.warning ?? `Rotated key “${k.name}”.`, Boolean(made.warning));
      await this.renderKeys({ title: `Replacement for “${k.name}”`, key: made.key });
    } catch (e) {
      this.status(e.message, true);
    }
  }

  async renderSecrets() {
    const listing = await listed("/api/secrets", this.secretsSection, el("h2", { id: "secrets-title" }, "Secrets"));
    if (!listing) return;
    const rows = listing.secrets.map((s) => {
      const input = el("input", {
        type: "password",
        autocomplete: "new-password",
        "aria-label": `New value of ${s.name}`,
        placeholder: s.set ? "replace the value" : "set a value",
      });
      return el(
        "tr",
        { "data-secret": s.name },
        el("th", { scope: "row" }, el("code", {}, s.name)),
        el("td", {}, s.required ? "required" : "optional"),
        el("td", {}, el("span", { class: `badge badge--${s.set ? "active" : s.required ? "missing" : "unset"}` }, s.set ? "set" : s.required ? "missing" : "not set")),
        el("td", {}, s.description ?? ""),
        el(
          "td",
          {},
          el(
            "form",
            {
              class: "secret-form",
              onsubmit: async (event) => {
                event.preventDefault();
                try {
                  await api("PUT", `/api/secrets/${encodeURIComponent(s.name)}`, { value: input.value });
                  input.value = "";
                  this.status(`Set secret ${s.name}. Servers read secrets at start-up: restart them to use it.`);
                  await this.renderSecrets();
                } catch (e) {
                  this.status(e.message, true);
                }
              },
            },
            input,
            el("button", { type: "submit", "aria-label": `Save ${s.name}` }, "Save"),
          ),
        ),
      );
    });
    this.secretsSection.replaceChildren(
      el("h2", { id: "secrets-title" }, "Secrets"),
      el("p", { class: "muted" }, `Declared by the project; values sealed in ${listing.store}, never shown back.`),
      rows.length
        ? el(
            "table",
            { class: "secrets" },
            el("thead", {}, el("tr", {}, ...["Name", "", "Status", "Description", "Value"].map((h) => el("th", { scope: "col" }, h)))),
            el("tbody", {}, rows),
          )
        : el("p", { class: "muted" }, "The project declares no secrets."),
    );
  }
}

function reveal({ title, key }) {
  const field = el("input", { class: "new-key", readonly: true, value: key, "aria-label": "The new API key" });
  return el(
    "div",
    { class: "reveal", role: "status" },
    el("strong", {}, title),
    el("p", {}, "Copy it now: it is shown once and stored only as a hash."),
    field,
    el(
      "button",
      {
        type: "button",
        onclick: async () => {
          field.select();
          try {
            await navigator.clipboard.writeText(key);
          } catch {
            document.execCommand?.("copy");
          }
        },
      },
      "Copy",
    ),
  );
}

/** One read-only table per asset (`kind`: Enum, Structure), or "None." */
function assetTables(kind, assets, headings, cells) {
  if (!assets.length) return el("p", { class: "muted" }, "None.");
  return assets.map((asset) =>
    el(
      "table",
      { class: "asset", "aria-label": `${kind} ${asset.name}` },
      el("caption", {}, asset.name, asset.description ? ` — ${asset.description}` : ""),
      el("thead", {}, el("tr", {}, headings.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, cells(asset).map((row) => el("tr", {}, row.map((cell) => el("td", {}, cell))))),
    ),
  );
}

function assetsSection(assets) {
  const enumRows = (e) =>
    e.values.map((v) => {
      const value = typeof v === "string" ? { value: v } : v;
      return [el("code", {}, value.value), value.key ?? "", value.label ?? ""];
    });
  const fieldRows = (s) =>
    s.fields.map((f) => [el("code", {}, f.name), el("code", {}, f.type), f.required ? "yes" : "no", f.checks ?? ""]);
  return el(
    "section",
    { class: "settings-section", "aria-labelledby": "assets-title" },
    el("h2", { id: "assets-title" }, "Assets"),
    el("h3", {}, "Enums"),
    assetTables("Enum", assets?.enums ?? [], ["Value", "Key", "Label"], enumRows),
    el("h3", {}, "Structures"),
    assetTables("Structure", assets?.structures ?? [], ["Field", "Type", "Required", "Checked at the edge"], fieldRows),
  );
}

/** Reads a listing for `section`; when that fails, the section shows its `title` and
 *  why, and the answer is `null`. */
async function listed(path, section, title) {
  try {
    return await api("GET", path);
  } catch (e) {
    section.replaceChildren(title, el("p", { class: "error" }, e.message));
    return null;
  }
}
