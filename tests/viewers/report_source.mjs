// The Source tab's steps for tests/test_report_source.py (report.mjs --steps): open the tab, read
// the chosen function's lines (figures in the margin, hottest marks, links, the text), choose
// another function, follow a time range and the thread menu, open a function from its Lines card,
// and collect every link of every tab. Every interaction is timed in the page: the click (or the
// call) and the layout it causes, in milliseconds.

const STEP_TIMEOUT_MS = 20000;

function readSource() {
  const title = document.getElementById("src-title");
  const num = (td) => (td && td.dataset.value !== undefined ? Number(td.dataset.value) : null);
  return {
    fn: title ? Number(title.dataset.fn) : null,
    title: title ? title.textContent : null,
    fns: [...document.querySelectorAll("#src-fns li")].map((li) => ({ fn: Number(li.dataset.fn), name: li.querySelector(".name").textContent, picked: li.classList.contains("picked") })),
    notes: [...document.querySelectorAll("#view-source .src-note")].map((p) => p.textContent),
    rows: [...document.querySelectorAll("#src-code tbody tr")].map((tr) => {
      const cell = (k) => tr.querySelector(`td[data-key="${k}"]`);
      const link = cell("line").querySelector("a");
      return {
        line: Number(tr.dataset.line),
        hot: tr.dataset.hot ? Number(tr.dataset.hot) : null,
        cpu: num(cell("cpu")),
        wall: num(cell("wall")),
        allocBytes: num(cell("allocBytes")),
        allocCount: cell("allocBytes").dataset.count ? Number(cell("allocBytes").dataset.count) : null,
        code: cell("code").textContent,
        href: link ? link.getAttribute("href") : null,
      };
    }),
  };
}

// Run an action in the page and force the layout it causes, timed in the page.
function timedIn(page, action, arg) {
  return page.evaluate(
    ([name, a]) => {
      const act = {
        click: () => {
          const e = document.querySelector(a);
          if (!e) throw new Error(`nothing at ${a}`);
          e.click();
        },
        range: () => window.__report.setRange([0, Math.floor(window.__report.timeline().slots / 2)]),
        thread: () => {
          const s = document.getElementById("thread");
          s.value = a;
          s.dispatchEvent(new Event("change"));
        },
      }[name];
      const t0 = performance.now();
      act();
      void document.body.offsetHeight;
      return performance.now() - t0;
    },
    [action, arg],
  );
}

const timedClick = (page, selector) => timedIn(page, "click", selector);

// Every link of every tab, by tab.
async function allLinks(page, clickTab) {
  const links = {};
  for (const tab of await page.evaluate(() => window.__report.tabs)) {
    await clickTab(page, tab);
    links[tab] = await page.$$eval(`#view-${tab} a`, (as) => as.map((a) => ({ href: a.getAttribute("href"), text: a.textContent })));
  }
  return links;
}

export default async function source(page, { dir, stem, clickTab }) {
  const steps = {};
  const ms = {};
  if (stem.includes("refused")) {
    // a page whose template was not checked by rokuprof (a model edited by hand): no links
    await clickTab(page, "source");
    steps.lineCells = await page.$$eval("#src-code td[data-key='line']", (tds) => tds.map((td) => td.textContent));
    steps.links = await allLinks(page, clickTab);
    return { steps, ms };
  }
  const look = () => page.evaluate(readSource);

  ms.tab = await timedClick(page, "#tab-source");
  await page.waitForSelector("#view-source:not([hidden])", { timeout: STEP_TIMEOUT_MS });
  steps.initial = await look();
  if (dir) await page.screenshot({ path: `${dir}/source.png`, fullPage: false });

  // every function in the list, one after the other
  steps.each = {};
  for (const { fn } of steps.initial.fns) {
    ms[`pick:${fn}`] = await timedClick(page, `#src-fns li[data-fn="${fn}"]`);
    steps.each[fn] = await look();
  }
  const first = steps.initial.fns[0].fn;
  await page.click(`#src-fns li[data-fn="${first}"]`);

  // a time range (the first half of the run), then the whole run again
  ms.range = await timedIn(page, "range");
  steps.range = { ...(await look()), range: await page.evaluate(() => window.__report.state.range) };
  ms.rangeClear = await timedClick(page, "#range-clear");

  // one thread (the second), then all
  const setThread = (t) => timedIn(page, "thread", String(t));
  ms.thread = await setThread(1);
  steps.oneThread = await look();
  await setThread(-1);

  // the Lines tab: its line numbers are links, its Source button opens the function here
  await clickTab(page, "lines");
  steps.lines = await page.$$eval("#line-cards .card", (cards) =>
    cards.map((c) => ({ fn: Number(c.dataset.fn), links: [...c.querySelectorAll("td[data-key='line'] a")].map((a) => ({ line: a.textContent, href: a.getAttribute("href") })), button: !!c.querySelector(".src-open") })),
  );
  const withButton = steps.lines.find((c) => c.button && c.fn !== first);
  if (withButton) {
    ms.fromLines = await timedClick(page, `#line-cards .card[data-fn="${withButton.fn}"] .src-open`);
    steps.fromLines = { wanted: withButton.fn, tab: await page.evaluate(() => window.__report.state.tab), ...(await look()) };
  }

  // every link of every tab, and what could run script
  steps.links = await allLinks(page, clickTab);
  await clickTab(page, "source");
  steps.elements = await page.evaluate(() => document.querySelectorAll("#view-source script, #view-source img, #view-source iframe, #view-source object").length);
  return { steps, ms };
}
