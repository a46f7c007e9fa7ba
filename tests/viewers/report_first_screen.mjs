// The A/B page's first screen for tests/test_diff_verdict.py (report.mjs --steps): at 1366x768,
// the text of every element whose box lies within the viewport and is visible, and the title;
// then a click on the first of the top regressions, and what the page shows after it: the
// selected tab, its figure, the functions its table lists, and whether that table is in view.
export default async function firstScreen(page) {
  await page.setViewportSize({ width: 1366, height: 768 });
  await new Promise((r) => setTimeout(r, 200));
  const screen = await page.evaluate(() => {
    const seen = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!n.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      const box = range.getBoundingClientRect();
      const style = getComputedStyle(n.parentElement);
      if (box.width && box.height && box.bottom > 0 && box.top < innerHeight && style.visibility !== "hidden") seen.push(n.textContent.trim());
    }
    return { title: document.title, visible: seen.join("\n") };
  });
  const first = page.locator("#ab-regressions tbody tr").first();
  if (!(await first.count())) return screen;
  const clicked = await first.getAttribute("data-function");
  await first.click();
  await new Promise((r) => setTimeout(r, 200));
  screen.click = await page.evaluate((fn) => {
    const table = document.querySelector("#view-functions table");
    const box = table ? table.getBoundingClientRect() : null;
    return {
      function: fn,
      tab: document.querySelector('[role="tab"][aria-selected="true"]')?.id,
      figure: document.getElementById("diff-figure")?.value,
      rows: [...document.querySelectorAll("#view-functions tbody tr")].map((tr) => tr.dataset.function),
      inView: !!box && box.top < innerHeight && box.bottom > 0,
    };
  }, clicked);
  return screen;
}
