// The A/B page's steps for tests/test_diff_page.py (report.mjs --steps): read the heading and
// both captures' facts, the flame graph's legend and the colour of every frame (the canvas pixel
// 2 px inside its top-left corner) for two metrics, the Functions tab for several figures, the
// call tree of both runs (as opened, then all of it, then by live bytes), the Lines and Memory
// tabs, the Facts tab. Every click that changes a view is timed in the page: the click and the
// layout it causes, in milliseconds.
import { timedClick } from "./timed_click.mjs";

const STEP_TIMEOUT_MS = 20000;

async function timedSelect(page, selector, value) {
  return page.evaluate(([sel, v]) => {
    const s = document.querySelector(sel);
    const t0 = performance.now();
    s.value = v;
    s.dispatchEvent(new Event("change"));
    void document.body.offsetHeight;
    return performance.now() - t0;
  }, [selector, value]);
}

async function tab(page, key, ms) {
  ms[`tab:${key}`] = await timedClick(page, `#tab-${key}`);
  await page.waitForSelector(`#view-${key}:not([hidden])`, { timeout: STEP_TIMEOUT_MS });
}

// Per row of a table: its kind and the colour of its Δ% chips (by column key).
function chips(id) {
  return [...document.querySelectorAll(`#${id} tbody tr`)].map((tr) => ({
    row: tr.dataset.row ?? tr.dataset.tnode,
    chips: Object.fromEntries([...tr.querySelectorAll("td .chg")].map((c) => [c.closest("td").dataset.key, [c.dataset.kind, getComputedStyle(c).backgroundColor]])),
  }));
}

function frames() {
  // read back through a copy made for reading (the page's own canvas is never read from)
  const canvas = document.getElementById("flame");
  const copy = document.createElement("canvas");
  copy.width = canvas.width;
  copy.height = canvas.height;
  const ctx = copy.getContext("2d", { willReadFrequently: true });
  ctx.drawImage(canvas, 0, 0);
  const dpr = window.devicePixelRatio || 1;
  const image = ctx.getImageData(0, 0, copy.width, copy.height);
  return window.__report.flame().map((r) => {
    const x = Math.round((r.x + 2) * dpr), y = Math.round((r.y + 2) * dpr);
    const i = (y * image.width + x) * 4;
    return { ...r, rgb: [image.data[i], image.data[i + 1], image.data[i + 2]] };
  });
}

function legend() {
  return {
    text: document.getElementById("legend").innerText,
    swatches: [...document.querySelectorAll("#legend i")].map((i) => ({ kind: i.dataset.kind ?? i.parentElement.dataset.kind ?? null, ratio: i.dataset.ratio ? Number(i.dataset.ratio) : null, colour: getComputedStyle(i).backgroundColor })),
  };
}

function header() {
  const side = (which) => {
    const p = document.querySelector(`#ab-sides p.side[data-side="${which}"]`);
    return p ? Object.fromEntries([...p.querySelectorAll("[data-fact]")].map((e) => [e.dataset.fact, e.textContent])) : null;
  };
  return {
    title: document.title,
    heading: document.getElementById("heading").textContent,
    capture: document.getElementById("capture").textContent,
    a: side("a"),
    b: side("b"),
    basis: document.getElementById("ab-basis")?.textContent ?? null,
  };
}

export default async function diffPage(page, { dir, stem, table }) {
  const steps = {};
  const ms = {};
  steps.header = await page.evaluate(header);

  // the flame graph: B's shape, coloured by change
  steps.flame = {};
  for (const metric of ["wall", "liveBytes"]) {
    ms[`metric:${metric}`] = await timedClick(page, `#metric button[data-metric="${metric}"]`);
    steps.flame[metric] = { frames: await page.evaluate(frames), legend: await page.evaluate(legend) };
  }
  await page.click('#metric button[data-metric="wall"]');
  // the tooltip of the widest frame below the thread frames
  const widest = steps.flame.wall.frames.filter((r) => r.depth >= 2 && r.key).sort((a, b) => b.w - a.w)[0];
  if (widest) {
    // hover() scrolls the frame into view first, wherever the first screen ends
    await page.locator("#flame").hover({ position: { x: widest.x + widest.w / 2, y: widest.y + 10 } });
    steps.tip = { node: widest.node, key: widest.key, row: await page.$eval('.tip tr[data-key="diff"]', (tr) => [tr.cells[0].textContent, tr.cells[1].textContent]).catch(() => null) };
    await page.mouse.move(0, 0);
  }
  if (dir) await page.screenshot({ path: `${dir}/${stem}-flame.png`, fullPage: true });

  // Functions: A, B, Δ, Δ% per figure
  await tab(page, "functions", ms);
  steps.functions = {};
  for (const figure of ["self_wall", "total_wall", "calls", "self_cpu", "self_live_bytes"]) {
    ms[`figure:${figure}`] = await timedSelect(page, "#diff-figure", figure);
    steps.functions[figure] = { table: await table(page, "diff-functions"), chips: await page.evaluate(chips, "diff-functions") };
  }
  await timedSelect(page, "#diff-figure", "self_wall");
  if (dir) {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.waitForTimeout(200); // the page's debounced resize redraw (80 ms)
    await page.screenshot({ path: `${dir}/${stem}-functions.png`, fullPage: false });
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.waitForTimeout(200);
  }
  ms["sort:d"] = await timedClick(page, '#diff-functions th[data-key="d"]');
  steps.functionsByDelta = await table(page, "diff-functions");
  await page.click('#diff-functions th[data-key="rank"]');

  // the call tree of both runs
  await tab(page, "tree", ms);
  steps.tree = { opened: await table(page, "diff-calltree") };
  ms.expandAll = await timedClick(page, "#view-tree .toolbar .btn:nth-of-type(2)");
  steps.tree.all = await table(page, "diff-calltree");
  steps.tree.allChips = await page.evaluate(chips, "diff-calltree");
  ms["tree:liveBytes"] = await timedClick(page, '#tree-metric button[data-metric="liveBytes"]');
  steps.tree.live = await table(page, "diff-calltree");
  await page.click('#tree-metric button[data-metric="wall"]');
  if (dir) await page.screenshot({ path: `${dir}/${stem}-tree.png`, fullPage: false });

  // lines and leak sites
  await tab(page, "lines", ms);
  steps.lines = await table(page, "diff-lines");
  await tab(page, "memory", ms);
  steps.leaks = await table(page, "diff-leaks");
  steps.leakChips = await page.evaluate(chips, "diff-leaks");

  await tab(page, "facts", ms);
  steps.facts = await page.$$eval("#facts-ab p.side", (ps) => ps.map((p) => Object.fromEntries([...p.querySelectorAll("[data-fact]")].map((e) => [e.dataset.fact, e.textContent]))));

  // what device text became: no element but the page's own
  steps.elements = await page.evaluate(() => ({
    img: document.querySelectorAll("img").length,
    scripts: document.scripts.length,
    iframes: document.querySelectorAll("iframe, object, embed").length,
    onerror: [...document.querySelectorAll("*")].filter((e) => e.hasAttribute("onerror")).length,
  }));
  return { steps, ms };
}
