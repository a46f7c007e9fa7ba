// ESLint (flat config): the report page's ES modules (browser) and their unit tests (Node).
// `npm run lint`; .ci/run runs it.
import js from "@eslint/js";
import fs from "node:fs";
import globals from "globals";

// rokuprof/export/report/script.py joins the modules into one scope, where a browser global that
// some module declares at the top level (model.js's `parent`, figures.js's `self`) is that
// module's name in every other module too. So those globals are not globals here: a module that
// uses one without importing it is an error (no-undef), as it would silently read the other's.
const SRC = new URL("rokuprof/export/report/assets/src/", import.meta.url);
const declared = new Set();
for (const file of fs.readdirSync(SRC).filter((f) => f.endsWith(".js"))) {
  const text = fs.readFileSync(new URL(file, SRC), "utf8");
  for (const m of text.matchAll(/^export \{([^}]*)\}/gm)) for (const n of m[1].split(",")) declared.add(n.trim());
  for (const m of text.matchAll(/^(?:async function|function|class|const|let|var)\s+([\w$]+)/gm)) declared.add(m[1]);
}
const pageGlobals = Object.fromEntries(Object.entries(globals.browser).filter(([name]) => !declared.has(name)));

export default [
  { ignores: ["node_modules/**", "tests/viewers/**", "tests/clients/**", "benchmarks/**"] },
  js.configs.recommended,
  {
    files: ["rokuprof/export/report/assets/src/**/*.js"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: pageGlobals },
  },
  {
    files: ["tests/js/**/*.mjs", "eslint.config.js"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.node } },
  },
  {
    rules: {
      "no-unused-vars": ["error", { args: "after-used", caughtErrors: "none" }],
      "no-shadow": "off",
      eqeqeq: ["error", "smart"],
      "prefer-const": ["error", { destructuring: "all" }],
      "no-var": "error",
    },
  },
];
