// Open profile files in the real speedscope app (headless Chromium) and report what it shows.
//
//   node tests/viewers/speedscope.mjs FILE...  > result.json
//
// One browser for all files. speedscope's release build and the files are served from an HTTP
// server on 127.0.0.1 (the app only loads #profileURL= over http). Any request to another host is
// blocked and reported. For each file the result holds the page title, the console messages,
// page errors and alerts, whether the error page appeared, and, when the file imported, every
// profile's Sandwich table: [{name, file, total, self}] with the figures as the page prints them.
//
// Exit status: 0 when every file was examined (whatever speedscope thought of it), 1 when the
// harness itself failed (no browser, a timeout of the whole run).

import { readFile, stat } from "node:fs/promises";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");

const RELEASE = path.join(path.dirname(require.resolve("speedscope/package.json")), "dist/release");
const LOAD_TIMEOUT_MS = 20000;
const RUN_TIMEOUT_MS = 170000;

const TYPES = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};

function serve(files) {
  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, "http://127.0.0.1");
      let body;
      let type = "application/octet-stream";
      const m = /^\/profiles\/(\d+)\//.exec(url.pathname);
      if (m) {
        body = await readFile(files[Number(m[1])]);
      } else {
        const rel = path.normalize(decodeURIComponent(url.pathname)).replace(/^(\.\.[/\\])+/, "");
        const file = path.join(RELEASE, rel === "/" ? "index.html" : rel);
        if (!file.startsWith(RELEASE)) throw new Error("outside the release directory");
        body = await readFile(file);
        type = TYPES[path.extname(file)] || type;
      }
      res.writeHead(200, { "content-type": type, "content-length": body.length });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function isLoopback(url) {
  try {
    const host = new URL(url).hostname;
    return host === "127.0.0.1" || host === "localhost" || host === "[::1]";
  } catch {
    return url.startsWith("data:") || url.startsWith("blob:") || url.startsWith("about:");
  }
}

// The page's figures, read from its DOM (speedscope's class names are minified, so by structure).
function readSandwich() {
  const visible = (el) => el.offsetParent !== null;
  const marker = [...document.querySelectorAll("span")].find(
    (s) => visible(s) && /^\(\d+\/\d+\)$/.test(s.innerText.trim()),
  );
  let name = document.title.replace(/ - speedscope$/, "");
  let index = 1;
  let count = 1;
  if (marker) {
    const m = /^\((\d+)\/(\d+)\)$/.exec(marker.innerText.trim());
    index = Number(m[1]);
    count = Number(m[2]);
    name = marker.parentElement.innerText.replace(marker.innerText, "").trim();
  }
  const th = [...document.querySelectorAll("th")].find(
    (t) => visible(t) && t.innerText.includes("Symbol Name"),
  );
  if (!th) return null;
  const rows = [];
  let empty = false;
  for (const tr of th.closest("table").parentElement.querySelectorAll("tr")) {
    const tds = tr.querySelectorAll("td");
    if (tds.length === 1 && tds[0].innerText.includes("No symbols found")) empty = true;
    if (tds.length !== 3) continue;
    rows.push({
      total: tds[0].innerText.trim(),
      self: tds[1].innerText.trim(),
      name: tds[2].innerText.trim(),
      file: tds[2].getAttribute("title"),
    });
  }
  // The rows appear a moment after the header: wait for them (or for "No symbols found.").
  if (rows.length === 0 && !empty) return null;
  return { name, index, count, rows };
}

async function sandwichTables(page) {
  // Click the Sandwich tab, then read every profile in turn ("n" moves to the next one).
  await page
    .locator("div", { hasText: /^\s*\S*\s*Sandwich\s*$/ })
    .last()
    .click({ timeout: LOAD_TIMEOUT_MS });
  const profiles = [];
  for (;;) {
    const handle = await page.waitForFunction(readSandwich, null, {
      timeout: LOAD_TIMEOUT_MS,
      polling: 50,
    });
    const table = await handle.jsonValue();
    profiles.push(table);
    if (table.index >= table.count) break;
    await page.keyboard.press("n");
    await page.waitForFunction(
      ([fn, prev]) => {
        const now = new Function(`return (${fn})()`)();
        return now !== null && now.index !== prev;
      },
      [readSandwich.toString(), table.index],
      { timeout: LOAD_TIMEOUT_MS, polling: 50 },
    );
  }
  return profiles;
}

async function examine(browser, baseUrl, file, index) {
  const context = await browser.newContext({ viewport: { width: 1600, height: 6000 } });
  const result = {
    file,
    title: null,
    outcome: null,
    imported: false,
    errorPage: false,
    console: [],
    pageErrors: [],
    dialogs: [],
    blockedRequests: [],
    profiles: [],
  };
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (isLoopback(url)) return route.continue();
    result.blockedRequests.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on("console", (msg) => result.console.push({ type: msg.type(), text: msg.text() }));
  page.on("pageerror", (err) => result.pageErrors.push(String(err && err.stack ? err.stack : err)));
  let alerted;
  const alert = new Promise((resolve) => {
    alerted = resolve;
  });
  page.on("dialog", async (dialog) => {
    result.dialogs.push(dialog.message());
    await dialog.dismiss();
    alerted("alert");
  });
  const name = path.basename(file);
  const url = `${baseUrl}/index.html#profileURL=${encodeURIComponent(`/profiles/${index}/${name}`)}`;
  await page.goto(url);
  // Loaded: the title names the file; failed: the error page, an alert, or a page error.
  const settled = page
    .waitForFunction(
      () =>
        document.title.endsWith(" - speedscope") ||
        document.body.innerText.includes("Something went wrong"),
      null,
      { timeout: LOAD_TIMEOUT_MS, polling: 50 },
    )
    .then(() => "settled")
    .catch(() => "timeout");
  const outcome = await Promise.race([settled, alert]);
  result.outcome = outcome;
  result.title = await page.title();
  result.errorPage = (await page.evaluate(() => document.body.innerText)).includes(
    "Something went wrong",
  );
  result.imported = outcome === "settled" && !result.errorPage;
  if (result.imported) result.profiles = await sandwichTables(page);
  await context.close();
  return result;
}

async function main() {
  const files = process.argv.slice(2).map((f) => path.resolve(f));
  for (const f of files) await stat(f);
  const server = await serve(files);
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
    headless: true,
    timeout: 60000,
  });
  const watchdog = setTimeout(() => {
    process.stderr.write(`speedscope.mjs: gave up after ${RUN_TIMEOUT_MS / 1000} s\n`);
    process.exit(1);
  }, RUN_TIMEOUT_MS);
  try {
    const results = [];
    for (const [i, f] of files.entries()) results.push(await examine(browser, baseUrl, f, i));
    process.stdout.write(`${JSON.stringify({ results }, null, 1)}\n`);
  } finally {
    clearTimeout(watchdog);
    await browser.close();
    server.close();
  }
}

main().catch((err) => {
  process.stderr.write(`speedscope.mjs: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
