// Builds the report page's script, assets/report.js, from its ES modules in assets/src/ (entry
// main.js) with the pinned esbuild: one IIFE, not minified, so that page.py can inline it in the
// self-contained page and pip users need no Node. `npm run build:report` writes it;
// tests/test_report_bundle.py builds into a temporary file and checks the committed one is the same.
//   node rokuprof/export/report/build_report.mjs [--out FILE]
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const at = args.indexOf("--out");
const outfile = at >= 0 ? path.resolve(args[at + 1]) : path.join(here, "assets", "report.js");

const banner = `// rokuprof report: the page's script (plain JavaScript, no library).
//
// GENERATED from rokuprof/export/report/assets/src/ (ES modules, entry main.js) by esbuild; do not
// edit by hand. Rebuild with \`npm run build:report\` (tests/test_report_bundle.py checks it is current).
"use strict";`;

await build({
  absWorkingDir: path.resolve(here, "..", "..", ".."), // the repository: the bundle names its modules from there
  entryPoints: [path.join(here, "assets", "src", "main.js")],
  bundle: true,
  format: "iife",
  minify: false,
  charset: "utf8",
  legalComments: "none",
  banner: { js: banner },
  outfile,
  logLevel: "warning",
});
