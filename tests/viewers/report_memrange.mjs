// The Memory tab's range view for tests/test_report_memrange.py (report.mjs --steps): open the
// tab on the whole run, then pick time ranges on the timeline (dragged with the mouse, or set
// through the page's hook) and read what grew the heap there: the growth tables by call path and
// by function, the totals, the allocation flame graph of the range, the vitals in the range; a
// leak site's "Show path"; a range without the planted leak. Every interaction is timed in the
// page (the input and the layout it causes), in milliseconds. Parameters come from the test's
// wrapper, per page (file stem): { STEM: { ranges: { NAME: [from s, to s] }, drag: NAME,
// leakRange: NAME, leakFn: FUNCTION (none: the largest leak site), shot: bool } }; with shot,
// DIR/STEM-memory-range.png shows the timeline and the growth of the leak range.

const STEP_TIMEOUT_MS = 20000;

function readGrowth() {
  const box = document.getElementById("growth");
  if (!box) return null;
  const stat = (id) => Number(document.getElementById(id)?.dataset.value);
  const res = document.getElementById("mem-resolution");
  return {
    heading: box.querySelector("h2")?.textContent ?? null,
    from: Number(box.dataset.from),
    to: Number(box.dataset.to),
    buckets: Number(box.dataset.buckets),
    resolution: res ? res.textContent : null,
    alloc: stat("growth-alloc"),
    freed: stat("growth-freed"),
    net: stat("growth-net"),
    live: stat("growth-live"),
    flameNote: document.getElementById("mem-flame-note")?.textContent ?? null,
    crumbs: [...document.querySelectorAll("#mem-crumbs button")].map((b) => ({ node: Number(b.dataset.node), text: b.textContent })),
  };
}

function readVitals() {
  const p = document.getElementById("vitals-range");
  if (!p) return null;
  return {
    hidden: p.hidden,
    text: p.textContent,
    series: [...p.querySelectorAll("span[data-series]")].map((s) => ({
      series: s.dataset.series,
      count: Number(s.dataset.count),
      min: Number(s.dataset.min),
      mean: Number(s.dataset.mean),
      max: Number(s.dataset.max),
    })),
  };
}

// Run an action of the page's (range, showPath, crumb, clear) and force the layout it causes, timed in the page.
async function timed(page, action, arg) {
  return page.evaluate(
    ([name, a]) => {
      const r = window.__report;
      const act = {
        range: ([from, to]) => r.setRange([Math.round(from * r.timeline().hz), Math.round(to * r.timeline().hz)]),
        showPath: (node) => document.querySelector(`#leaks tr[data-node="${node}"] button.show-path`).click(),
        crumb: (node) => document.querySelector(`#mem-crumbs button[data-node="${node}"]`).click(),
        clear: () => document.getElementById("range-clear").click(),
      }[name];
      const t0 = performance.now();
      act(a);
      void document.body.offsetHeight;
      return performance.now() - t0;
    },
    [action, arg],
  );
}

export default async function memoryRange(page, { dir, stem, table, clickTab }, all = {}) {
  const params = all[stem] || {};
  let shots = null;
  const steps = {};
  const ms = {};
  // the allocation flame graph is drawn in the frame after its tab is built: let it come
  const frame = () => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));
  const look = async () => ({
    drawn: await frame(),
    growth: await page.evaluate(readGrowth),
    paths: await table(page, "growth-paths"),
    functions: await table(page, "growth-fns"),
    leaks: await table(page, "leaks"),
    flame: await page.evaluate(() => window.__report.memFlame()),
    window: await page.evaluate(() => window.__report.memWindow()),
    vitals: await page.evaluate(readVitals),
    range: await page.evaluate(() => window.__report.state.range),
    rangeText: await page.evaluate(() => document.getElementById("range-text").textContent),
  });

  ms.tab = await page.evaluate(() => {
    const t0 = performance.now();
    document.getElementById("tab-memory").click();
    void document.body.offsetHeight;
    return performance.now() - t0;
  });
  await clickTab(page, "memory");
  steps.whole = await look();

  // A range dragged across the timeline with the mouse, as a person picks "this minute".
  const geo = await page.evaluate(() => {
    const r = window.__report.timeline();
    const box = document.getElementById("timeline").getBoundingClientRect();
    return { ...r, x: box.left, y: box.top + r.top + 30 };
  });
  const xOf = (seconds) => geo.x + geo.left + ((seconds * geo.hz) / geo.slots) * geo.plot;
  if (params.drag) {
    const [a, b] = params.ranges[params.drag];
    await page.mouse.move(xOf(a), geo.y);
    await page.mouse.down();
    await page.mouse.move((xOf(a) + xOf(b)) / 2, geo.y, { steps: 4 });
    await page.mouse.move(xOf(b), geo.y, { steps: 4 });
    const t1 = Date.now();
    await page.mouse.up();
    await page.evaluate(() => void document.body.offsetHeight);
    ms.dragRoundTrip = Date.now() - t1; // the mouse-up through the driver, and the page's work
    await page.waitForSelector("#growth", { state: "attached", timeout: STEP_TIMEOUT_MS });
    steps.dragged = await look();
  }

  // Ranges set exactly (in slots), each read the same way.
  steps.ranges = {};
  for (const [name, [a, b]] of Object.entries(params.ranges || {})) {
    ms[`range:${name}`] = await timed(page, "range", [a, b]);
    steps.ranges[name] = await look();
    if (params.leakRange === name) {
      if (dir && params.shot) {
        // the timeline with the range, and what grew the heap in it down to its flame graph
        const bottom = await page.evaluate(() => {
          window.scrollTo(0, 0);
          const box = document.getElementById("mem-flame-wrap").getBoundingClientRect();
          return Math.ceil(box.bottom + window.scrollY + 12);
        });
        shots = `${dir}/${stem}-memory-range.png`;
        await page.screenshot({ path: shots, fullPage: true, clip: { x: 0, y: 0, width: 1440, height: bottom } });
        await page.waitForTimeout(200);
      }
      // a leak site's "Show path": the allocation flame graph zooms to its call path
      const node = await page.evaluate((fnName) => {
        const rows = [...document.querySelectorAll("#leaks tbody tr")];
        const tr = fnName ? rows.find((row) => row.querySelector('td[data-key="fn"]')?.textContent === fnName) : rows[0];
        return tr ? Number(tr.dataset.node) : -1;
      }, params.leakFn || null);
      steps.leakNode = node;
      ms.showPath = await timed(page, "showPath", node);
      steps.shown = await look();
      // a click on a frame of the allocation flame graph zooms there too (its root: back out)
      const crumb = await page.evaluate(() => document.querySelector("#mem-crumbs button")?.dataset.node);
      ms.crumb = await timed(page, "crumb", crumb);
      steps.backOut = await page.evaluate(() => window.__report.memFlame());
    }
  }
  ms.clear = await timed(page, "clear");
  steps.cleared = await look();
  steps.elements = await page.evaluate(() => document.querySelectorAll("#view-memory script, #view-memory img, #view-memory iframe, #view-memory [onerror]").length);
  return { steps, ms, shots };
}
