"""``rokuprof diff --html``: the differential flame graph in real headless Chromium. B's shape,
each frame painted by how its total changed from A, checked pixel by pixel against totals
computed here from the two captures' call paths; the planted differences show as expected. A
screenshot per metric is kept in ``test-artifacts/diff/`` (gitignored)."""

from __future__ import annotations

import colorsys
import json
import subprocess
from collections import Counter

import pytest
from diff_helpers import BUILD_A, BUILD_B, run_cli, stream

from rokuprof.export import input_from_bytes
from rokuprof.export.diff import compare
from rokuprof.export.report import build_model
from rokuprof.export.report.diff_model import diff_model
from tests.viewers import REPO, VIEWERS
from tests.viewers.report import model, need_browser

ARTIFACTS = REPO / "test-artifacts" / "diff"
GREY = (229, 231, 235)  # "within 2 %"
FIELDS = {"wall": "wall", "liveBytes": "live_bytes"}


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory):
    need_browser()
    tmp = tmp_path_factory.mktemp("diff-html")
    a, b, html = tmp / "a.bsprof", tmp / "b.bsprof", tmp / "diff.html"
    a.write_bytes(stream(20.0, **BUILD_A))
    b.write_bytes(stream(20.0, **BUILD_B))
    proc = run_cli(str(a), str(b), "--html", str(html), "--top", "3")
    assert proc.returncode == 0, proc.stderr
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    script = VIEWERS / "diff_flame.mjs"
    command = ["node", str(script), str(html), *FIELDS, "--shots", str(ARTIFACTS)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    inputs = (input_from_bytes(a.read_bytes()), input_from_bytes(b.read_bytes()))
    return json.loads(done.stdout), inputs, html


def chain_totals(inp, field: str) -> Counter:
    """Per call chain (root first, as (thread, function, file) triples): the field summed over
    every call path that starts with it."""
    out: Counter = Counter()
    for p in inp.paths:
        value = getattr(p, field)
        if not value:
            continue
        thread = inp.threads[p.thread]
        chain = tuple((thread, inp.frames[f].function, inp.frames[f].file) for f in p.frames[::-1])
        for depth in range(1, len(chain) + 1):
            out[chain[:depth]] += value
    return out


def frame_chains(frames: list[dict]) -> dict[int, tuple]:
    """Per drawn frame (by node): its chain of keys from the top of its thread."""
    by_node = {f["node"]: f for f in frames}
    out: dict[int, tuple] = {}
    for f in frames:
        chain, at = [], f
        while at is not None and at["key"] is not None:
            chain.append(tuple(at["key"]))
            at = by_node.get(at["parent"])
        if chain:
            out[f["node"]] = tuple(chain[::-1])
    return out


def colour(rgb: list[int]) -> str:
    """What a frame's colour says, by its hue: red grew, blue shrank, purple new (a frame A does
    not have; not the colour of any growth), grey within 2 %."""
    if tuple(rgb) == GREY:
        return "same"
    hue, _, saturation = colorsys.rgb_to_hls(*(c / 255 for c in rgb))
    hue *= 360
    if saturation > 0.3 and (hue < 15 or hue > 345):
        return "grew"
    if saturation > 0.3 and 200 < hue < 230:
        return "shrank"
    if saturation > 0.3 and 265 < hue < 295:
        return "new"
    return f"unknown {rgb}"


def expected(before: float, after: float) -> set[str]:
    if before == 0:
        return {"new"} if after else {"same"}
    change = (after - before) / before
    if abs(change) < 0.02:
        return {"same"}
    return {"grew"} if change > 0 else {"shrank"}


def test_loads_cleanly_without_any_request(page) -> None:
    result, _, html = page
    assert result["consoleAtLoad"] == [] and result["pageErrors"] == []
    assert result["blockedRequests"] == [] and len(result["requests"]) == 1
    legend = result["metrics"]["wall"]["legend"]
    assert "how each frame's total changed" in legend and "a.bsprof → " in legend
    assert "diff" in model(html.read_text())


@pytest.mark.parametrize("metric", list(FIELDS))
def test_every_frame_is_coloured_by_the_change_of_its_total(page, metric: str) -> None:
    result, (a, b), _ = page
    shown = result["metrics"][metric]
    assert shown["state"] == metric
    before, after = chain_totals(a, FIELDS[metric]), chain_totals(b, FIELDS[metric])
    chains = frame_chains(shown["frames"])
    checked = 0
    for f in shown["frames"]:
        chain = chains.get(f["node"])
        if chain is None or f["w"] < 4:  # thread frames; too narrow to sample
            continue
        assert after[chain] == f["value"], chain  # B's shape and B's figures
        assert colour(f["rgb"]) in expected(before[chain], after[chain]), (chain, f["rgb"])
        checked += 1
    assert checked >= 8


def test_the_planted_differences_show(page) -> None:
    result, _, _ = page

    def painted(metric: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for f in result["metrics"][metric]["frames"]:
            if f["key"] is not None and f["w"] >= 4:
                out.setdefault(f["key"][1], set()).add(colour(f["rgb"]))
        return out

    wall = painted("wall")
    assert wall["loadSubtitles"] == {"new"}  # added in B
    assert wall["parseString"] == {"grew"}  # twice as slow: +100 %, red, not the colour of new
    assert wall["handleMessage"] == {"shrank"}  # its child registryWrite was removed
    assert "registryWrite" not in wall  # B's shape
    assert wall["drawPoster"] == wall["layoutText"] == {"same"}
    live = painted("liveBytes")
    assert live["decodeImage"] == {"grew"}  # leaks in B: far more than +100 %, the deepest red
    assert live["cacheThumbnail"] == {"same"}


def test_removed_paths_are_rows_of_the_merged_call_tree() -> None:
    """The page's call tree is both runs' trees merged: a call path only A has (registryWrite,
    removed in B) is a row of its own with A's figures, so A's totals add up in full."""
    a = input_from_bytes(stream(8.0, **BUILD_A))
    b = input_from_bytes(stream(8.0, **BUILD_B))
    model_b = build_model(b)
    tree = diff_model(model_b, a, b, compare(a, b), ("A", "B"))["tree"]
    wall, live = tree["figures"]["wall"], tree["figures"]["liveBytes"]
    assert sum(v or 0 for v in wall["selfA"]) == sum(p.wall for p in a.paths)
    assert sum(v or 0 for v in wall["selfB"]) == sum(p.wall for p in b.paths)
    assert sum(v or 0 for v in live["selfA"]) == sum(p.live_bytes for p in a.paths)
    roots = [n for n, parent in enumerate(tree["parent"]) if parent < 0]
    assert sum(wall["a"][n] or 0 for n in roots) == sum(p.wall for p in a.paths)
    names = [model_b["strings"][i] if i >= 0 else "" for i in tree["name"]]
    gone = [n for n, name in enumerate(names) if name == "registryWrite"]
    assert gone and all(wall["selfB"][n] is None and wall["selfA"][n] > 0 for n in gone)
