// The page's layout for tests/test_report_layout.py (report.mjs --steps): where each view's first
// rows are at 1366x768 and at 800x700, what idle hiding leaves out by default and after the
// toggle (and after a reload: the choice kept), the thread lanes' colours (computed style), the
// paths as shown with their titles, and the timeline collapsed, then reloaded.
const SETTLE_MS = 250;
const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));
const TABLES = { functions: "functions", bottomup: "bottomup", tree: "calltree" };

// Where the view's first rows are: a table's first three body rows, the flame graph's root row
// (as drawn on its canvas, inside its scrolled box), each with whether it is inside the viewport
// and not covered by something else.
function firstRows({ view, table }) {
  // seen: the box is inside the viewport; shown: what is at its middle is the row itself
  const inView = (owner, top, bottom, left, right) => {
    const seen = top >= 0 && bottom <= innerHeight && bottom > top;
    const hit = seen ? document.elementFromPoint((left + right) / 2, (top + bottom) / 2) : null;
    return { top, bottom, seen, shown: !!hit && owner.contains(hit) };
  };
  if (view === "flame") {
    const canvas = document.getElementById("flame");
    const wrap = canvas.parentElement.getBoundingClientRect();
    const c = canvas.getBoundingClientRect();
    const root = window.__report.flame().filter((r) => r.depth === 0);
    if (!root.length) return { rows: [] };
    const y = c.top + root[0].y;
    const top = Math.max(y, wrap.top), bottom = Math.min(y + 20, wrap.bottom);
    return { rows: [{ ...inView(canvas, y, y + 20, c.left + 2, c.left + 60), clipped: bottom - top < 20 }] };
  }
  const own = document.getElementById(`diff-${table}`) || document.getElementById(table); // the A/B page's, or the report's
  const rows = own ? [...own.querySelectorAll("tbody tr")].slice(0, 3) : [];
  return {
    rows: rows.map((tr) => {
      const { top, bottom, left, right } = tr.getBoundingClientRect();
      return { ...inView(tr, top, bottom, left, Math.min(right, left + 200)), fn: tr.dataset.fn };
    }),
  };
}

async function layoutAt(page, width, height, views) {
  await page.setViewportSize({ width, height });
  const out = {};
  for (const view of views) {
    await page.evaluate((v) => {
      window.__report.setTab(v);
      window.scrollTo(0, 0);
    }, view);
    await settle();
    out[view] = await page.evaluate(firstRows, { view, table: TABLES[view] });
  }
  return out;
}

const tableNames = (id) => [...document.querySelectorAll(`#${id} tbody tr`)].map((tr) => tr.querySelector('td[data-key="function"], td[data-key="name"]')?.textContent ?? "");

async function idle(page) {
  await page.evaluate(() => window.__report.setTab("functions"));
  const functions = await page.evaluate(tableNames, "functions");
  await page.evaluate(() => window.__report.setTab("bottomup"));
  await settle();
  const selected = await page.evaluate(() => document.getElementById("bu-selected")?.textContent ?? null);
  const checked = await page.isChecked("#hide-idle");
  return { checked, functions, selected, waits: await page.$$eval("#waits .chip[data-wait]", (cs) => cs.map((c) => c.dataset.wait)) };
}

// Each lane: its label's swatch colour (computed style) and the colour drawn in the lane itself
// (the canvas pixel at the bottom of its busiest column).
function lanes() {
  const tl = window.__report.timeline();
  const canvas = document.getElementById("timeline");
  const ctx = canvas.getContext("2d");
  const scale = canvas.width / canvas.clientWidth;
  const pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data; // one read-back
  const drawn = {};
  (tl.lanes || []).forEach((lane, i) => {
    const busy = tl.busy[i];
    const col = busy.indexOf(Math.max(...busy));
    const x = Math.round((tl.left + col + 0.5) * scale), y = Math.round((lane.top + lane.height - 1) * scale);
    const at = 4 * (y * canvas.width + x);
    drawn[lane.thread] = `rgb(${pixels[at]}, ${pixels[at + 1]}, ${pixels[at + 2]})`;
  });
  return [...document.querySelectorAll("#timeline-threads [data-thread]")].map((e) => ({
    thread: e.dataset.thread,
    colour: getComputedStyle(e.querySelector(".swatch")).backgroundColor,
    drawn: drawn[e.dataset.thread] ?? null,
  }));
}

function paths() {
  const cells = (sel) =>
    [...document.querySelectorAll(sel)].map((td) => {
      const shown = td.querySelector(".clip.path, .path") || td;
      return { text: td.textContent, title: td.title, scroll: shown.scrollWidth, client: shown.clientWidth };
    });
  return { functions: cells('#functions td[data-key="file"], #diff-functions td[data-key="file"]'), bottomup: cells('#bottomup td[data-key="loc"]') };
}

function timelineBox() {
  const canvas = document.getElementById("timeline");
  const button = document.getElementById("timeline-toggle");
  return {
    canvasShown: !!canvas && canvas.getClientRects().length > 0,
    height: document.querySelector("section.timeline")?.getBoundingClientRect().height ?? null,
    expanded: button ? button.getAttribute("aria-expanded") : null,
  };
}

export default async function layout(page) {
  const out = {};
  out.wide = await layoutAt(page, 1366, 768, ["flame", "functions", "bottomup", "tree"]);
  out.narrow = await layoutAt(page, 800, 700, ["flame", "functions", "bottomup"]);
  await page.setViewportSize({ width: 1366, height: 768 });
  await settle();
  out.lanes = await page.evaluate(lanes);
  await page.evaluate(() => window.__report.setTab("bottomup"));
  await page.evaluate(() => window.__report.setTab("functions"));
  out.paths = await page.evaluate(paths);
  out.idle = { initial: await idle(page) };
  await page.uncheck("#hide-idle");
  out.idle.shown = await idle(page);
  await page.reload();
  await page.waitForFunction(() => window.__reportReady === true);
  out.idle.reloaded = await idle(page);
  out.timeline = { initial: await page.evaluate(timelineBox) };
  if (await page.$("#timeline-toggle")) {
    await page.click("#timeline-toggle");
    await settle();
    out.timeline.collapsed = await page.evaluate(timelineBox);
    await page.reload();
    await page.waitForFunction(() => window.__reportReady === true);
    out.timeline.reloaded = await page.evaluate(timelineBox);
    await page.click("#timeline-toggle");
    await settle();
    out.timeline.reopened = await page.evaluate(timelineBox);
  }
  return { steps: out };
}
