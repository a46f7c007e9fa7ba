// The Bottom-up tab's steps for tests/test_report_bottomup.py (report.mjs --steps): open the tab,
// open the recursive function's callers three levels deep, select functions in the table and in
// the callers panel, look at the selection in the other views, switch the metric and the thread,
// pick a time range, select the function with a hostile name. Every interaction is timed in the
// page: the click (or the call) and the layout it causes, in milliseconds.
import { timedClick } from "./timed_click.mjs";

const STEP_TIMEOUT_MS = 20000;

function readPanel() {
  const head = document.getElementById("bu-selected");
  if (!head) return null;
  const side = (id) =>
    [...document.querySelectorAll(`#${id} tbody tr`)].map((tr) => ({
      fn: tr.dataset.fn,
      name: tr.querySelector('td[data-key="name"]')?.textContent ?? null,
      total: Number(tr.querySelector('td[data-key="total"]')?.dataset.value),
      share: Number(tr.querySelector('td[data-key="share"]')?.dataset.value),
    }));
  const figs = Object.fromEntries([...document.querySelectorAll(".bu-head b[data-key]")].map((b) => [b.dataset.key, Number(b.dataset.value)]));
  return { fn: Number(head.dataset.fn), name: head.textContent, figs, callers: side("bu-callers"), callees: side("bu-callees") };
}

export default async function bottomUp(page, { dir, table }) {
  const steps = {};
  const ms = {};
  const ids = await page.evaluate(() => {
    const D = window.__report.model;
    const byName = {};
    D.functions.name.forEach((s, f) => {
      const key = `${D.strings[D.threads[D.functions.thread[f]][1]]}/${D.strings[s]}`;
      byName[key] = f;
    });
    return byName;
  });
  const fn = (name, thread = "MainThread") => ids[`${thread}/${name}`];
  const look = async () => ({ table: await table(page, "bottomup"), panel: await page.evaluate(readPanel), selected: await page.evaluate(() => window.__report.state.selected) });
  const row = (chain) => `#bottomup tr[data-chain="${chain}"]`;

  ms.tab = await timedClick(page, "#tab-bottomup");
  await page.waitForSelector("#view-bottomup:not([hidden])", { timeout: STEP_TIMEOUT_MS });
  steps.initial = await look();

  // the recursive function's callers, and theirs, and theirs
  const pv = fn("parseValue"), po = fn("parseObject");
  ms.open = await timedClick(page, `${row(pv)} .toggle`);
  ms.open2 = await timedClick(page, `${row(`${pv},${po}`)} .toggle`);
  ms.open3 = await timedClick(page, `${row(`${pv},${po},${pv}`)} .toggle`);
  steps.opened = await look();

  // select the function called from two callers (its row), then its caller in the panel
  const fd = fn("formatDate");
  ms.select = await timedClick(page, `${row(fd)} td[data-key="name"]`);
  steps.formatDate = await look();
  ms.selectInPanel = await timedClick(page, `#bu-callers tr[data-fn="${pv}"]`);
  steps.parseValue = await look();
  if (dir) await page.screenshot({ path: `${dir}/bottom-up.png`, fullPage: true });

  // the selection in the other views
  steps.elsewhere = {};
  for (const [tab, id] of [["functions", "functions"], ["tree", "calltree"], ["flame", null]]) {
    await page.click(`#tab-${tab}`);
    await page.waitForSelector(`#view-${tab}:not([hidden])`, { timeout: STEP_TIMEOUT_MS });
    steps.elsewhere[tab] = id ? await page.$$eval(`#${id} tbody tr.selected`, (trs) => trs.map((tr) => ({ ...tr.dataset }))) : await page.evaluate(() => window.__report.state.selected);
  }
  await page.click("#tab-bottomup");

  // the metric switch
  steps.metrics = {};
  for (const key of ["cpu", "allocBytes", "calls", "wall"]) {
    ms[`metric:${key}`] = await timedClick(page, `#bu-metric button[data-metric="${key}"]`);
    steps.metrics[key] = await look();
  }

  // one thread, then all again
  const setThread = (t) =>
    page.evaluate((value) => {
      const s = document.getElementById("thread");
      const t0 = performance.now();
      s.value = value;
      s.dispatchEvent(new Event("change"));
      void document.body.offsetHeight;
      return performance.now() - t0;
    }, String(t));
  const main = await page.evaluate(() => window.__report.model.threads.findIndex(([, s]) => window.__report.model.strings[s] === "MainThread"));
  ms.thread = await setThread(main);
  steps.oneThread = await look();
  await setThread(-1);

  // a time range: the first 40 % of the run, with formatDate selected
  await page.click(`${row(fd)} td[data-key="name"]`);
  ms.range = await page.evaluate(() => {
    const r = window.__report;
    const t0 = performance.now();
    r.setRange([0, Math.floor(0.4 * r.timeline().slots)]);
    void document.body.offsetHeight;
    return performance.now() - t0;
  });
  steps.range = { ...(await look()), range: await page.evaluate(() => window.__report.state.range) };
  ms.rangeClear = await timedClick(page, "#range-clear");
  steps.cleared = await look();

  // the hostile name: a row, then the selection's heading
  const hostile = await page.evaluate(() => {
    const D = window.__report.model;
    return D.functions.name.findIndex((s) => D.strings[s].includes("<script>"));
  });
  await page.click(`${row(hostile)} td[data-key="name"]`);
  steps.hostile = {
    fn: hostile,
    row: await page.$eval(`${row(hostile)} td[data-key="name"] .name`, (e) => e.textContent),
    panel: await page.evaluate(readPanel),
    elements: await page.evaluate(() => document.querySelectorAll("#view-bottomup script, #view-bottomup img, #view-bottomup iframe").length),
  };
  return { steps, ms };
}
