// The A/B page's Verdicts section for tests/test_diff_series_page.py (report.mjs --steps): at
// 1366x768, the visible text of the section (the text nodes whose box lies in the viewport), each
// row's function, outcome and title (the command's line), the outcome badges' colours, each
// model's headline, the
// subtitle naming the runs a series page is drawn from, and how many elements the section holds
// that names could have smuggled in (img, script, iframe).
export default async function verdicts(page) {
  await page.setViewportSize({ width: 1366, height: 768 });
  await new Promise((r) => setTimeout(r, 200));
  return page.evaluate(() => {
    const section = document.getElementById("ab-verdicts");
    if (!section) return { present: false };
    const seen = [];
    const walker = document.createTreeWalker(section, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!n.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      const box = range.getBoundingClientRect();
      if (box.width && box.height && box.bottom > 0 && box.top < innerHeight) seen.push(n.textContent.trim());
    }
    const rows = [...section.querySelectorAll("tbody tr")].map((tr) => ({
      function: tr.dataset.function,
      outcome: tr.dataset.outcome,
      title: tr.title,
      cells: [...tr.cells].map((td) => td.innerText.trim()),
      badge: getComputedStyle(tr.querySelector(".outcome-badge")).color,
    }));
    return {
      present: true,
      visible: seen.join("\n"),
      rows,
      headlines: [...section.querySelectorAll(".headline")].map((p) => p.innerText),
      subtitle: document.getElementById("ab-runs")?.innerText ?? null,
      smuggled: section.querySelectorAll("img, script, iframe").length,
    };
  });
}
