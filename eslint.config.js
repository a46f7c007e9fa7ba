// ESLint (flat config): the report page's ES modules (browser), their unit tests and the build
// script (Node). `npm run lint`; .ci/run runs it.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/**", "rokuprof/export/report/assets/report.js", "tests/viewers/**", "tests/clients/**", "benchmarks/**"] },
  js.configs.recommended,
  {
    files: ["rokuprof/export/report/assets/src/**/*.js"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.browser } },
  },
  {
    files: ["tests/js/**/*.mjs", "rokuprof/export/report/build_report.mjs", "eslint.config.js"],
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
