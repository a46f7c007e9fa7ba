// Links to the source: file:line as a link to the reader's editor (report --source or
// --editor-url), built from the checked template only.
import { D, S } from "./data.js";
import { shortPath } from "./format.js";
import { fnFile, fnLine } from "./model.js";
import { el, fnWhere, text } from "./dom.js";

// With report --source (or --editor-url), every file:line is a link built from the editor URL
// template: {path} is the local file a pkg:/ path maps to under the source directory (else the
// pkg:/ path), {line} the line. The template starts with its own scheme (checked again here:
// never javascript:, data: ...) and the path is percent-encoded, so no file name from the
// device can change what a link is. Without a template, file:line stays text.
const SRC = D.source || null;
const EDITOR = (() => {
  const t = SRC && typeof SRC.editor === "string" ? SRC.editor : "";
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(t);
  const refused = ["javascript", "vbscript", "data", "blob", "about", "filesystem"];
  // eslint-disable-next-line no-control-regex -- a template with a control character is refused
  if (!m || /[\s\x00-\x1f\x7f]/.test(t) || refused.includes(m[1].toLowerCase())) return null;
  return t.split(/(\{path\}|\{line\})/);
})();
const localPath = new Map(SRC ? SRC.paths.map(([s, p]) => [S[s], p]) : []);
function editorHref(file, line) {
  if (!EDITOR) return null;
  const path = encodeURIComponent(localPath.get(file) ?? file).replace(/%2F/g, "/");
  const n = String(Math.max(1, Math.floor(Number(line)) || 1));
  return EDITOR.map((p) => (p === "{path}" ? path : p === "{line}" ? n : p)).join("");
}
// file:line (or the file alone) as a link to the editor when there is a template, else text.
function srcLink(file, line, label) {
  const shown = label ?? (line ? `${file}:${line}` : file);
  const href = editorHref(file, line);
  if (!href) return text(shown);
  return el("a", { class: "src", href, "data-file": file, "data-line": line || null, title: `Open ${file}:${line || 1} in the editor`, text: shown });
}
const whereLink = (f) => srcLink(fnFile[f], fnLine[f], fnWhere(f));
// The characters a path column gets: narrow for the Functions table's many columns, wider
// where the location has a column of its own (call tree, bottom-up); read at each render.
const pathRoom = (wide) => (wide ? Math.max(24, Math.min(64, Math.round(innerWidth / 30))) : Math.max(16, Math.min(48, Math.round(innerWidth / 55))));
const shortWhereLink = (f) => srcLink(fnFile[f], fnLine[f], shortPath(fnWhere(f), pathRoom(true)));

export { EDITOR, SRC, editorHref, pathRoom, shortWhereLink, srcLink, whereLink };
