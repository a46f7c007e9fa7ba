// The stack chart's steps for report.mjs (--steps): open the tab, hover and click frames at given
// times, zoom and pan with the wheel, the keys and a drag, follow a time range dragged on the
// timeline, read the marks drawn over it. Each interaction's time is the page's own (from the
// input event to the end of its draw: window.__report.stackChart().lastMs).
//
// A test makes a module that calls this one with its probes:
//   import run from ".../stack_chart.mjs";
//   export default (page, helpers) => run(page, helpers, { probes: { STEM: [{ thread, seconds }] }, shot: STEM });

const chart = (page) => page.evaluate(() => window.__report.stackChart());
const frame = (page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

async function tipRows(page) {
  return page.$eval(".tip", (t) =>
    t.hidden
      ? null
      : {
          name: t.querySelector(".name").textContent,
          where: t.querySelector(".where")?.textContent ?? null,
          rows: Object.fromEntries([...t.querySelectorAll("tr")].map((tr) => [tr.dataset.key, [tr.cells[0].textContent, tr.cells[1].textContent]])),
        },
  );
}

async function act(page, what, fn) {
  const before = await chart(page);
  await fn();
  await frame(page);
  const after = await chart(page);
  return { what, before: view(before), after: view(after), ms: after.lastMs, drawn: after.drawn };
}
const view = (c) => ({ t0: c.t0, t1: c.t1, top: c.top });

export default async function run(page, { dir, stem, shot, clickTab }, params = {}) {
  const out = { steps: {}, times: [] };
  const steps = out.steps;
  const t = Date.now();
  await clickTab(page, "stack");
  await frame(page);
  steps.open = { ms: Date.now() - t, chart: await chart(page) };
  const canvas = await page.$("#stack");
  const box = async () => canvas.boundingBox();
  // alignment with the timeline: page x of the whole run's ends on both
  const b = await box();
  const tl = await (await page.$("#timeline")).boundingBox();
  steps.align = { timeline: await page.evaluate(() => window.__report.timeline()), timelineX: tl.x, stackX: b.x };

  // hover and click at the probes' times (the deepest frame there)
  steps.probes = [];
  for (const probe of (params.probes || {})[stem] || []) {
    const stack = await page.evaluate(({ thread, seconds }) => window.__report.stackAt(thread, seconds), probe);
    const rec = { probe, stack, tips: [] };
    for (let d = 1; d <= stack.length; d++) {
      const at = await page.evaluate(({ thread, seconds, d }) => window.__report.stackPoint(thread, seconds, d), { ...probe, d });
      if (!at) continue;
      const bb = await box();
      await page.mouse.move(bb.x + at.x, bb.y + at.y);
      rec.tips.push({ depth: d, tip: await tipRows(page), hit: await page.evaluate(({ x, y }) => window.__report.stackHit(x, y), at) });
    }
    steps.probes.push(rec);
  }
  // click the first probe's leaf: selected everywhere; then Escape clears it
  const first = steps.probes[0];
  if (first && first.stack.length) {
    const at = await page.evaluate(({ thread, seconds, d }) => window.__report.stackPoint(thread, seconds, d), { ...first.probe, d: first.stack.length });
    const bb = await box();
    await page.mouse.click(bb.x + at.x, bb.y + at.y);
    await frame(page);
    steps.selected = {
      chart: await chart(page),
      picked: await page.$eval("#stack-selected", (e) => e.textContent),
      searchBox: await page.$eval("#search", (e) => e.value),
    };
    await clickTab(page, "flame");
    steps.selected.flameMatches = await page.$eval("#matches", (e) => e.textContent);
    await clickTab(page, "stack");
    await page.keyboard.press("Escape");
    await frame(page);
    steps.unselected = { chart: await chart(page), searchBox: await page.$eval("#search", (e) => e.value) };
  }

  // zoom and pan, the pointer over the middle of the chart's first row
  const c0 = await chart(page);
  const middle = async () => {
    const bb = await box();
    return { x: bb.x + c0.left + c0.plot / 2, y: bb.y + c0.head + 4 };
  };
  await page.focus("#stack");
  let mid = await middle();
  await page.mouse.move(mid.x, mid.y);
  const acts = [];
  acts.push(await act(page, "wheel in", () => page.mouse.wheel(0, -400)));
  acts.push(await act(page, "wheel out", () => page.mouse.wheel(0, 200)));
  for (const key of ["+", "+", "-", "ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp"]) acts.push(await act(page, `key ${key}`, () => page.keyboard.press(key)));
  acts.push(
    await act(page, "drag", async () => {
      mid = await middle();
      await page.mouse.move(mid.x, mid.y);
      await page.mouse.down();
      await page.mouse.move(mid.x - 100, mid.y, { steps: 4 });
      await page.mouse.move(mid.x - 200, mid.y, { steps: 4 });
      await page.mouse.up();
    }),
  );
  acts.push(await act(page, "fit", () => page.click("#stack-fit")));
  steps.acts = acts;

  // a time range dragged on the timeline: the chart shows it; "Whole run" back
  await page.evaluate(() => window.scrollTo(0, 0));
  const geo = await page.evaluate(() => window.__report.timeline());
  const tb = await (await page.$("#timeline")).boundingBox();
  const x0 = tb.x + geo.left + geo.plot * 0.25, x1 = tb.x + geo.left + geo.plot * 0.5;
  const y = tb.y + geo.top + 24;
  const ranged = await act(page, "range", async () => {
    await page.mouse.move(x0, y);
    await page.mouse.down();
    await page.mouse.move((x0 + x1) / 2, y, { steps: 4 });
    await page.mouse.move(x1, y, { steps: 4 });
    await page.mouse.up();
  });
  steps.range = { ...ranged, range: await page.evaluate(() => window.__report.state.range), hz: geo.hz };
  mid = await middle();
  await page.mouse.move(mid.x, mid.y);
  steps.rangeZoom = await act(page, "wheel in a range", () => page.mouse.wheel(0, -400));
  await page.click("#range-clear");
  await frame(page);
  steps.rangeCleared = view(await chart(page));

  // the marks over the chart: labels as text, at their times
  steps.marks = await page.$$eval("#stack-marks .mark", (ms) => {
    const c = document.getElementById("stack").getBoundingClientRect();
    return ms.map((m) => ({ label: m.dataset.label, at: Number(m.dataset.at), count: Number(m.dataset.count), shown: m.querySelector(".label")?.textContent ?? "", x: m.getBoundingClientRect().left - c.left }));
  });
  steps.marksChart = await chart(page);
  steps.elements = await page.evaluate(() => document.querySelectorAll("img, iframe, object, embed").length);
  if (params.shot === stem) {
    // a few seconds of the run, for the README
    await page.evaluate(() => window.__report.setRange([Math.round(window.__report.timeline().slots * 0.3), Math.round(window.__report.timeline().slots * 0.42)]));
    await frame(page);
    out.shots = { stack: await shot(page, dir, stem, "stack-chart") };
    await page.click("#range-clear");
  }
  out.times = acts.map((a) => a.ms).concat([ranged.ms, steps.rangeZoom.ms]);
  return out;
}
