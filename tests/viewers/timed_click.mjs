// Click what `selector` finds and force the layout it causes; the milliseconds it took, timed in
// the page (the report views' steps share it).
export async function timedClick(page, selector) {
  return page.evaluate((sel) => {
    const e = document.querySelector(sel);
    if (!e) throw new Error(`nothing at ${sel}`);
    const t0 = performance.now();
    e.click();
    void document.body.offsetHeight;
    return performance.now() - t0;
  }, selector);
}
