"""A session's report with its app trace in real headless Chromium (report.mjs, playwright-core):
the trace's lanes drawn under the stack chart (the Frames lane, one per thread), the page saying
how it was aligned, the findings panel's rows highlighting their slices, and a click on a
script slice in a lane selecting the capture's function in every view (the page's search, the
flame graph's matches, Bottom-up's selection, the call tree's marked rows, the Source tab). A
screenshot is kept in ``test-artifacts/report/`` (gitignored)."""

from __future__ import annotations

import json

import pytest
from report_helpers import HOSTILE
from report_trace_helpers import STACK_PARSE, app_trace, trace_session

from rokuprof.app.source import open_source
from rokuprof.export.report.session import write_session_report
from tests.viewers import REPO
from tests.viewers.report import model, open_reports, problems

ARTIFACTS = REPO / "test-artifacts" / "report"

STEPS = """
const frame = (page) =>
  page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const report = (page, what, ...args) =>
  page.evaluate(([w, a]) => window.__report[w](...a), [what, args]);
const TAGS = ["SECTION", "H3", "H4", "P", "SPAN", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD"];
const selection = (page) => page.evaluate(() => ({
  selected: window.__report.state.selected,
  search: window.__report.state.search,
  box: document.querySelector("#search").value,
  trace: window.__report.traceSelected(),
}));

export default async function run(page, { dir, stem, clickTab }) {
  const out = {};
  await clickTab(page, "stack");
  await frame(page);
  out.lanes = await report(page, "traceLanes");
  out.chart = await report(page, "stackChart");
  out.alignment = await page.$eval("#trace-alignment", (e) => ({
    kind: e.dataset.alignment,
    text: e.textContent,
  }));
  out.frames = await page.$eval("#trace-frames", (e) => e.textContent);
  out.rows = await page.$$eval("#trace-panel tr[data-finding]", (rs) =>
    rs.map((r) => ({ key: r.dataset.finding, cells: [...r.cells].map((c) => c.textContent) })),
  );
  out.markup = await page.$$eval(
    "#trace-panel *",
    (es, tags) => es.filter((e) => !tags.includes(e.tagName)).length,
    TAGS,
  );
  out.panelText = await page.$eval("#trace-panel", (e) => e.textContent);
  // a rendezvous row: its slices highlighted, the window around them
  await page.click('#trace-panel tr[data-finding="rendezvous:0"]');
  await frame(page);
  out.rendezvous = { sel: await selection(page), chart: await report(page, "stackChart") };
  // the parseJSON script row: highlighted, and the function selected
  const script = out.rows.find((r) => r.cells[0] === params.stack);
  await page.click(`#trace-panel tr[data-finding="${script.key}"]`);
  await frame(page);
  out.scriptRow = await selection(page);
  if (dir) {
    out.shot = `${dir}/${stem}-trace.png`;
    await page.locator("#view-stack").screenshot({ path: out.shot });
  }
  // Escape clears; then a click on the script slice itself in its lane selects the function
  await page.keyboard.press("Escape");
  await frame(page);
  out.cleared = await selection(page);
  const slice = out.scriptRow.trace.slices[0];
  const at = await report(page, "tracePoint", slice);
  out.point = at;
  if (at) {
    const box = await (await page.$("#stack")).boundingBox();
    await page.mouse.move(box.x + at.x, box.y + at.y);
    out.tip = await page.$eval(".tip", (t) => (t.hidden ? null : t.textContent));
    await page.mouse.click(box.x + at.x, box.y + at.y);
    await frame(page);
    out.clicked = await selection(page);
    await clickTab(page, "flame");
    out.flameMatches = await page.$eval("#matches", (e) => e.textContent);
    await clickTab(page, "bottomup");
    await frame(page);
    out.bottomUp = await page.$eval("#bu-selected", (e) => e.textContent).catch(() => null);
    await clickTab(page, "tree");
    await frame(page);
    out.treeSelected = await page.$$eval("#view-tree tr.selected", (rs) => rs.length);
    await clickTab(page, "source");
    await frame(page);
    out.source = await page.$eval("#src-title", (e) => Number(e.dataset.fn)).catch(() => null);
  }
  return out;
}
"""


@pytest.fixture(scope="module")
def opened(tmp_path_factory):
    directory = tmp_path_factory.mktemp("trace-browser")
    session = trace_session(directory / "s", app_trace(at=1.0))
    app = directory / "app"
    (app / "source" / "utils").mkdir(parents=True)
    lines = ["' json", "", "function parseJSON(text as string) as object", "  return {}"]
    (app / "source" / "utils" / "json.brs").write_text("\n".join([*lines, "end function", ""]))
    page = write_session_report(session, source=open_source(app))
    steps = directory / "steps.mjs"
    steps.write_text(f"const params = {json.dumps({'stack': STACK_PARSE})};\n{STEPS}")
    [result] = open_reports([page], steps=steps, shots=ARTIFACTS)
    return result, model(page.read_text())


def test_the_trace_lanes_are_drawn_under_the_stack_chart(opened):
    result, _ = opened
    assert problems(result) == [] and len(result["requests"]) == 1
    lanes = result["lanes"]
    assert [(lane["name"], lane["kind"]) for lane in lanes] == [
        ("Frames", "frames"),
        ("RenderThr:Main", "lane"),
        (f"TN:{HOSTILE}", "lane"),
        ("BrightScript", "lane"),
    ]
    stacks = [s for s in result["chart"]["sections"] if s["thread"] >= 0]
    below = max(s["y"] + s["rows"] * result["chart"]["row"] for s in stacks)
    assert all(lane["y"] > below for lane in lanes)  # under the capture's stacks
    assert result["alignment"]["kind"] == "clock"
    assert "clock snapshot" in result["alignment"]["text"]
    assert "3 missed" in result["frames"]
    assert "late to render 1" in result["frames"] and "slow swap 1" in result["frames"]


def test_findings_highlight_their_slices_and_select_the_function(opened):
    result, m = opened
    t = m["trace"]
    [rv] = t["findings"]["rendezvous"]
    assert result["rendezvous"]["sel"]["trace"]["slices"] == rv["refs"]
    chart = result["rendezvous"]["chart"]
    start, end = t["slices"]["start"], t["slices"]["end"]
    assert chart["t0"] <= min(start[i] for i in rv["refs"])
    assert chart["t1"] >= max(end[i] for i in rv["refs"])
    assert chart["t1"] - chart["t0"] < 1  # zoomed in on them
    row = next(r for r in t["findings"]["script"] if r["callstack"] == STACK_PARSE)
    got = result["scriptRow"]
    assert got["trace"]["slices"] == row["refs"]
    assert got["search"] == got["box"] == "parseJSON"
    s, fns = m["strings"], m["functions"]
    assert s[fns["name"][got["selected"]]] == "parseJSON"
    assert result["cleared"]["selected"] == -1 and result["cleared"]["trace"]["slices"] == []


def test_clicking_a_script_slice_selects_its_function_everywhere(opened):
    result, m = opened
    assert result["point"] is not None
    assert "ExecBrightScript" in result["tip"] and STACK_PARSE in result["tip"]
    clicked = result["clicked"]
    assert clicked["search"] == "parseJSON" and clicked["selected"] >= 0
    assert m["strings"][m["functions"]["name"][clicked["selected"]]] == "parseJSON"
    assert result["flameMatches"].startswith("1 function in")  # the flame graph highlights it
    assert result["bottomUp"] is not None and "parseJSON" in result["bottomUp"]
    assert result["source"] == clicked["selected"]  # the Source tab shows it
    assert result["treeSelected"] >= 1  # the call tree marks its rows (those open)


def test_device_text_in_the_panel_is_text(opened):
    result, _ = opened
    assert result["markup"] == 0
    assert HOSTILE in result["panelText"]
    assert result["dialogs"] == [] and result["scripts"] == 2
    shot = result.get("shot")
    if shot:
        with open(shot, "rb") as f:
            assert f.read(4) == b"\x89PNG"
