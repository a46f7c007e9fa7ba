// Open a `rokuprof diff --html` page in headless Chromium and report the colour each flame-graph
// frame was painted with, per metric.
//
//   node tests/viewers/diff_flame.mjs FILE METRIC... [--shots DIR]  > result.json
//
// The file is served from 127.0.0.1; every other request is blocked and recorded. For each
// METRIC (the page's metric keys: wall, cpu, calls, allocBytes, liveBytes) the result holds the
// drawn frames (window.__report.flame()) each with the RGB of the canvas pixel 2 px inside its
// top-left corner (left of any label), and the legend's text; "consoleAtLoad" has the console
// messages from before the harness read any pixel. With --shots DIR, a PNG per metric.
//
// Exit status: 0 when the page was examined, 1 when the harness itself failed.

import { readFile } from "node:fs/promises";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");

const TIMEOUT_MS = 20000;

async function main() {
  const args = process.argv.slice(2);
  let shots = null;
  const rest = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--shots") shots = path.resolve(args[++i]);
    else rest.push(args[i]);
  }
  const [file, ...metrics] = rest;
  const body = await readFile(file);
  const server = http.createServer((req, res) => {
    if (req.url !== "/diff.html") {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": body.length });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const own = `http://127.0.0.1:${server.address().port}/diff.html`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60000 });
  const result = { console: [], pageErrors: [], requests: [], blockedRequests: [], metrics: {} };
  try {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
    await context.route("**/*", (route) => {
      const url = route.request().url();
      result.requests.push(url);
      if (url === own) return route.continue();
      result.blockedRequests.push(url);
      return route.abort();
    });
    // The figures are compared with every call path's, idle ones included: show them, as a
    // reader who unticked "Hide idle" would.
    await context.addInitScript(() => localStorage.setItem("rokuprof.hideIdle", "false"));
    const page = await context.newPage();
    page.on("console", (msg) => result.console.push({ type: msg.type(), text: msg.text() }));
    page.on("pageerror", (err) => result.pageErrors.push(String(err && err.stack ? err.stack : err)));
    await page.goto(own);
    await page.waitForFunction(() => window.__reportReady === true, null, { timeout: TIMEOUT_MS });
    result.consoleAtLoad = [...result.console];  // before the harness reads pixels back
    for (const metric of metrics) {
      await page.click(`#metric button[data-metric="${metric}"]`);
      result.metrics[metric] = await page.evaluate(() => {
        const canvas = document.getElementById("flame");
        const ctx = canvas.getContext("2d");
        const dpr = window.devicePixelRatio || 1;
        const image = ctx.getImageData(0, 0, canvas.width, canvas.height);  // one readback
        const frames = window.__report.flame().map((r) => {
          const x = Math.round((r.x + 2) * dpr), y = Math.round((r.y + 2) * dpr);
          const i = (y * image.width + x) * 4;
          return { ...r, rgb: [image.data[i], image.data[i + 1], image.data[i + 2]] };
        });
        return { frames, state: window.__report.state.metric, legend: document.getElementById("legend").innerText };
      });
      if (shots) await page.screenshot({ path: path.join(shots, `diff-${metric}.png`), fullPage: true });
    }
    await context.close();
  } finally {
    await browser.close();
    server.close();
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err) => {
  process.stderr.write(`diff_flame.mjs: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
