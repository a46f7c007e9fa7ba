"""``rokuprof diff --html``, the A/B page (issue 22, item 3), in headless Chromium: two builds of
the simulated app with planted changes (parseString twice as slow, registryWrite gone,
loadSubtitles new, decodeImage leaking; B also a new version), one page of runs of equal length
and one of a 20 s A against a 30 s B with ``--per-second``. What the page shows for A, B, Δ and
Δ% per function, source line and leak site is checked against ``rokuprof diff --json`` with the
same options; the call tree of both runs against totals computed here from each capture's call
paths (per second: times the run's 1/seconds); the colours of new, gone, grew and shrank (in the
tables, the flame graph and the legend) told apart by hue, and a 2x growth not the colour of new;
the title and both captures' facts; a function named like markup as text; no console message or
request; every interaction run to the end of its layout (how fast: benchmarks/report.py --diff).
The steps are tests/viewers/report_diff.mjs; the screenshots land in
``test-artifacts/diff-page/`` (docs/report-diff.png is the equal runs' flame graph from there)."""

from __future__ import annotations

import colorsys
import json
from collections import Counter

import pytest
from diff_helpers import BUILD_A, BUILD_B, diff_in, stream

from rokuprof.export import input_from_bytes
from tests.viewers import REPO, VIEWERS
from tests.viewers.report import open_reports, problems

ARTIFACTS = REPO / "test-artifacts" / "diff-page"
STEPS = VIEWERS / "report_diff.mjs"
HOSTILE = '<img src=x onerror="document.title=1">'
NAMES = (("measureText", HOSTILE),)  # a function both builds have
#: the clicks report_diff.mjs makes, each awaited to the end of its layout
INTERACTIONS = {
    *(f"metric:{m}" for m in ("wall", "liveBytes")),
    *(f"tab:{t}" for t in ("functions", "tree", "lines", "memory", "facts")),
    *(f"figure:{f}" for f in ("self_wall", "total_wall", "calls", "self_cpu", "self_live_bytes")),
    "sort:d",
    "expandAll",
    "tree:liveBytes",
}
FIGURES = ("self_wall", "total_wall", "calls", "self_cpu", "self_live_bytes")
GREY = (229, 231, 235)


def kind_of(rgb) -> str:
    """What a colour says, by its hue: red grew, blue shrank, purple new, green gone."""
    if tuple(rgb) == GREY:
        return "same"
    hue, _, saturation = colorsys.rgb_to_hls(*(c / 255 for c in rgb))
    hue *= 360
    for kind, low, high in (("shrank", 200, 230), ("new", 265, 295), ("gone", 155, 180)):
        if saturation > 0.3 and low < hue < high:
            return kind
    if saturation > 0.3 and (hue < 15 or hue > 345):
        return "grew"
    return f"unknown {rgb}"


def rgb_of(css: str) -> tuple[int, ...]:
    return tuple(int(float(x)) for x in css[css.index("(") + 1 : -1].split(",")[:3])


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff-page")
    a, b, b30 = tmp / "main.bsprof", tmp / "branch.bsprof", tmp / "branch-30s.bsprof"
    a.write_bytes(stream(20.0, names=NAMES, **BUILD_A))
    b.write_bytes(stream(20.0, names=NAMES, version="2.5.0", **BUILD_B))
    b30.write_bytes(stream(30.0, names=NAMES, version="2.5.0", **BUILD_B))
    out = {}
    for name, (x, y, extra) in {"same": (a, b, ()), "rate": (a, b30, ("--per-second",))}.items():
        html = tmp / f"{name}.html"
        proc = diff_in(tmp, x.name, y.name, "--html", html.name, *extra)
        assert proc.returncode == 0, proc.stderr
        report = diff_in(tmp, x.name, y.name, "--json", "--top", "0", *extra)
        assert report.returncode == 0, report.stderr
        inputs = (input_from_bytes(x.read_bytes()), input_from_bytes(y.read_bytes()))
        out[name] = {"html": html, "json": json.loads(report.stdout), "inputs": inputs}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pages = [out["same"]["html"], out["rate"]["html"]]
    # the figures are compared with diff --json's, which has every function: idle shown
    results = open_reports(pages, steps=STEPS, shots=ARTIFACTS, show_idle=True)
    for name, result in zip(("same", "rate"), results, strict=True):
        out[name]["result"] = result
    return out


def cell(row: dict, key: str):
    """A cell's exact figure, or None where the page shows no figure ("–")."""
    value = row[key]
    if isinstance(value, dict):
        return value["value"]
    assert value in ("–", "new", "gone", "from 0"), (key, value)
    return None


def test_pages_load_cleanly_and_every_interaction_runs(pages):
    for name in ("same", "rate"):
        result = pages[name]["result"]
        assert problems(result) == [], name
        assert len(result["requests"]) == 1 and result["scripts"] == 2
        # every interaction ran to the end of the layout it causes (timed in the page; how
        # fast is benchmarks/report.py --diff's figure, not a bound on a shared machine's clock)
        assert set(result["ms"]) == INTERACTIONS, sorted(result["ms"])
        assert all(ms >= 0 for ms in result["ms"].values()), result["ms"]
    for shot in ("same-flame", "same-functions", "same-tree", "rate-flame"):
        png = ARTIFACTS / f"{shot}.png"
        assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("name", ["same", "rate"])
def test_the_title_names_a_and_b_with_their_facts(pages, name):
    page = pages[name]
    header = page["result"]["steps"]["header"]
    a, b = page["json"]["a"]["input"], page["json"]["b"]["input"]
    apps = "Café TV 2.4.1 → Café TV 2.5.0"
    assert header["title"] == f"{apps} — diff {a} → {b} — rokuprof report"
    assert header["heading"].startswith(apps) and header["capture"] == f"diff {a} → {b}"
    seconds = (20.0, 20.0) if name == "same" else (20.0, 30.0)
    for side, version, run in zip(("a", "b"), ("2.4.1", "2.5.0"), seconds, strict=True):
        facts = header[side]
        assert facts["input"] == page["json"][side]["input"]
        assert facts["app"] == f"Café TV {version}"
        assert facts["capture"] == "capture of 2023-11-14 22:13:20 UTC"
        assert facts["duration"] == f"{run:.1f} s run" and page["json"][side]["seconds"] == run
        assert facts["status"] == "complete"
    facts = page["result"]["steps"]["facts"]
    assert [f["input"] for f in facts] == [a, b]
    per_second = "Figures per second of run" in header["basis"]
    assert per_second == (name == "rate") == page["json"]["per_second"]


@pytest.mark.parametrize("name", ["same", "rate"])
def test_functions_show_what_diff_json_says(pages, name):
    page = pages[name]
    want = {(f["module"], f["function"], f["file"]): f for f in page["json"]["functions"]}
    for figure in FIGURES:
        table = page["result"]["steps"]["functions"][figure]["table"]
        keys = [
            (r["attrs"]["module"], r["attrs"]["function"], r["attrs"]["file"])
            for r in table["rows"]
        ]
        assert keys == [(f["module"], f["function"], f["file"]) for f in page["json"]["functions"]]
        for key, row in zip(keys, table["rows"], strict=True):
            f = want[key]
            got = (cell(row, "a"), cell(row, "b"), cell(row, "d"))
            a = f["a"][figure] if f["a"] else None
            b = f["b"][figure] if f["b"] else None
            assert got == (a, b, f["delta"][figure]), (figure, key)
            if figure == "self_wall":
                assert cell(row, "p") == f["self_wall_growth_pct"], key
            status = {"added": "new (only in B)", "removed": "gone (only in A)"}
            assert row["status"] == status.get(f["status"], f["status"])
    # the planted changes, as the page says them
    rows = {
        r["attrs"]["function"]: r
        for r in page["result"]["steps"]["functions"]["self_wall"]["table"]["rows"]
    }
    assert rows["loadSubtitles"]["p"] == "new" and rows["loadSubtitles"]["a"] == "–"
    assert rows["registryWrite"]["p"] == {"text": "gone", "value": -100}  # as the JSON's
    assert rows["registryWrite"]["b"] == "–"
    if name == "same":
        assert rows["parseString"]["p"]["text"].endswith("+100.0%")
        assert rows["parseString"]["attrs"]["kind"] == "grew"
        assert page["result"]["steps"]["functions"]["self_wall"]["table"]["heads"][4]["label"] == (
            "Self wall A"
        )
    else:
        assert rows["parseString"]["b"]["text"].endswith("ms/s")


@pytest.mark.parametrize("name", ["same", "rate"])
def test_lines_and_leak_sites_show_what_diff_json_says(pages, name):
    page = pages[name]
    steps = page["result"]["steps"]
    lines = {(r["module"], r["function"], r["file"], r["line"]): r for r in page["json"]["lines"]}
    rows = steps["lines"]["rows"]
    assert len(rows) == min(100, len(lines))  # the page lists the 100 largest changes
    for row in rows:
        attrs = row["attrs"]
        want = lines[(attrs["module"], attrs["function"], attrs["file"], int(attrs["line"]))]
        for metric in ("cpu", "wall"):
            a = want["a"][metric] if want["a"] else None
            b = want["b"][metric] if want["b"] else None
            got = [cell(row, f"{metric}:{k}") for k in "abdp"]
            assert got == [a, b, want["delta"][metric], want["growth_pct"][metric]], attrs
    assert rows[0]["function"] == "parseString" and rows[0]["attrs"]["kind"] == "grew"

    sites = page["json"]["leak_sites"]
    leaks = steps["leaks"]["rows"]
    assert len(leaks) == len(sites)
    for row, want in zip(leaks, sites, strict=True):  # the JSON's order
        path = " › ".join(p["function"] for p in want["path"])
        assert row["path"] == path and row["fn"] == want["path"][-1]["function"]
        for metric, key in (("live_bytes", "bytes"), ("live_count", "blocks")):
            a = want["a"][metric] if want["a"] else None
            b = want["b"][metric] if want["b"] else None
            got = [cell(row, f"{key}:{k}") for k in "abdp"]
            assert got == [a, b, want["delta"][metric], want["growth_pct"][metric]], path
    kinds = {r["fn"]: r["attrs"]["kind"] for r in leaks if r["attrs"]["kind"] != "same"}
    assert kinds.get("decodeImage") == "grew" and kinds.get("loadSubtitles") == "new"


def chain_totals(inp, field: str, factor: float) -> Counter:
    """Per call chain (thread, then (function, file) from the root): the field summed over every
    call path through it, times ``factor``."""
    out: Counter = Counter()
    for p in inp.paths:
        thread = inp.threads[p.thread]
        chain = tuple((inp.frames[f].function, inp.frames[f].file) for f in p.frames[::-1])
        for depth in range(len(chain) + 1):
            out[(thread, *chain[:depth])] += getattr(p, field)
    return Counter({k: v * factor for k, v in out.items()})


def tree_chains(rows: list[dict]) -> list[tuple]:
    """Each row's chain, from the rows' depth-first order and their depth."""
    stack: list = []
    out = []
    for r in rows:
        depth = int(r["attrs"]["depth"])
        del stack[depth:]
        stack.append(r["attrs"]["thread"] if depth == 0 else (r["attrs"]["function"], r["loc"]))
        out.append(tuple(stack))
    return out


@pytest.mark.parametrize("name", ["same", "rate"])
def test_the_call_tree_of_both_runs(pages, name):
    page = pages[name]
    tree = page["result"]["steps"]["tree"]
    a_inp, b_inp = page["inputs"]
    factors = [
        1 / page["json"][s]["seconds"] if page["json"]["per_second"] else 1 for s in ("a", "b")
    ]
    for step, field in (("all", "wall"), ("live", "live_bytes")):
        rows = tree[step]["rows"]
        before = chain_totals(a_inp, field, factors[0])
        after = chain_totals(b_inp, field, factors[1])
        chains = tree_chains(rows)
        if step == "all":  # expanded: every call path of either run that has a figure
            drawn = set(chains)
            assert {c for c, v in before.items() if v} <= drawn
            assert {c for c, v in after.items() if v} <= drawn
        for chain, row in zip(chains, rows, strict=True):
            a, b = cell(row, "a"), cell(row, "b")
            assert (a or 0) == pytest.approx(before[chain], rel=1e-9, abs=1e-6), chain
            assert (b or 0) == pytest.approx(after[chain], rel=1e-9, abs=1e-6), chain
            assert cell(row, "d") == pytest.approx(after[chain] - before[chain], abs=2e-6)
    rows = dict(zip(tree_chains(tree["all"]["rows"]), tree["all"]["rows"], strict=True))
    kinds = {}
    for chain, row in rows.items():
        kinds.setdefault(chain[-1][0] if len(chain) > 1 else chain[0], set()).add(
            row["attrs"]["kind"]
        )
    assert kinds["registryWrite"] == {"gone"} and kinds["loadSubtitles"] == {"new"}
    assert "grew" in kinds["parseString"]
    if name == "same":
        assert kinds["parseString"] == {"grew"} and kinds["handleMessage"] == {"shrank"}
        assert kinds["drawPoster"] == {"same"}
    # opened along the largest change: down to parseString on its thread
    opened = tree_chains(tree["opened"]["rows"])
    assert any(c[-1][0] == "parseString" for c in opened if len(c) > 1)


def test_colours_tell_new_gone_grew_and_shrank_apart(pages):
    colours: dict[str, set] = {}
    for name in ("same", "rate"):
        steps = pages[name]["result"]["steps"]
        chips = [
            *(
                c
                for f in FIGURES
                for r in steps["functions"][f]["chips"]
                for c in r["chips"].values()
            ),
            *(c for r in steps["tree"]["allChips"] for c in r["chips"].values()),
            *(c for r in steps["leakChips"] for c in r["chips"].values()),
        ]
        for kind, css in chips:
            colours.setdefault(kind, set()).add(rgb_of(css))
    assert set(colours) == {"new", "gone", "grew", "shrank", "same"}
    for kind, seen in colours.items():
        assert {kind_of(c) for c in seen} == {kind}, (kind, seen)  # each kind its own hue
    assert len(colours["new"]) == len(colours["gone"]) == 1
    # the legend: new, then the scale from /4 to x4; x2 is red and not the colour of new
    legend = pages["same"]["result"]["steps"]["flame"]["wall"]["legend"]
    assert (
        "how each frame's total changed" in legend["text"] and "gone (only in A)" in legend["text"]
    )
    scale = {s["ratio"]: rgb_of(s["colour"]) for s in legend["swatches"] if s["ratio"]}
    new = next(rgb_of(s["colour"]) for s in legend["swatches"] if s["kind"] == "new")
    assert set(scale) == {0.25, 0.5, 0.71, 1, 1.41, 2, 4}
    assert kind_of(new) == "new" and new in colours["new"]
    gone = next(rgb_of(s["colour"]) for s in legend["swatches"] if s["kind"] == "gone")
    assert kind_of(gone) == "gone" and gone in colours["gone"]  # the tables' colour of gone
    assert [kind_of(scale[r]) for r in sorted(scale)] == ["shrank"] * 3 + ["same"] + ["grew"] * 3
    assert len(set(scale.values())) == 7 and new not in scale.values()
    reds = [colorsys.rgb_to_hls(*(c / 255 for c in scale[r]))[1] for r in (1.41, 2, 4)]
    assert reds == sorted(reds, reverse=True)  # deeper (darker) with the ratio
    # the flame graph's planted frames, B's shape
    frames = pages["same"]["result"]["steps"]["flame"]
    painted: dict[str, set] = {}
    for f in frames["wall"]["frames"]:
        if f["key"] is not None and f["w"] >= 4:
            painted.setdefault(f["key"][1], set()).add(kind_of(f["rgb"]))
    assert painted["loadSubtitles"] == {"new"} and painted["parseString"] == {"grew"}
    assert painted["handleMessage"] == {"shrank"} and "registryWrite" not in painted
    two_x = {
        tuple(f["rgb"])
        for f in frames["wall"]["frames"]
        if f["key"] and f["key"][1] == "parseString"
    }
    assert not two_x & colours["new"]  # grew 2x is not the colour of new
    live = {
        kind_of(f["rgb"])
        for f in frames["liveBytes"]["frames"]
        if f["key"] and f["key"][1] == "decodeImage" and f["w"] >= 4
    }
    assert live == {"grew"}


def test_per_second_colours_follow_the_rates(pages):
    """20 s of A against 30 s of B: without --per-second every frame would be red; with it, a
    frame's colour is the change of its rate (computed here from the call paths)."""
    page = pages["rate"]
    a_inp, b_inp = page["inputs"]
    before = chain_totals(a_inp, "wall", 1 / 20.0)
    after = chain_totals(b_inp, "wall", 1 / 30.0)
    frames = page["result"]["steps"]["flame"]["wall"]["frames"]
    by_node = {f["node"]: f for f in frames}
    checked = Counter()
    for f in frames:
        if f["key"] is None or f["w"] < 4:
            continue
        chain, at = [], f
        while at is not None and at["key"] is not None:
            chain.append((at["key"][1], at["key"][2]))
            at = by_node.get(at["parent"])
        key = (f["key"][0], *chain[::-1])
        x, y = before[key], after[key]
        change = (y - x) / x if x else None
        want = (
            "new" if not x else "same" if abs(change) < 0.02 else "grew" if change > 0 else "shrank"
        )
        if change is not None and abs(abs(change) - 0.02) < 1e-4:
            continue  # on the line between same and a change
        assert kind_of(f["rgb"]) == want, (key, x, y)
        checked[want] += 1
    assert checked["shrank"] and checked["grew"] and checked["same"] and checked["new"]
    tip = page["result"]["steps"]["tip"]
    assert tip["row"][0] == "A → B" and "/s" in tip["row"][1]


def test_a_function_named_like_markup_is_text(pages):
    for name in ("same", "rate"):
        result = pages[name]["result"]
        rows = [
            r
            for r in result["steps"]["functions"]["self_wall"]["table"]["rows"]
            if r["attrs"]["function"] == HOSTILE
        ]
        assert len(rows) == 1 and rows[0]["function"] == HOSTILE
        elements = result["steps"]["elements"]
        assert elements == {"img": 0, "scripts": 2, "iframes": 0, "onerror": 0}
        assert result["dialogs"] == []
        assert result["title"].startswith("Café TV")
