// DOM helpers: elements built from attributes and children; text only ever as text nodes.
import { fnFile, fnLine } from "./model.js";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k === "text") e.textContent = v;
      else if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}
const text = (t) => document.createTextNode(t == null ? "" : String(t));
const fnWhere = (f) => (fnLine[f] ? `${fnFile[f]}:${fnLine[f]}` : fnFile[f]);

export { el, fnWhere, text };
