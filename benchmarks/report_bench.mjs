// Time rokuprof HTML reports in headless Chromium: how soon each page is interactive, and how long
// each interaction takes to reach the screen. Driven by benchmarks/report.py.
//
//   node benchmarks/report_bench.mjs < plan.json > result.json
//
// plan: {"loads": N, "reps": R, "files": [{"path": "...", "interact": true}, ...]}
//
// Chromium is launched as tests/viewers/report.mjs launches it, and each page is served the same
// way (127.0.0.1, every other request blocked and recorded). Per file: `loads` fresh browser
// contexts, each timed from navigation start to the page's own ready mark
// ("rokuprof-report-ready", set by the page's script when its first view is drawn). With `interact`, one
// more page is driven `reps` times through the interactions below; each is timed inside the page,
// from the input event (a capturing listener on window, which runs before the page's handlers)
// to the end of the next frame: a requestAnimationFrame callback, then a message posted from it,
// which runs once that frame's style, layout and paint are done. A click on the footer (no
// handler) measured the same way is the floor every interaction shares.
//
// Exit status: 0 done, 1 the harness failed, 2 Chromium or playwright-core missing.

import { readFileSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { CHROMIUM, CHROMIUM_ARGS } from "../tests/viewers/chromium.mjs";

const require = createRequire(import.meta.url);
const STEP_TIMEOUT_MS = 30000;
const RUN_TIMEOUT_MS = 900000;

function fail(status, line) {
  process.stderr.write(`${line}\n`);
  process.exit(status);
}

function serve(files) {
  const server = http.createServer(async (req, res) => {
    const m = /^\/(\d+)\/[^/]+$/.exec(new URL(req.url, "http://127.0.0.1").pathname);
    if (!m || !files[Number(m[1])]) {
      res.writeHead(404);
      res.end();
      return;
    }
    const body = await readFile(files[Number(m[1])]);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": body.length });
    res.end(body);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

// A fresh context and page on `url`, waited until the page says it is ready.
async function open(browser, url, problems) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  await context.route("**/*", (route) => {
    const u = route.request().url();
    if (u === url) return route.continue();
    problems.push(`request to ${u} (blocked)`);
    return route.abort();
  });
  const page = await context.newPage();
  page.on("console", (msg) => problems.push(`console ${msg.type()}: ${msg.text()}`));
  page.on("pageerror", (err) => problems.push(`page error: ${err}`));
  page.on("dialog", async (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    await dialog.dismiss();
  });
  await page.goto(url);
  await page.waitForFunction(() => window.__reportReady === true, null, { timeout: STEP_TIMEOUT_MS, polling: 10 });
  const readyMs = await page.evaluate(() => performance.getEntriesByName("rokuprof-report-ready")[0]?.startTime ?? null);
  return { context, page, readyMs };
}

// ---------------------------------------------------------------- timing one interaction

// In the page: the next `type` event starts the clock; the end of the frame after it stops it.
function arm(type) {
  window.__bench = new Promise((resolve) => {
    const on = () => {
      window.removeEventListener(type, on, true);
      const t0 = performance.now();
      requestAnimationFrame(() => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => resolve(performance.now() - t0);
        channel.port2.postMessage(null);
      });
    };
    window.addEventListener(type, on, true);
  });
}

async function timed(page, type, action) {
  await page.evaluate(arm, type);
  await action();
  return page.evaluate(
    (ms) => Promise.race([window.__bench, new Promise((_, reject) => setTimeout(() => reject(new Error("no event or no frame")), ms))]),
    STEP_TIMEOUT_MS,
  );
}

// Every view dirty again (the page's own invalidation, as a thread switch does), then a frame.
async function invalidate(page) {
  await page.evaluate(
    () =>
      new Promise((resolve) => {
        window.__report.setThread(window.__report.state.thread);
        requestAnimationFrame(() => setTimeout(resolve, 0));
      }),
  );
}

// ---------------------------------------------------------------- the interactions

async function interactions(page, reps) {
  const times = {};
  const record = (label, ms) => (times[label] ||= []).push(ms);
  const tabs = await page.evaluate(() => window.__report.tabs);
  const metrics = await page.$$eval("#metric button[data-metric]", (bs) => bs.map((b) => b.dataset.metric));
  const clickTab = (key) => page.click(`#tab-${key}`);
  for (let rep = 0; rep < reps; rep++) {
    record("no-op click (floor)", await timed(page, "click", () => page.click("footer")));

    // Switch to each tab with every view out of date (its first drawing after a change).
    for (const key of tabs) {
      const here = await page.evaluate(() => window.__report.state.tab);
      if (here === key) await clickTab(tabs.find((k) => k !== key));
      await invalidate(page);
      record(`tab: ${key}`, await timed(page, "click", () => clickTab(key)));
    }
    // ... and back to one drawn already.
    await clickTab("flame");
    await clickTab(tabs.find((k) => k !== "flame"));
    record("tab: flame, drawn already", await timed(page, "click", () => clickTab("flame")));

    // The flame graph's metric: each one, then back to the first.
    const first = await page.evaluate(() => window.__report.state.metric);
    for (const key of [...metrics.filter((k) => k !== first), first]) {
      record(`metric: ${key}`, await timed(page, "click", () => page.click(`#metric button[data-metric="${key}"]`)));
    }

    // Zoom: click the widest frame three levels down (or the deepest there is), then the first crumb.
    const target = await page.evaluate(() => {
      const rects = window.__report.flame().filter((r) => r.depth >= 1 && r.w > 30);
      const depth = Math.min(3, Math.max(0, ...rects.map((r) => r.depth)));
      const best = rects.filter((r) => r.depth === depth).sort((a, b) => b.w - a.w)[0];
      if (!best) return null;
      const wrap = document.querySelector(".flame-wrap");
      wrap.scrollIntoView({ block: "start" });
      wrap.scrollTop = Math.max(0, best.y - 100);
      const box = document.getElementById("flame").getBoundingClientRect();
      return { x: box.left + best.x + best.w / 2, y: box.top + best.y + 10, name: best.key && best.key[1] };
    });
    if (target) {
      record("flame: zoom (click a frame)", await timed(page, "click", () => page.mouse.click(target.x, target.y)));
      record("flame: unzoom (first crumb)", await timed(page, "click", () => page.click("#crumbs button >> nth=0")));
    }

    // Search: a function's name typed at once, then cleared.
    const term = (target && target.name) || "main";
    record("flame: search", await timed(page, "input", () => page.fill("#search", term)));
    record("flame: search cleared", await timed(page, "input", () => page.fill("#search", "")));

    // A time range dragged on the timeline (a different one each time), then the whole run again.
    const g = await page.evaluate(() => {
      const c = document.getElementById("timeline");
      c.scrollIntoView({ block: "center" });
      const box = c.getBoundingClientRect();
      const t = window.__report.timeline();
      return { x: box.left + t.left, y: box.top + t.top + 30, plot: t.plot };
    });
    const a = g.x + g.plot * (0.1 + 0.05 * (rep % 8));
    const b = a + g.plot * 0.3;
    await page.mouse.move(a, g.y);
    await page.mouse.down();
    await page.mouse.move((a + b) / 2, g.y, { steps: 3 });
    await page.mouse.move(b, g.y, { steps: 3 });
    record("timeline: select a range", await timed(page, "pointerup", () => page.mouse.up()));
    record("timeline: whole run again", await timed(page, "click", () => page.click("#range-clear")));

    // Views that may not be there (older pages): the stack chart's wheel zoom, bottom-up's rows.
    if (tabs.includes("stack") && (await page.$("#stack"))) {
      await clickTab("stack");
      const box = await page.evaluate(() => {
        const c = document.getElementById("stack");
        c.scrollIntoView({ block: "center" });
        const r = c.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + Math.min(r.height / 2, 60) };
      });
      await page.mouse.move(box.x, box.y);
      record("stack chart: wheel zoom in", await timed(page, "wheel", () => page.mouse.wheel(0, -400)));
      record("stack chart: wheel zoom out", await timed(page, "wheel", () => page.mouse.wheel(0, 400)));
    }
    if (tabs.includes("bottomup")) {
      await clickTab("bottomup");
      if (await page.$('#bottomup tbody .toggle[role="button"]')) {
        record("bottom-up: open a row's callers", await timed(page, "click", () => page.click('#bottomup tbody .toggle[role="button"] >> nth=0')));
        record("bottom-up: close it", await timed(page, "click", () => page.click('#bottomup tbody .toggle[role="button"] >> nth=0')));
      }
      if (await page.$("#bottomup tbody tr")) {
        record("bottom-up: select a function", await timed(page, "click", () => page.click('#bottomup tbody tr >> nth=0 >> td[data-key="self"]')));
      }
    }
    // The Memory tab's range view (what grew the heap): a range dragged with it open, a leak
    // site's call path shown in the range's allocation flame graph, the whole run again.
    if (tabs.includes("memory") && (await page.$("#growth"))) {
      await clickTab("memory");
      const m = await page.evaluate(() => {
        const c = document.getElementById("timeline");
        c.scrollIntoView({ block: "center" });
        const box = c.getBoundingClientRect();
        const t = window.__report.timeline();
        return { x: box.left + t.left, y: box.top + t.top + 30, plot: t.plot };
      });
      const x0 = m.x + m.plot * (0.2 + 0.05 * (rep % 8)), x1 = x0 + m.plot * 0.25;
      await page.mouse.move(x0, m.y);
      await page.mouse.down();
      await page.mouse.move((x0 + x1) / 2, m.y, { steps: 3 });
      await page.mouse.move(x1, m.y, { steps: 3 });
      record("memory: select a range", await timed(page, "pointerup", () => page.mouse.up()));
      if (await page.$("#leaks button.show-path")) {
        record("memory: show a leak's call path", await timed(page, "click", () => page.click("#leaks button.show-path >> nth=0")));
      }
      record("memory: whole run again", await timed(page, "click", () => page.click("#range-clear")));
    }
    await clickTab("flame");
  }
  return times;
}

// ---------------------------------------------------------------- main

async function main() {
  const plan = JSON.parse(readFileSync(0, "utf-8"));
  for (const f of plan.files) await stat(f.path);
  let chromium;
  try {
    ({ chromium } = require("playwright-core"));
  } catch {
    fail(2, "report_bench.mjs: npm playwright-core is not installed (npm ci in the repository)");
  }
  try {
    await stat(CHROMIUM);
  } catch {
    fail(2, `report_bench.mjs: no Chromium at ${CHROMIUM} (apt-get install chromium, or set ROKUPROF_CHROMIUM)`);
  }
  const server = await serve(plan.files.map((f) => f.path));
  const base = `http://127.0.0.1:${server.address().port}`;
  let browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true, timeout: 60000 });
  } catch (err) {
    server.close();
    fail(2, `report_bench.mjs: Chromium at ${CHROMIUM} did not start: ${String(err).split("\n")[0]}`);
  }
  const watchdog = setTimeout(() => fail(1, `report_bench.mjs: gave up after ${RUN_TIMEOUT_MS / 1000} s`), RUN_TIMEOUT_MS);
  try {
    const results = [];
    for (const [i, f] of plan.files.entries()) {
      const url = `${base}/${i}/${encodeURIComponent(path.basename(f.path))}`;
      const out = { file: f.path, readyMs: [], problems: [], interactions: null };
      for (let n = 0; n < plan.loads; n++) {
        const { context, readyMs } = await open(browser, url, out.problems);
        out.readyMs.push(readyMs);
        await context.close();
      }
      if (f.interact && plan.reps > 0) {
        const { context, page } = await open(browser, url, out.problems);
        out.interactions = await interactions(page, plan.reps);
        await context.close();
      }
      results.push(out);
    }
    process.stdout.write(`${JSON.stringify({ chromium: browser.version(), results })}\n`);
  } finally {
    clearTimeout(watchdog);
    await browser.close();
    server.close();
  }
}

main().catch((err) => fail(1, `report_bench.mjs: ${err && err.stack ? err.stack : err}`));
