// Open rokuprof HTML reports in headless Chromium, drive them like a person would, and report
// what the page showed.
//
//   node tests/viewers/report.mjs [--drive | --deep | --steps MODULE] [--shots DIR] [--show-idle] FILE...  > result.json
//
// Each file is served from an HTTP server on 127.0.0.1; every request other than the file itself
// is blocked and recorded. Per file the result holds the console messages, page errors, dialogs,
// blocked requests, the time from navigation start until the page said it was interactive
// (window.__reportReady, performance mark "rokuprof-report-ready"), and, with --drive, what the
// page showed after each step (switching the metric, zooming, searching, sorting, selecting a time
// range, ...); with --deep, the steps for a call path thousands of frames deep (zoom down through
// its levels and back up, expand the whole call tree, its leak site); with --steps MODULE, the
// steps of a view's own test: MODULE's default export, called as
// `await steps(page, { dir, stem, shot, table, clickTab })`, returns what goes into the result.
// With --shots DIR, a PNG of each view goes to DIR/<file stem>-<view>.png. With --show-idle, the
// page opens as for a reader who chose to show idle frames (the choice the page keeps in its
// storage), for the checks that compare its figures with inspect's, which count every function.
//
// Exit status: 0 when every file was examined, 1 when the harness itself failed.

import { readFile, stat } from "node:fs/promises";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");

const STEP_TIMEOUT_MS = 20000;
const RUN_TIMEOUT_MS = 170000;

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

// ---------------------------------------------------------------- what the page shows

function readTable(id) {
  const table = document.getElementById(id);
  if (!table) return null;
  const heads = [...table.querySelectorAll("thead th")].map((th) => ({
    key: th.dataset.key,
    label: th.textContent,
    sort: th.getAttribute("aria-sort"),
  }));
  const rows = [...table.querySelectorAll("tbody tr")].map((tr) => {
    const row = { attrs: { ...tr.dataset } };
    for (const td of tr.querySelectorAll("td")) {
      row[td.dataset.key] = td.dataset.value !== undefined ? { text: td.textContent, value: Number(td.dataset.value) } : td.textContent;
    }
    return row;
  });
  return { heads, rows };
}

async function table(page, id) {
  return page.evaluate(readTable, id);
}

async function flame(page) {
  return page.evaluate(() => ({ rects: window.__report.flame(), size: window.__report.flameSize(), state: { metric: window.__report.state.metric, zoom: window.__report.state.zoom, thread: window.__report.state.thread } }));
}

async function shot(page, dir, stem, view) {
  if (!dir) return null;
  const file = path.join(dir, `${stem}-${view}.png`);
  await page.screenshot({ path: file, fullPage: true });
  // A full-page shot resizes the viewport: let the page's debounced resize redraw (80 ms) run
  // before the next step clicks somewhere (a redraw scrolls the flame graph to its bottom).
  await page.waitForTimeout(200);
  return file;
}

async function clickTab(page, key) {
  await page.click(`#tab-${key}`);
  await page.waitForSelector(`#view-${key}:not([hidden])`, { timeout: STEP_TIMEOUT_MS });
}

// Drive every view; each step's observation goes into `steps`.
async function drive(page, dir, stem) {
  const steps = {};
  const shots = {};
  steps.initial = await flame(page);
  shots.flame = await shot(page, dir, stem, "flame");

  // The metric switch: every metric's layout.
  steps.metrics = {};
  for (const key of ["cpu", "calls", "allocBytes", "liveBytes", "wall"]) {
    await page.click(`#metric button[data-metric="${key}"]`);
    steps.metrics[key] = await flame(page);
  }

  // Zoom: click the middle of the widest frame two levels below the thread frames.
  const canvas = await page.$("#flame");
  const box = await canvas.boundingBox();
  const candidates = steps.metrics.wall.rects.filter((r) => r.depth === 3 && r.w > 40).sort((a, b) => b.w - a.w);
  if (candidates.length) {
    const target = candidates[0];
    await page.mouse.click(box.x + target.x + target.w / 2, box.y + target.y + 10);
    steps.zoom = { target, after: await flame(page), crumbs: await page.$$eval("#crumbs button", (bs) => bs.map((b) => b.textContent)) };
    // hover: the tooltip
    const z = steps.zoom.after.rects.find((r) => r.node === target.node);
    await page.mouse.move(box.x + z.x + z.w / 2, box.y + z.y + 10);
    steps.tooltip = await page.$eval(".tip", (t) => (t.hidden ? null : t.innerText));
    shots.zoom = await shot(page, dir, stem, "flame-zoomed");
    // breadcrumb back to the top
    await page.click("#crumbs button >> nth=0");
    steps.unzoom = await flame(page);
  }

  // Search
  await page.fill("#search", "parse");
  steps.search = {
    text: await page.$eval("#matches", (m) => m.textContent),
    share: await page.evaluate(() => window.__report.state.searchShare),
    layout: await flame(page),
  };
  shots.search = await shot(page, dir, stem, "flame-search");
  await page.fill("#search", "");

  await page.click('#shape button[data-shape="icicle"]');
  shots.icicle = await shot(page, dir, stem, "icicle");
  steps.icicle = await flame(page);
  await page.click('#shape button[data-shape="flame"]');

  // Call tree: sorted by total wall, then by self CPU; expand and collapse.
  await clickTab(page, "tree");
  steps.tree = await table(page, "calltree");
  shots.tree = await shot(page, dir, stem, "tree");
  await page.click('#calltree th[data-key="self:cpu"]');
  steps.treeByCpu = await table(page, "calltree");
  const closed = await page.$('#calltree tr[data-depth="0"] td[data-key="name"]');
  if (closed) {
    await closed.click();
    steps.treeCollapsed = await table(page, "calltree");
    await (await page.$('#calltree tr[data-depth="0"] td[data-key="name"]')).click();
    steps.treeReopened = await table(page, "calltree");
  }

  // Functions: figures, sorting, filtering, hide idle.
  await clickTab(page, "functions");
  steps.functions = await table(page, "functions");
  shots.functions = await shot(page, dir, stem, "functions");
  await page.click('#functions th[data-key="selfCpu"]');
  steps.functionsByCpu = await table(page, "functions");
  await page.click('#functions th[data-key="selfCpu"]');
  steps.functionsByCpuAsc = await table(page, "functions");
  await page.fill("#fn-filter", "parse");
  steps.functionsFiltered = await table(page, "functions");
  await page.fill("#fn-filter", "");
  await page.check("#hide-idle");
  steps.functionsNoIdle = await table(page, "functions");
  steps.waits = await page.$$eval("#waits .chip[data-wait]", (cs) => cs.map((c) => c.dataset.wait));
  await page.uncheck("#hide-idle");
  const threads = await page.$$eval("#thread option", (os) => os.map((o) => [o.value, o.textContent]));
  steps.threads = threads;
  if (threads.length > 2) {
    await page.selectOption("#thread", threads[2][0]);
    steps.functionsOneThread = { thread: threads[2][1], table: await table(page, "functions") };
    await page.selectOption("#thread", "-1");
  }

  await clickTab(page, "lines");
  steps.lines = await page.$$eval("#line-cards .card", (cards) =>
    cards.map((c) => ({ title: c.querySelector("h3").textContent, rows: [...c.querySelectorAll("tbody tr")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.dataset.value ?? td.textContent)) })),
  );
  steps.linesNote = await page.$eval("#view-lines", (v) => v.querySelector(".note")?.textContent ?? null);
  steps.allocSites = await page.$$eval("#alloc-cards .card", (cards) =>
    cards.map((c) => ({ title: c.querySelector("h3").textContent, heads: [...c.querySelectorAll("thead th")].map((th) => th.dataset.key), rows: [...c.querySelectorAll("tbody tr")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.dataset.value ?? td.textContent)) })),
  );
  shots.lines = await shot(page, dir, stem, "lines");

  await clickTab(page, "memory");
  steps.leaks = await table(page, "leaks");
  steps.allocs = await table(page, "allocs");
  steps.churn = await table(page, "churn");
  shots.memory = await shot(page, dir, stem, "memory");

  await clickTab(page, "facts");
  steps.facts = await page.$$eval("#facts dd", (dds) => Object.fromEntries(dds.map((d) => [d.dataset.fact, d.textContent])));
  steps.status = await page.$eval("#status", (s) => s.textContent);
  steps.problem = await page.$eval("#problem", (p) => p.textContent).catch(() => null);
  shots.facts = await shot(page, dir, stem, "facts");

  // Time range: drag across the second quarter of the timeline.
  await clickTab(page, "functions");
  const tl = await page.$("#timeline");
  const tbox = await tl.boundingBox();
  const geo = await page.evaluate(() => window.__report.timeline());
  const x0 = tbox.x + geo.left + geo.plot * 0.25, x1 = tbox.x + geo.left + geo.plot * 0.5;
  await page.mouse.move(x0, tbox.y + 30);
  await page.mouse.down();
  await page.mouse.move((x0 + x1) / 2, tbox.y + 30, { steps: 4 });
  await page.mouse.move(x1, tbox.y + 30, { steps: 4 });
  await page.mouse.up();
  steps.range = {
    range: await page.evaluate(() => window.__report.state.range),
    text: await page.$eval("#range-text", (r) => r.textContent),
    functions: await table(page, "functions"),
  };
  shots.range = await shot(page, dir, stem, "range");
  await clickTab(page, "flame");
  steps.range.flame = await flame(page);
  await page.click("#range-clear");
  steps.rangeCleared = { range: await page.evaluate(() => window.__report.state.range), flame: await flame(page) };
  steps.probe = await probe(page);
  return { steps, shots };
}

// What a reader sees of the page's words and layout: the heading, the live-heap figures, the
// file colours, the tooltip of several frames, the note a view shows without memory data, and
// the functions table at 1,280 px (its width, its clipped texts).
async function probe(page) {
  const out = {};
  const text = (sel) => page.$eval(sel, (e) => e.innerText).catch(() => null);
  out.heading = await text("h1");
  out.heap = await page.$eval("#heap-text", (e) => ({ text: e.innerText, values: [...e.querySelectorAll("[data-value]")].map((b) => Number(b.dataset.value)) })).catch(() => null);
  out.legend = await page.$$eval("#legend span", (ss) => ss.map((s) => [s.textContent, s.querySelector("i").style.background]));
  // tooltips: up to 12 of the widest frames below the thread frames, hovered one by one
  const canvas = await page.$("#flame");
  const layout = await flame(page);
  const targets = layout.rects.filter((r) => r.depth >= 1 && r.w > 24).sort((a, b) => b.w - a.w || a.node - b.node).slice(0, 12);
  out.tips = [];
  for (const r of targets) {
    const box = await canvas.boundingBox();
    await page.mouse.move(box.x + r.x + r.w / 2, box.y + r.y + 10);
    const rows = await page.$eval(".tip", (t) => (t.hidden ? null : Object.fromEntries([...t.querySelectorAll("tr")].map((tr) => [tr.dataset.key, [tr.cells[0].textContent, tr.cells[1].textContent]]))));
    out.tips.push({ node: r.node, key: r.key, rows });
  }
  await page.mouse.move(0, 0);
  // a memory metric: the flame graph, or the note saying why there is none
  await page.click('#metric button[data-metric="liveBytes"]');
  out.liveMetric = await page.evaluate(() => {
    const note = document.getElementById("flame-note");
    return { note: note && !note.hidden ? note.textContent : null, graphHidden: document.querySelector(".flame-wrap").hidden, title: document.querySelector('#metric button[data-metric="liveBytes"]').title };
  });
  await page.click('#metric button[data-metric="wall"]');
  // views without memory data say so
  await clickTab(page, "memory");
  out.memoryText = await text("#view-memory");
  out.stats = await page.$$eval("#view-memory .stat", (ss) => Object.fromEntries(ss.map((s) => [s.querySelector(".k").textContent, s.querySelector(".v").textContent])));
  await clickTab(page, "lines");
  out.linesText = await text("#view-lines");
  out.lineCpu = await page.$$eval('#line-cards td[data-key="cpu"]', (tds) => tds.map((td) => [td.textContent, Number(td.dataset.value)]));
  await clickTab(page, "tree");
  out.treeNotes = await page.$$eval("#view-tree .note", (ns) => ns.map((n) => n.textContent));
  await clickTab(page, "facts");
  out.facts = await page.$$eval("#facts dd", (dds) => Object.fromEntries(dds.map((d) => [d.dataset.fact, d.textContent])));
  // the functions table at 1,280 px
  const viewport = page.viewportSize();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForTimeout(200); // the page's debounced resize redraw (80 ms)
  await clickTab(page, "functions");
  out.fit = await page.$eval("#functions", (t) => {
    const wrap = t.parentElement;
    const clipped = [...t.querySelectorAll("td .clip")].map((c) => ({ key: c.closest("td").dataset.key, text: c.textContent, title: c.closest("td").title, clipped: c.scrollWidth > c.clientWidth, ellipsis: getComputedStyle(c).textOverflow }));
    return { viewport: window.innerWidth, scrollWidth: wrap.scrollWidth, clientWidth: wrap.clientWidth, tableWidth: t.scrollWidth, heads: [...t.querySelectorAll("thead th")].map((th) => th.dataset.key), clipped };
  });
  out.notes = await page.$$eval("#view-functions .note", (ns) => ns.map((n) => n.textContent));
  out.swatches = await page.$$eval("#functions tbody tr", (trs) => trs.map((tr) => [tr.querySelector('td[data-key="file"]').title, tr.querySelector('td[data-key="function"]').title, tr.querySelector(".swatch").style.background]));
  await page.setViewportSize(viewport);
  await page.waitForTimeout(200);
  return out;
}

// A session's marks and vitals on the timeline (null on a page without them): the marks drawn
// and listed, the vitals' strips, and what is under a mark's line (the canvas: dragging works).
function sessionParts() {
  if (!window.__report.model.session) return null;
  const canvas = document.getElementById("timeline");
  const box = canvas.getBoundingClientRect();
  const marks = [...document.querySelectorAll("#timeline-marks .mark")].map((m) => {
    const r = m.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left, box.top + box.height / 2);
    return { label: m.dataset.label, at: Number(m.dataset.at), title: m.title, shown: m.querySelector(".label")?.textContent ?? "", count: Number(m.dataset.count), x: r.left - box.left, under: hit && hit.id };
  });
  return {
    marks,
    list: [...document.querySelectorAll("#marks li")].map((li) => [li.querySelector(".t").textContent, li.querySelector(".label").textContent]),
    vitals: window.__report.timeline().vitals,
    peaks: [...document.querySelectorAll("#vitals-text b")].map((b) => ({ series: b.dataset.series, points: Number(b.dataset.points), text: b.textContent })),
    notes: document.getElementById("session-notes")?.textContent ?? null,
    geometry: window.__report.timeline(),
    elements: document.querySelectorAll("img, iframe, object, embed").length,
  };
}

async function flameSummary(page) {
  return page.evaluate(() => {
    const r = window.__report;
    const rects = r.flame();
    return {
      size: r.flameSize(),
      marks: r.flameMarks(),
      frames: rects.length,
      rows: Math.max(0, ...rects.map((x) => x.depth)) + 1,
      names: [...new Set(rects.map((x) => (x.key ? x.key[1] : null)).filter(Boolean))],
      zoom: r.state.zoom,
      crumbs: [...document.querySelectorAll("#crumbs button")].map((b) => b.textContent),
    };
  });
}

// A very deep call path: what is drawn, zooming through the levels, the call tree, the leak site.
async function driveDeep(page, dir, stem) {
  const steps = {};
  const shots = {};
  steps.initial = await flameSummary(page);
  shots.flame = await shot(page, dir, stem, "flame");
  const canvas = await page.$("#flame");
  const clickMark = async (kind) => {
    const mark = (await page.evaluate(() => window.__report.flameMarks())).find((m) => m.kind === kind);
    if (!mark) return null;
    await page.evaluate((y) => {
      const wrap = document.querySelector(".flame-wrap");
      wrap.scrollIntoView();
      wrap.scrollTop = Math.max(0, y - 100);
    }, mark.y);
    const b = await canvas.boundingBox();
    const t0 = Date.now();
    await page.mouse.click(b.x + mark.x + Math.min(mark.w / 2, 200), b.y + mark.y + 10);
    const after = await flameSummary(page);
    return { mark, ms: Date.now() - t0, after };
  };
  steps.deeper = await clickMark("deeper"); // zoom in where the drawn levels end
  shots.deeper = await shot(page, dir, stem, "flame-deeper");
  steps.leaf = await page.evaluate(() => {
    const names = window.__report.model.strings;
    const fns = window.__report.model.functions.name;
    const nodeFn = window.__report.model.nodes.fn;
    const parent = window.__report.model.nodes.parent;
    let deepest = -1, most = -1;
    for (let n = 0; n < nodeFn.length; n++) {
      if (nodeFn[n] < 0 || names[fns[nodeFn[n]]] !== "leaf") continue;
      let d = 0;
      for (let m = n; m >= 0; m = parent[m]) d++;
      if (d > most) [deepest, most] = [n, d];
    }
    const t0 = performance.now();
    window.__report.zoomTo(deepest);
    return { node: deepest, ms: performance.now() - t0 };
  });
  steps.leaf.after = await flameSummary(page);
  steps.up = await clickMark("elided"); // half-way up the collapsed chain
  await page.click("#crumbs button >> nth=0");
  steps.top = await flameSummary(page);

  await clickTab(page, "tree");
  const t0 = Date.now();
  await page.click("#view-tree .toolbar button >> nth=1"); // Expand all
  const tree = await table(page, "calltree");
  steps.tree = { ms: Date.now() - t0, rows: tree.rows.length, more: await page.$eval("#view-tree .more", (m) => m.textContent).catch(() => null) };
  shots.tree = await shot(page, dir, stem, "tree");
  await clickTab(page, "memory");
  steps.leaks = await table(page, "leaks");
  await clickTab(page, "lines");
  await clickTab(page, "functions");
  steps.functions = await table(page, "functions");
  return { steps, shots };
}

async function examine(browser, baseUrl, file, index, options) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  const own = `${baseUrl}/${index}/${encodeURIComponent(path.basename(file))}`;
  const result = { file, console: [], pageErrors: [], dialogs: [], requests: [], blockedRequests: [], readyMs: null, loadMs: null };
  await context.route("**/*", (route) => {
    const url = route.request().url();
    result.requests.push(url);
    if (url === own) return route.continue();
    result.blockedRequests.push(url);
    return route.abort();
  });
  if (options.showIdle) await context.addInitScript(() => localStorage.setItem("rokuprof.hideIdle", "false"));
  const page = await context.newPage();
  page.on("console", (msg) => result.console.push({ type: msg.type(), text: msg.text() }));
  page.on("pageerror", (err) => result.pageErrors.push(String(err && err.stack ? err.stack : err)));
  page.on("dialog", async (dialog) => {
    result.dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  await page.goto(own);
  try {
    await page.waitForFunction(() => window.__reportReady === true, null, { timeout: STEP_TIMEOUT_MS, polling: 20 });
    const t = await page.evaluate(() => ({
      ready: performance.getEntriesByName("rokuprof-report-ready")[0]?.startTime ?? null,
      load: performance.getEntriesByType("navigation")[0]?.loadEventEnd ?? null,
      title: document.title,
    }));
    result.readyMs = t.ready;
    result.loadMs = t.load;
    result.title = t.title;
  } catch (err) {
    result.pageErrors.push(`never ready: ${err}`);
    await context.close();
    return result;
  }
  const stem = path.basename(file).replace(/\.html$/, "");
  if (options.drive) Object.assign(result, await drive(page, options.shots, stem));
  else if (options.deep) Object.assign(result, await driveDeep(page, options.shots, stem));
  else if (options.steps) Object.assign(result, await options.steps(page, { dir: options.shots, stem, shot, table, clickTab }));
  else if (options.shots) result.shots = { flame: await shot(page, options.shots, stem, "flame") };
  result.bodyText = await page.evaluate(() => document.body.innerText);
  result.session = await page.evaluate(sessionParts);
  result.scripts = await page.evaluate(() => document.scripts.length);
  await context.close();
  return result;
}

async function main() {
  const args = process.argv.slice(2);
  const options = { drive: false, deep: false, shots: null };
  const files = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--drive") options.drive = true;
    else if (args[i] === "--deep") options.deep = true;
    else if (args[i] === "--show-idle") options.showIdle = true;
    else if (args[i] === "--shots") options.shots = path.resolve(args[++i]);
    else if (args[i] === "--steps") options.steps = (await import(pathToFileURL(path.resolve(args[++i])).href)).default;
    else files.push(path.resolve(args[i]));
  }
  for (const f of files) await stat(f);
  const server = await serve(files);
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true, timeout: 60000 });
  const watchdog = setTimeout(() => {
    process.stderr.write(`report.mjs: gave up after ${RUN_TIMEOUT_MS / 1000} s\n`);
    process.exit(1);
  }, RUN_TIMEOUT_MS);
  try {
    const results = [];
    for (const [i, f] of files.entries()) results.push(await examine(browser, baseUrl, f, i, options));
    process.stdout.write(`${JSON.stringify({ results })}\n`);
  } finally {
    clearTimeout(watchdog);
    await browser.close();
    server.close();
  }
}

main().catch((err) => {
  process.stderr.write(`report.mjs: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
