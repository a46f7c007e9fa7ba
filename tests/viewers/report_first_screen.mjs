// The A/B page's first screen for tests/test_diff_verdict.py (report.mjs --steps): at 1366x768,
// the text of every element whose box lies within the viewport and is visible, and the title.
export default async function firstScreen(page) {
  await page.setViewportSize({ width: 1366, height: 768 });
  await new Promise((r) => setTimeout(r, 200));
  return page.evaluate(() => {
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
}
