// @ts-check
// Small helpers to build DOM and SVG: no framework, so that nothing needs building and
// every element is plain to inspect.

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "text") {
      element.textContent = value;
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** An HTML element: `el("button", { class: "x", onclick }, "Label")`. */
export function el(tag, attributes, ...children) {
  return fill(document.createElement(tag), attributes, children);
}

/** An SVG element. */
export function svg(tag, attributes, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attributes, children);
}

/** A value as the Builder shows it inline: JSON, shortened. */
export function shortJson(value, max = 28) {
  const text = JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `object:Order`, `Order[]` for arrays: how a pin's type reads on the canvas. */
export function typeLabel(pin) {
  if (pin.type === "type:array") return `${pin.items ?? "any"}[]`;
  return pin.type;
}

/** The type's family, for its colour. */
export function typeFamily(pin) {
  if (pin.sequence) return "sequence";
  const t = pin.type === "type:array" ? "array" : pin.type.split(":")[0];
  return ["string", "number", "boolean", "object", "enum-value", "array", "any"].includes(t) ? t : "any";
}
