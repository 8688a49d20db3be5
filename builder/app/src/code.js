// @ts-check
// The generated code beside the flow: the selected route's module as `svc emit` writes it,
// highlighted. Selecting a node on the canvas marks the lines it became and scrolls to
// them; clicking a line selects the node whose code it is.

import { api } from "./api.js";
import { el } from "./dom.js";

const KEYWORDS = new Set(
  "as async await break const continue crate else enum false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err".split(" "),
);

/** One line of Rust as spans: comments, strings, keywords, numbers, the rest as text. */
export function highlight(line) {
  const out = [];
  let i = 0;
  let plain = "";
  const flush = () => {
    if (plain) out.push(plain);
    plain = "";
  };
  while (i < line.length) {
    const rest = line.slice(i);
    if (rest.startsWith("//")) {
      flush();
      out.push(el("span", { class: "tok-comment" }, rest));
      break;
    }
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') j += line[j] === "\\" ? 2 : 1;
      flush();
      out.push(el("span", { class: "tok-string" }, line.slice(i, j + 1)));
      i = j + 1;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest)?.[0];
    if (word) {
      if (KEYWORDS.has(word)) {
        flush();
        out.push(el("span", { class: "tok-keyword" }, word));
      } else {
        plain += word;
      }
      i += word.length;
      continue;
    }
    const number = /^[0-9][0-9_]*(\.[0-9]+)?[a-z0-9]*/.exec(rest)?.[0];
    if (number) {
      flush();
      out.push(el("span", { class: "tok-number" }, number));
      i += number.length;
      continue;
    }
    plain += c;
    i += 1;
  }
  flush();
  return out;
}

export class CodeView {
  /**
   * @param {HTMLElement} host
   * @param {(nodeId: string) => void} onSelectNode
   */
  constructor(host, onSelectNode) {
    this.host = host;
    this.onSelectNode = onSelectNode;
    this.code = null;
    this.key = null;
  }

  /** Shows the module of `routeName`; `version` changes when the project does. */
  async show(routeName, version) {
    const key = `${routeName}\n${version}`;
    if (this.key === key) return;
    this.key = key;
    let code;
    try {
      code = await api("GET", `/api/code/${encodeURIComponent(routeName)}`);
    } catch (e) {
      this.code = null;
      this.host.replaceChildren(el("p", { class: "muted code-missing" }, e.message));
      return;
    }
    this.code = code;
    const lines = code.text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    const owner = new Map();
    for (const [id, ranges] of Object.entries(code.nodes)) {
      for (const [from, to] of ranges) for (let n = from; n <= to; n++) owner.set(n, id);
    }
    this.list = el(
      "ol",
      { class: "code-lines" },
      lines.map((text, i) => {
        const n = i + 1;
        const node = owner.get(n);
        return el(
          "li",
          { "data-line": n, "data-code-node": node, onclick: node ? () => this.onSelectNode(node) : null },
          el("code", {}, highlight(text)),
        );
      }),
    );
    this.host.replaceChildren(el("h2", { class: "code-file" }, code.file), this.list);
    if (this.marked) this.mark(this.marked);
  }

  /** Marks the lines `nodeId` became, and scrolls the first into view. */
  mark(nodeId) {
    this.marked = nodeId;
    if (!this.list) return;
    let first = null;
    for (const li of this.list.children) {
      const on = li.dataset.codeNode === nodeId;
      li.classList.toggle("is-marked", on);
      if (on && !first) first = li;
    }
    first?.scrollIntoView({ block: "center" });
  }
}
