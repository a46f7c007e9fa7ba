"""The HTML report in real headless Chromium: it loads without a console message or a network
request, shows ``inspect``'s figures, and its controls (metric switch, zoom, breadcrumb, search,
sorting, filters, hide idle, time range) do what they say. A screenshot of each view is kept in
``test-artifacts/report/`` (gitignored)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from report_helpers import (
    HOSTILE,
    HOSTILE_LABEL,
    allocations_per_line,
    deep_stream,
    make_session,
    run_cli,
    stream,
    vitals_lines,
)

from rokuprof.bsprof.model import Limits
from rokuprof.export import export, input_from_bytes
from rokuprof.export.model import IDLE
from rokuprof.export.report.session import write_session_report
from rokuprof.profile.report import inspect_report
from tests.viewers import REPO
from tests.viewers.report import model, open_reports, problems

SAMPLES = REPO / "samples"
DEEP = 20_000  # frames of the deep call path
MAX_LEVELS = 400  # levels the page draws below the frame at the top (flame.js)
ARTIFACTS = REPO / "test-artifacts" / "report"
NO_MEMORY = "no memory data: the app was built without bsprof_enable_mem=1"
VIEWPORT = 1280  # the width the functions table's main columns fit in
#: a stream with names longer than any column (clipped in the functions table), and a file set
#: that differs from the samples' (the most used file renamed: every other file's rank moves)
LONG_NAME = "handleVeryLongComponentEventName_onKeyEvent_" * 3
LONG_FILE = "pkg:/components/some/deeply/nested/feature/" + "directory/" * 6 + "Handlers.brs"
LONG_THREAD = "HomeSceneWithAVeryLongThreadName_" * 2
RENAMES = (
    ("parseJSON", LONG_NAME),
    ("pkg:/components/rows/PosterRowList.brs", LONG_FILE),
    ("HomeScene", LONG_THREAD),
)
METRIC_FIELDS = {  # the page's metric -> ExportInput.CallPath field
    "wall": "wall",
    "cpu": "cpu",
    "calls": "calls",
    "allocBytes": "alloc_bytes",
    "liveBytes": "live_bytes",
}


@cache
def sample(name: str):
    return input_from_bytes((SAMPLES / f"{name}.bsprof").read_bytes())


def write_report(directory: Path, name: str, inp) -> Path:
    path = directory / f"{name}.html"
    path.write_bytes(export(inp, "report"))
    return path


@pytest.fixture(scope="module")
def driven(tmp_path_factory):
    """The full sample's report, driven through every view."""
    directory = tmp_path_factory.mktemp("report")
    path = write_report(directory, "cafe-tv-full", sample("cafe-tv-full"))
    [result] = open_reports([path], drive=True, shots=ARTIFACTS, show_idle=True)
    return result, model(path.read_text())


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """Other reports, driven too: the CPU-only sample (written by `rokuprof report`), the corrupt
    sample, hostile names, long names."""
    directory = tmp_path_factory.mktemp("reports")
    cpu_only = directory / "cafe-tv-cpu-only.html"
    done = run_cli(str(SAMPLES / "cafe-tv-cpu-only.bsprof"), "-o", str(cpu_only))
    assert done.returncode == 0, done.stderr
    paths = [cpu_only, write_report(directory, "cafe-tv-corrupt", sample("cafe-tv-corrupt"))]
    hostile = stream(3.0, name=HOSTILE, names=(("parseJSON", HOSTILE), ("main", HOSTILE)))
    paths.append(write_report(directory, "hostile", input_from_bytes(hostile)))
    paths.append(write_report(directory, "long-names", long_names()))
    results = open_reports(paths, drive=True, shots=ARTIFACTS, show_idle=True)
    return dict(zip(("cpu-only", "corrupt", "hostile", "long-names"), results, strict=True))


@cache
def long_names():
    return input_from_bytes(stream(8.0, names=RENAMES))


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    """A hostile stream's report: one call path 20,000 frames deep, driven through its levels
    (stacks kept whole: a stack depth limit above the stream's, so the page's own bounds are
    what is tested; the default limit folds them to 128 frames)."""
    directory = tmp_path_factory.mktemp("deep")
    inp = input_from_bytes(deep_stream(DEEP), limits=Limits(max_stack_depth=DEEP + 1))
    path = write_report(directory, "deep", inp)
    [result] = open_reports([path], deep=True, shots=ARTIFACTS, show_idle=True)
    return result


def totals_per_function(inp, field: str) -> Counter:
    """Per (module, function, file): the field summed once per call path that has the function
    anywhere on its stack (inspect's "total")."""
    out: Counter = Counter()
    for p in inp.paths:
        value = getattr(p, field)
        if not value:
            continue
        thread = inp.threads[p.thread]
        for key in {(thread, inp.frames[f].function, inp.frames[f].file) for f in p.frames}:
            out[key] += value
    return out


def flame_widths(layout: dict) -> Counter:
    """Per function key: the width of its outermost frames (a frame inside a frame of the same
    function is already counted), scaled back to the metric's units."""
    rects = layout["rects"]
    by_node = {r["node"]: r for r in rects}
    scale = layout["size"]["total"] / layout["size"]["width"]
    out: Counter = Counter()
    for r in rects:
        if r["key"] is None:
            continue
        key = tuple(r["key"])
        p = by_node.get(r["parent"])
        nested = False
        while p is not None:
            if p["key"] is not None and tuple(p["key"]) == key:
                nested = True
            p = by_node.get(p["parent"])
        if not nested:
            out[key] += r["w"] * scale
    return out


def test_page_loads_cleanly_without_any_request(driven, loaded):
    for result in [driven[0], *loaded.values()]:
        assert problems(result) == [], result["file"]
        assert len(result["requests"]) == 1  # the file itself, nothing else
        assert result["readyMs"] is not None and result["scripts"] == 2


def test_flame_widths_equal_inspect_for_every_metric(driven):
    result, _ = driven
    inp = sample("cafe-tv-full")
    inspect = {
        (f["module"], f["function"], f["file"]): f for f in inspect_report(inp.reader)["functions"]
    }
    for metric, field in METRIC_FIELDS.items():
        layout = result["steps"]["metrics"][metric]
        assert layout["state"]["metric"] == metric
        expected = totals_per_function(inp, field)
        assert layout["size"]["total"] == sum(getattr(p, field) for p in inp.paths)
        widths = flame_widths(layout)
        assert expected and widths.keys() == {k for k, v in expected.items() if v}
        for key, value in expected.items():
            assert widths[key] == pytest.approx(value, rel=1e-9, abs=1e-6), (metric, key)
        if metric in ("wall", "cpu"):
            for key, f in inspect.items():
                assert widths[key] == pytest.approx(f[f"total_{metric}"], rel=1e-9, abs=1e-6)


def test_functions_table_shows_inspects_figures(driven):
    result, data = driven
    inp = sample("cafe-tv-full")
    inspect = {
        (f["module"], f["function"], f["file"]): f for f in inspect_report(inp.reader)["functions"]
    }
    s, fns = data["strings"], data["functions"]
    threads = [s[n] for _, n in data["threads"]]
    table = result["steps"]["functions"]
    assert [h["key"] for h in table["heads"]][:5] == [
        "function",
        "module",
        "selfWall",
        "selfPct",
        "totalWall",
    ]
    seen = set()
    for row in table["rows"]:
        f = int(row["attrs"]["fn"])
        key = (threads[fns["thread"][f]], s[fns["name"][f]], s[fns["file"][f]])
        seen.add(key)
        want = inspect[key]
        assert row["function"] == key[1] and row["module"] == key[0]
        assert row["selfWall"]["value"] == want["self_wall"]
        assert row["totalWall"]["value"] == want["total_wall"]
        assert row["selfCpu"]["value"] == want["self_cpu"]
        assert row["totalCpu"]["value"] == want["total_cpu"]
        assert row["calls"]["value"] == want["calls"]
        assert row["calls"]["text"] == f"{want['calls']:,}"
        # wall is shown in seconds/ms with its unit; the printed figure rounds the exact value
        text = row["selfWall"]["text"]
        number, unit = text.split(" ") if " " in text else (text, "s")
        seconds = float(number) * {"s": 1, "ms": 1e-3, "µs": 1e-6}[unit]
        assert seconds == pytest.approx(want["self_wall"] / 1e6, rel=0.01, abs=1e-6)
    assert seen == set(inspect)
    walls = [r["selfWall"]["value"] for r in table["rows"]]
    assert walls == sorted(walls, reverse=True)  # the default order: self wall, largest first


def test_sorting_tables(driven):
    steps = driven[0]["steps"]
    by_cpu = [r["selfCpu"]["value"] for r in steps["functionsByCpu"]["rows"]]
    assert by_cpu == sorted(by_cpu, reverse=True) and by_cpu[0] > by_cpu[-1]
    heads = {h["key"]: h["sort"] for h in steps["functionsByCpu"]["heads"]}
    assert heads["selfCpu"] == "descending" and heads["selfWall"] is None
    asc = [r["selfCpu"]["value"] for r in steps["functionsByCpuAsc"]["rows"]]
    assert asc == sorted(asc)
    # the call tree orders siblings by the clicked column
    rows = steps["treeByCpu"]["rows"]
    assert {h["key"]: h["sort"] for h in steps["treeByCpu"]["heads"]}["self:cpu"] == "descending"
    siblings: dict = {}
    stack: list = []
    for r in rows:
        depth = int(r["attrs"]["depth"])
        del stack[depth:]
        parent = stack[-1] if stack else None
        siblings.setdefault(parent, []).append(r["self:cpu"]["value"])
        stack.append(r["attrs"]["node"])
    assert any(len(v) > 1 for v in siblings.values())
    for values in siblings.values():
        assert values == sorted(values, reverse=True)


def test_call_tree_expands_and_collapses(driven):
    steps = driven[0]["steps"]
    tree, sorted_, collapsed = steps["tree"], steps["treeByCpu"], steps["treeCollapsed"]
    reopened = steps["treeReopened"]  # sorted by self CPU, first branch closed and opened again
    assert len(collapsed["rows"]) < len(sorted_["rows"]) == len(tree["rows"])
    assert [r["attrs"]["node"] for r in reopened["rows"]] == [
        r["attrs"]["node"] for r in sorted_["rows"]
    ]
    # thread rows carry the thread's totals
    inp = sample("cafe-tv-full")
    per_thread = Counter()
    for p in inp.paths:
        per_thread[inp.threads[p.thread]] += p.wall
    for r in tree["rows"]:
        if r["attrs"]["depth"] == "0":
            assert r["total:wall"]["value"] == per_thread[r["name"].strip("▾▸ ")]


def test_zoom_hover_and_breadcrumb(driven):
    steps = driven[0]["steps"]
    zoom = steps["zoom"]
    target, after = zoom["target"], zoom["after"]
    assert after["state"]["zoom"] == target["node"]
    assert after["size"]["total"] == target["value"]
    zoomed = next(r for r in after["rects"] if r["node"] == target["node"])
    assert zoomed["x"] == 0 and zoomed["w"] == after["size"]["width"]
    assert zoom["crumbs"][0] == "all threads" and zoom["crumbs"][-1] == target["key"][1]
    assert len(zoom["crumbs"]) == target["depth"] + 1
    tip = steps["tooltip"]
    assert target["key"][1] in tip and target["key"][2] in tip  # name, file:line
    assert "Wall time" in tip and "Per call" in tip and "self" in tip
    assert steps["unzoom"]["state"]["zoom"] == -1
    assert steps["unzoom"]["size"]["total"] == steps["initial"]["size"]["total"]


def test_search_highlights_and_sums_the_share(driven):
    search = driven[0]["steps"]["search"]
    inp = sample("cafe-tv-full")
    matching = [
        p
        for p in inp.paths
        if any(
            "parse" in inp.frames[f].function.lower() or "parse" in inp.frames[f].file.lower()
            for f in p.frames
        )
    ]
    share = sum(p.wall for p in matching) / sum(p.wall for p in inp.paths)
    assert search["share"] == pytest.approx(share, rel=1e-9)
    names = {
        inp.frames[f].function
        for p in matching
        for f in p.frames
        if "parse" in inp.frames[f].function.lower()
    }
    assert search["text"].startswith(f"{len(names)} functions in ")
    assert f"{100 * share:.1f}%" in search["text"]


def test_hide_idle_threads_and_name_filter(driven):
    steps = driven[0]["steps"]
    assert steps["waits"] == ["waitPort"]  # the suggestion found in this profile
    names = [r["function"] for r in steps["functionsNoIdle"]["rows"]]
    assert "waitPort" not in names and "waitPort" in [
        r["function"] for r in steps["functions"]["rows"]
    ]
    filtered = steps["functionsFiltered"]["rows"]
    assert filtered and all("parse" in (r["function"] + r["file"]).lower() for r in filtered)
    one = steps["functionsOneThread"]
    assert one["table"]["rows"] and {r["module"] for r in one["table"]["rows"]} == {one["thread"]}


def test_line_view_ranks_lines_by_cpu(driven):
    steps = driven[0]["steps"]
    inp = sample("cafe-tv-full")
    lines: dict = {}
    for p in inp.paths:
        key = inp.frames[p.frames[0]].function, inp.threads[p.thread]
        for line, cpu, _ in p.line_cpu:
            lines.setdefault(key, Counter())[line] += cpu
    cards = steps["lines"]
    assert cards
    for card in cards:
        function = card["title"]
        matches = [v for (f, _), v in lines.items() if f == function]
        assert matches, function
        cpus = [float(r[1]) for r in card["rows"]]
        assert cpus == sorted(cpus, reverse=True)
        want = matches[0].most_common(len(cpus))
        assert [int(r[0]) for r in card["rows"]][:3] == [line for line, _ in want][:3]
        assert cpus[0] == want[0][1]


def test_line_view_ranks_allocation_sites_by_bytes_at_their_lines(driven):
    cards = driven[0]["steps"]["allocSites"]
    expected = allocations_per_line((SAMPLES / "cafe-tv-full.bsprof").read_bytes())
    assert cards
    for card in cards:
        assert card["heads"][:2] == ["line", "bytes"]
        rows = [(int(r[0]), int(float(r[1])), int(float(r[3]))) for r in card["rows"]]
        byte_counts = [b for _, b, _ in rows]
        assert byte_counts == sorted(byte_counts, reverse=True)
        for line, size, count in rows:
            assert (size, count) == (
                expected[(card["title"], line, "bytes")],
                expected[(card["title"], line, "count")],
            ), (card["title"], line)


def test_memory_view(driven):
    steps = driven[0]["steps"]
    inp = sample("cafe-tv-full")
    leaks = steps["leaks"]["rows"]
    assert sum(r["liveBytes"]["value"] for r in leaks) == sum(p.live_bytes for p in inp.paths)
    assert leaks[0]["liveBytes"]["value"] == max(p.live_bytes for p in inp.paths)
    assert " › " in leaks[0]["path"]
    allocs = steps["allocs"]["rows"]
    assert sum(r["allocBytes"]["value"] for r in allocs) == sum(p.alloc_bytes for p in inp.paths)
    churn = steps["churn"]["rows"]
    assert churn and churn[0]["reallocs"]["value"] == max(r["reallocs"]["value"] for r in churn)


def test_facts(driven):
    steps = driven[0]["steps"]
    facts = steps["facts"]
    assert facts["App"] == "Café TV 2.4.1" and facts["Device"] == "Roku 4800X"
    assert (
        facts["Firmware"] == "14.1.4 build 4123"
        and facts["Sample ratio"] == "1 requested, 1 actual"
    )
    assert (
        facts["Capture status"] == "complete"
        and facts["Profiler flags"] == "line data, memory operations"
    )
    assert facts["Made by"].startswith("rokuprof ")
    assert steps["status"] == "complete" and steps["problem"] is None


def test_time_range_makes_every_view_follow(driven):
    steps = driven[0]["steps"]
    inp = sample("cafe-tv-full")
    a, b = steps["range"]["range"]
    slots = inp.timeline.last_slot()
    assert a == pytest.approx(slots * 0.25, abs=slots * 0.01) and b == pytest.approx(
        slots * 0.5, abs=slots * 0.01
    )
    assert "–" in steps["range"]["text"]
    # per function: self wall in the range ~ its busy samples in the range x the period
    period = inp.run.units_per_second / inp.timeline.hz
    in_range: Counter = Counter()
    for thread, runs in inp.timeline.runs.items():
        for slot, sid, n in runs:
            if sid != IDLE:
                overlap = max(0, min(b, slot + n) - max(a, slot))
                f = inp.frames[inp.timeline.stacks[sid][0]]
                in_range[(inp.threads[thread], f.function)] += overlap * period
    paths_of: Counter = Counter()
    for p in inp.paths:
        paths_of[(inp.threads[p.thread], inp.frames[p.frames[0]].function)] += 1
    rows = steps["range"]["functions"]["rows"]
    whole = {
        (r["module"], r["function"]): r["selfWall"]["value"] for r in steps["functions"]["rows"]
    }
    changed = 0
    for r in rows:
        key = (r["module"], r["function"])
        got = r["selfWall"]["value"]
        assert got == pytest.approx(in_range[key], abs=(paths_of[key] + 1) * period), key
        changed += got != whole[key]
    assert changed > len(rows) // 2
    flame_total = steps["range"]["flame"]["size"]["total"]
    assert flame_total == pytest.approx(sum(in_range.values()), rel=0.02)
    assert flame_total < 0.4 * steps["initial"]["size"]["total"]
    cleared = steps["rangeCleared"]
    assert (
        cleared["range"] is None
        and cleared["flame"]["size"]["total"] == steps["initial"]["size"]["total"]
    )


def test_reports_without_memory_or_lines_and_corrupt(loaded):
    cpu_only = loaded["cpu-only"]["steps"]
    assert "no line data" in cpu_only["linesNote"]
    assert cpu_only["leaks"] is None and cpu_only["metrics"]["liveBytes"]["size"]["total"] == 0
    corrupt = loaded["corrupt"]["steps"]
    assert corrupt["status"] == "corrupt — decoding stopped"
    problem = sample("cafe-tv-corrupt").run.problem
    assert (
        problem and problem in corrupt["problem"] and problem in corrupt["facts"]["Capture status"]
    )


def test_hostile_names_are_shown_as_text(loaded):
    result = loaded["hostile"]
    assert (
        result["title"] == f"{HOSTILE} 2.4.1 — capture of 2023-11-14 22:13:20 UTC — rokuprof report"
    )
    assert HOSTILE.replace("\u2028", "") in result["bodyText"].replace("\u2028", "")
    names = [r["function"] for r in result["steps"]["functions"]["rows"]]
    assert HOSTILE in names
    assert result["scripts"] == 2 and result["dialogs"] == []


def test_screenshots_of_each_view_are_kept(driven):
    shots = driven[0]["shots"]
    for view in (
        "flame",
        "zoom",
        "search",
        "icicle",
        "tree",
        "functions",
        "lines",
        "memory",
        "facts",
        "range",
    ):
        path = Path(shots[view])
        assert path.stat().st_size > 10_000 and path.read_bytes()[:4] == b"\x89PNG", view


def test_a_call_path_20000_frames_deep_loads_and_draws(deep):
    """No stack overflow, no freeze: the page is ready and drawn at once (the bound only catches
    a hang; benchmarks measure speed), draws at most MAX_LEVELS levels with a row saying how many
    more there are, and zooming through them keeps the figures."""
    assert problems(deep) == [] and deep["readyMs"] < 10_000
    steps = deep["steps"]
    initial = steps["initial"]
    total_wall = 21 * 1500
    assert initial["size"]["total"] == total_wall and initial["rows"] == MAX_LEVELS + 1
    [more] = initial["marks"]
    assert more["kind"] == "deeper" and more["count"] == DEEP - MAX_LEVELS + 1
    # a click on that row zooms to the frame where the drawn levels end
    deeper = steps["deeper"]["after"]
    assert deeper["zoom"] == more["node"] and deeper["size"]["chain"] == MAX_LEVELS + 1
    [elided] = [m for m in deeper["marks"] if m["kind"] == "elided"]
    assert f"… {elided['count']:,} frames" in deeper["crumbs"] and len(deeper["crumbs"]) == 11
    # the deepest frame: its chain collapsed, its own figures exact
    leaf = steps["leaf"]["after"]
    assert leaf["zoom"] == steps["leaf"]["node"] and leaf["size"]["total"] == 1500
    assert leaf["size"]["chain"] == DEEP + 2 and leaf["rows"] == 11 and "leaf" in leaf["names"]
    # "… N frames" goes half-way up; the first crumb back to the top
    up = steps["up"]["after"]
    assert DEEP // 2 - 5 < up["size"]["chain"] < DEEP // 2 + 5
    assert steps["top"]["zoom"] == -1 and steps["top"]["size"]["total"] == total_wall
    # the call tree expands to its row limit; the leak site shows both ends of its path
    assert steps["tree"]["rows"] == 3000 and "first 3000 rows" in steps["tree"]["more"]
    [leak] = steps["leaks"]["rows"]
    assert leak["liveBytes"]["value"] == 320 and leak["fn"] == "leaf"
    assert leak["path"].startswith("main:") and leak["path"].endswith("leaf:10")
    assert f"… {DEEP - 11:,} frames" in leak["path"]
    functions = {r["function"]: r for r in steps["functions"]["rows"]}
    assert functions["recurse"]["totalWall"]["value"] == total_wall - 1500  # recursion once


# ---------------------------------------------------------------- issue 19: the report's words


def inspect_json(path: Path) -> dict:
    """``rokuprof inspect --json -n 0`` of a capture, as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "rokuprof", "inspect", "--json", "-n", "0", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 3), done.stderr
    return json.loads(done.stdout)


UNITS = {"ops": 1, "k ops": 1e3, "M ops": 1e6, "G ops": 1e9}
TIME = {"s": 1, "ms": 1e-3, "µs": 1e-6}
BYTES = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
COUNTS = {"calls", "self:calls", "allocCount", "frees", "liveCount", "reallocs"}


def parse_figure(text: str) -> tuple[float, str]:
    """'43.7 M ops' -> (43.7e6, 'ops'); '2.50 ms' -> (0.0025, 's'); '1.62 KiB' -> (1658.9, 'B')."""
    m = re.fullmatch(r"(-?[\d,]+(?:\.\d+)?) (.+)", text)
    assert m, f"no unit: {text!r}"
    number, unit = float(m.group(1).replace(",", "")), m.group(2)
    for table, name in ((UNITS, "ops"), (TIME, "s"), (BYTES, "B")):
        if unit in table:
            return number * table[unit], name
    raise AssertionError(f"unknown unit in {text!r}")


def check_cells(rows: list[dict], keys: dict[str, str]) -> int:
    """Every cell of ``keys`` (key -> unit) shows its figure with that unit, within the rounding
    of three significant figures; returns how many cells were checked."""
    checked = 0
    for row in rows:
        for key, unit in keys.items():
            cell = row.get(key)
            if cell is None:
                continue
            value, shown_unit = parse_figure(cell["text"])
            want = cell["value"] / 1e6 if unit == "s" else cell["value"]  # wall: microseconds
            assert shown_unit == unit, (key, cell)
            assert value == pytest.approx(want, rel=0.01, abs=1e-6 if unit == "s" else 0.5), cell
            checked += 1
    return checked


def test_every_figure_carries_its_unit(driven):
    """CPU in operations ('43.7 M ops', never a bare '43.7 M'), wall time as a duration ('0 s'
    too), bytes as bytes: in the functions table, the call tree, the lines, the tooltip and the
    facts; counts sit in columns named by what they count."""
    steps = driven[0]["steps"]
    inspect = inspect_json(SAMPLES / "cafe-tv-full.bsprof")
    functions = steps["functions"]["rows"]
    assert check_cells(
        functions,
        {
            "selfCpu": "ops",
            "totalCpu": "ops",
            "selfWall": "s",
            "totalWall": "s",
            "allocBytes": "B",
            "liveBytes": "B",
        },
    ) == 6 * len(functions)
    by_name = {r["function"]: r for r in functions}
    for f in inspect["functions"]:
        row = by_name[f["function"]]
        assert row["selfCpu"]["value"] == f["self_cpu"] and row["selfCpu"]["text"].endswith(" ops")
    tree = steps["tree"]["rows"]
    assert check_cells(
        tree, {"total:cpu": "ops", "self:cpu": "ops", "total:wall": "s", "self:wall": "s"}
    ) == 4 * len(tree)
    assert any(r["self:wall"]["text"] == "0 s" for r in tree)  # a thread row: no bare "0"
    for row in functions + tree:  # counts: grouped integers under a header that names them
        for key in COUNTS & row.keys():
            assert re.fullmatch(r"[\d,]+", row[key]["text"]), (key, row[key])
    probe = steps["probe"]
    assert probe["lineCpu"] and all(
        parse_figure(text)[1] == "ops" and parse_figure(text)[0] == pytest.approx(v, rel=0.01)
        for text, v in probe["lineCpu"]
    )
    for tip in probe["tips"]:
        cpu = tip["rows"]["cpu"][1]
        assert re.fullmatch(r"\S+ (?:[kMG] )?ops total \(\d+\.\d%\) · \S+ (?:[kMG] )?ops self", cpu)
        if "perCall" in tip["rows"]:  # a frame with calls of its own
            assert tip["rows"]["perCall"][1].endswith(" ops")
    assert any("perCall" in tip["rows"] for tip in probe["tips"])
    total_cpu = inspect["totals"]["cpu"]
    assert f"{total_cpu / 1e6:.1f} M ops CPU" in probe["facts"]["Totals"]


def test_peak_and_end_live_heap_are_named(driven, loaded):
    """'peak live heap' (the highest point of the live-heap line) and 'live heap at end' (inspect's
    live bytes), each named, on the timeline, in the memory view and in the facts."""
    probe = driven[0]["steps"]["probe"]
    inp = sample("cafe-tv-full")
    end = inspect_json(SAMPLES / "cafe-tv-full.bsprof")["totals"]["live_bytes"]
    peak = max(max(v for _, v in inp.timeline.heap), end)
    assert peak > end  # the sample's heap shrinks before the end: the two differ
    assert probe["heap"]["values"] == [peak, end]
    assert probe["heap"]["text"] == "peak live heap 3.03 MiB · live heap at end 2.90 MiB"
    assert f"{peak / 1024**2:.2f} MiB" == "3.03 MiB" and f"{end / 1024**2:.2f} MiB" == "2.90 MiB"
    assert probe["stats"]["Peak live heap"] == "3.03 MiB"
    assert (
        probe["stats"]["Live heap at end"]
        == f"2.90 MiB in {inp.reader.tables.totals().live_count} blocks"
    )
    assert probe["facts"]["Live heap"].startswith("peak 3.03 MiB, at end 2.90 MiB (")
    assert loaded["cpu-only"]["steps"]["probe"]["heap"]["text"] == NO_MEMORY


def node_calls(data: dict) -> Counter:
    """Per node of a report model: the calls of its own call paths."""
    out: Counter = Counter()
    for node, calls in zip(data["paths"]["node"], data["paths"]["calls"], strict=True):
        out[node] += calls
    return out


def test_tooltip_calls_are_the_frames_own(driven):
    """The tooltip's 'Calls' is how often the function was called on that call path (its own
    paths' count: inspect's calls when the function has one call path), not the sum over the
    frames below it."""
    result, data = driven
    inspect = inspect_json(SAMPLES / "cafe-tv-full.bsprof")
    calls_of = {(f["module"], f["function"], f["file"]): f["calls"] for f in inspect["functions"]}
    own = node_calls(data)
    below: Counter = Counter(own)
    parents = data["nodes"]["parent"]
    for n in range(len(parents) - 1, -1, -1):
        if parents[n] >= 0:
            below[parents[n]] += below[n]
    nodes_of = Counter(tuple(t["key"] or ()) for t in result["steps"]["probe"]["tips"])
    fn_nodes = Counter(data["nodes"]["fn"])
    tips = result["steps"]["probe"]["tips"]
    assert len(tips) >= 8
    differs = one_path = 0
    for tip in tips:
        label, text = tip["rows"]["calls"]
        if tip["key"] is None:  # a thread's frame: only calls below it
            assert label == "Calls below" and text == f"{below[tip['node']]:,}", tip
            continue
        assert label == "Calls" and text == f"{own[tip['node']]:,}", tip
        differs += below[tip["node"]] != own[tip["node"]]
        if fn_nodes[data["nodes"]["fn"][tip["node"]]] == 1 and nodes_of[tuple(tip["key"])] == 1:
            assert text == f"{calls_of[tuple(tip['key'])]:,}", tip  # inspect --json's figure
            one_path += 1
    assert differs >= 3 and one_path >= 3  # frames whose callees were called too; inspect's own


def test_functions_table_fits_1280_px(driven, loaded):
    """At 1,280 px the functions table's main columns fit without a horizontal scrollbar: long
    names and threads are clipped with an ellipsis, files shortened at "/" (the file's own name
    whole), the whole text in the cell's title."""
    main = ["function", "selfWall", "totalWall", "selfCpu", "totalCpu", "calls", "file"]
    memory = ["allocBytes", "frees", "liveBytes"]
    for name, result in [("full", driven[0]), *loaded.items()]:
        fit = result["steps"]["probe"]["fit"]
        assert fit["viewport"] == VIEWPORT
        assert fit["scrollWidth"] <= fit["clientWidth"], (name, fit["scrollWidth"])
        assert set(main) <= set(fit["heads"]), name
        if name != "cpu-only":
            assert set(memory) <= set(fit["heads"]), name
        for cell in fit["clipped"]:
            if cell["key"] == "file":
                shown, whole = cell["text"], cell["title"]
                assert shown == whole or whole.endswith(shown.removeprefix("…")), cell
                assert not cell["clipped"] and shown.startswith(("pkg:/", "…/")), cell
            else:
                assert cell["title"] == cell["text"] and cell["ellipsis"] == "ellipsis", cell
    cells = loaded["long-names"]["steps"]["probe"]["fit"]["clipped"]
    clipped = {c["text"] for c in cells if c["clipped"]}
    assert LONG_NAME in clipped and LONG_THREAD in clipped
    long_file = [c["text"] for c in cells if c["title"].startswith(LONG_FILE + ":")]
    assert long_file and all(text.startswith("…/Handlers.brs:") for text in long_file)


def test_a_files_colour_is_a_function_of_its_name(driven, loaded):
    """The same file has the same colour in any two reports, whatever other files they hold:
    the full sample against a capture whose most used file is renamed (every other file's rank
    by wall time moves), the CPU-only and the hostile capture."""
    full = dict(driven[0]["steps"]["probe"]["legend"])
    assert len(set(full.values())) == len(full) >= 8
    compared = 0
    for name in ("long-names", "cpu-only", "hostile"):
        other = dict(loaded[name]["steps"]["probe"]["legend"])
        for file in full.keys() & other.keys():
            assert full[file] == other[file], (name, file)
            compared += 1
    assert compared >= 15
    renamed = dict(loaded["long-names"]["steps"]["probe"]["legend"])
    assert LONG_FILE in renamed and "pkg:/components/rows/PosterRowList.brs" not in renamed
    # a function's swatch too (a file's hue, shaded per function)
    swatches = {(w, f): c for w, f, c in driven[0]["steps"]["probe"]["swatches"]}
    same = 0
    for w, f, c in loaded["long-names"]["steps"]["probe"]["swatches"]:
        if (w, f) in swatches:
            assert swatches[(w, f)] == c, (w, f)
            same += 1
    assert same >= 10


def test_title_and_heading_name_the_app_version_and_capture(driven, loaded):
    """The tab's title and the page's heading name the app, its version and the capture (by its
    start time, inspect's start_ms); in the HTML itself, so that a page without its script, a
    history list or a window list has it too (was: "rokuprof report" in the HTML, the app and
    version only once the script ran)."""
    start = inspect_json(SAMPLES / "cafe-tv-full.bsprof")["header"]["start_ms"]
    assert start == 1795273445000  # 2026-11-21 15:04:05 UTC
    capture = "capture of 2026-11-21 15:04:05 UTC"
    title = f"Café TV 2.4.1 — {capture} — rokuprof report"
    for result in (driven[0], loaded["cpu-only"]):  # written by export(), by `rokuprof report`
        assert result["title"] == title
        assert result["steps"]["probe"]["heading"] == f"Café TV 2.4.1 {capture}"
        assert f"<title>{title}</title>" in Path(result["file"]).read_text()
    hostile = loaded["hostile"]["steps"]["probe"]["heading"]
    assert hostile.replace("\u2028", "").startswith(HOSTILE.replace("\u2028", ""))
    assert hostile.endswith(" capture of 2023-11-14 22:13:20 UTC")


def test_a_cpu_only_capture_says_why_there_is_no_memory_data(driven, loaded):
    """Without memory data the memory metric, the tooltip, the memory and lines views, the
    tables, the timeline and the facts say why (was: an empty bar, zeros, no word)."""
    probe = loaded["cpu-only"]["steps"]["probe"]
    live = probe["liveMetric"]
    assert live["note"] == f"{NO_MEMORY}: nothing to size the frames by."
    assert live["graphHidden"] is True and live["title"] == NO_MEMORY
    assert probe["tips"] and all(
        tip["rows"][key][1] == NO_MEMORY
        for tip in probe["tips"]
        for key in ("allocBytes", "liveBytes")
    )
    assert probe["memoryText"].startswith(f"{NO_MEMORY}. ")
    assert re.search(rf"Allocation sites\s+{re.escape(NO_MEMORY)}\.", probe["linesText"])
    assert probe["notes"] == [f"{NO_MEMORY}: no allocation, free or live-heap columns."]
    assert f"{NO_MEMORY}: no allocation or live-heap columns." in probe["treeNotes"]
    assert probe["facts"]["Live heap"] == NO_MEMORY
    # a capture with memory data draws its graph and says nothing of the kind
    full = driven[0]["steps"]["probe"]
    assert full["liveMetric"] == {"note": None, "graphHidden": False, "title": ""}
    assert NO_MEMORY not in driven[0]["bodyText"]


@pytest.fixture(scope="module")
def session_page(tmp_path_factory):
    """A session's report (``write_session_report``): four marks, one of them a hostile label and
    two 10 ms apart, 24 vitals readings and a torn last line; opened, not driven."""
    readings = [(t / 4, (t * 7) % 100, 2_000_000 + 1000 * t) for t in range(24)]
    session = make_session(
        tmp_path_factory.mktemp("session") / "s",
        stream(6.0),
        marks=[("home", 1.0), (HOSTILE_LABEL, 3.0), ("end", 5.5), ("exit", 5.51)],
        vitals=vitals_lines(readings) + '{"time": 17',
    )
    [result] = open_reports([write_session_report(session)], shots=ARTIFACTS)
    return result


def test_marks_and_vitals_are_drawn_on_the_timeline_with_labels_as_text(session_page):
    result = session_page
    assert problems(result) == [] and len(result["requests"]) == 1
    drawn = result["session"]
    labels = ["home", HOSTILE_LABEL, "end"]
    assert [m["label"] for m in drawn["marks"]] == labels
    assert [m["shown"] for m in drawn["marks"]] == labels  # room enough at 1,440 px
    times = ["1.00 s", "3.00 s", "5.50 s"]
    titles = [f"{label} — {at}" for label, at in zip(labels, times, strict=True)]
    titles[2] += " (and 1 more mark right after it)"  # "exit", less than 4 px after "end"
    assert [m["title"] for m in drawn["marks"]] == titles
    assert [m["count"] for m in drawn["marks"]] == [1, 1, 2]
    listed = [list(pair) for pair in zip(times, labels, strict=True)] + [["5.51 s", "exit"]]
    assert drawn["list"] == listed
    geo = drawn["geometry"]
    for mark in drawn["marks"]:
        x = geo["left"] + mark["at"] * geo["hz"] / geo["slots"] * geo["plot"]
        assert abs(mark["x"] - x) <= 1, mark
        assert mark["under"] == "timeline"  # the line lets a drag reach the canvas
    assert geo["top"] > 0  # the labels' strip above the axis
    assert {k: v["points"] for k, v in drawn["vitals"].items()} == {"cpu": 24, "mem": 24}
    assert drawn["peaks"] == [
        {"series": "cpu", "points": 24, "text": "98 %"},
        {"series": "mem", "points": 24, "text": "1.93 MiB"},
    ]
    assert drawn["notes"] == "vitals.jsonl: 1 line skipped (1 cut off at the end)"
    # the hostile label is shown as text: no element made of it, no script run, no request
    assert drawn["elements"] == 0 and result["dialogs"] == [] and result["scripts"] == 2
    assert result["title"] == "Café TV 2.4.1 — capture of 2023-11-14 22:13:20 UTC — rokuprof report"
    assert HOSTILE_LABEL in result["bodyText"]


def test_a_page_of_very_many_call_paths_opens_and_says_what_it_added_up(tmp_path):
    """Issue 27 row 9, scaled (60,000 call paths, every one cold): the page opens cleanly in
    Chromium, interactive within its usual time, and says under its header that the paths are
    shown added up as '[other call paths]'."""
    from rokuprof.simulator.worst_cases import many_paths

    stream = tmp_path / "many.bsprof"
    stream.write_bytes(many_paths(60_000, seconds=1_200, modules=4))
    page = tmp_path / "many.html"
    done = run_cli(str(stream), "-o", str(page))
    assert done.returncode == 0, done.stderr
    [result] = open_reports([page])
    assert problems(result) == []
    assert "60,000 call paths with at most 0.01%" in result["bodyText"]
    assert "[other call paths]" in result["bodyText"]
    assert result["readyMs"] is not None and result["readyMs"] < 5_000
