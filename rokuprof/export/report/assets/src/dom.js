// DOM helpers: elements built from attributes and children. Device and user text (names, files,
// app facts, mark labels, the app's source) only ever reaches the page through textContent and
// DOM APIs, never as markup; a link's href is built from the checked editor template only
// (links.js, editorHref).
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
