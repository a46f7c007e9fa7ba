"""``rokuprof report``: the data model against ``inspect``'s figures, the page's escaping, and the
command (exit statuses, output place, atomic write, ``--open``)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from export_checks import group, varints
from report_helpers import HOSTILE, allocations_per_line, deep_stream, run_cli, stream

from rokuprof.bsprof.model import Limits
from rokuprof.export import FORMATS, export, input_from_bytes
from rokuprof.export.diff import compare
from rokuprof.export.model import IDLE
from rokuprof.export.report import build_model, embed_json, render_html
from rokuprof.export.report.diff_model import diff_model
from rokuprof.export.report.model import capture_label
from rokuprof.profile.report import inspect_report

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
FULL = SAMPLES / "cafe-tv-full.bsprof"


def load(name: str):
    return input_from_bytes((SAMPLES / f"{name}.bsprof").read_bytes())


def model_functions(model: dict) -> dict[tuple[str, str, str], dict[str, int]]:
    """Per inspect key, the figures a reader of the model adds up: self from the paths whose leaf
    is the function, total once per path that has it anywhere on its stack."""
    s = model["strings"]
    threads = [s[name] for _, name in model["threads"]]
    fns = model["functions"]
    key = [
        (threads[t], s[n], s[f])
        for t, n, f in zip(fns["thread"], fns["name"], fns["file"], strict=True)
    ]
    parent, fn = model["nodes"]["parent"], model["nodes"]["fn"]
    paths = model["paths"]
    out: dict = defaultdict(Counter)
    for i, node in enumerate(paths["node"]):
        figures = {c: paths[c][i] for c in ("cpu", "wall", "calls", "allocBytes", "liveBytes")}
        leaf = out[key[fn[node]]]
        for c, v in figures.items():
            leaf[f"self_{c}"] += v
        on_stack = set()
        n = node
        while n >= 0 and fn[n] >= 0:
            on_stack.add(key[fn[n]])
            n = parent[n]
        for k in on_stack:
            for c, v in figures.items():
                out[k][f"total_{c}"] += v
    return out


@pytest.mark.parametrize(
    "name", ["cafe-tv-full", "cafe-tv-long", "cafe-tv-cpu-only", "cafe-tv-corrupt"]
)
def test_function_figures_equal_inspect(name):
    inp = load(name)
    model = build_model(inp)
    figures = model_functions(model)
    inspect = inspect_report(inp.reader)["functions"]
    assert inspect
    for f in inspect:
        got = figures[(f["module"], f["function"], f["file"])]
        for field in ("self_cpu", "self_wall", "total_cpu", "total_wall", "calls"):
            mine = got["self_calls"] if field == "calls" else got[field]
            assert mine == f[field], (f, field)
    # and every function with figures in the model is one inspect lists (or only allocates)
    listed = {(f["module"], f["function"], f["file"]) for f in inspect}
    for k, v in figures.items():
        if k not in listed:
            assert not (v["self_cpu"] or v["self_wall"] or v["self_calls"]), k


def test_memory_figures_equal_the_tables():
    inp = load("cafe-tv-full")
    model = build_model(inp)
    totals = inp.reader.tables.totals()
    paths = model["paths"]
    assert sum(paths["allocBytes"]) == totals.alloc_bytes
    assert sum(paths["allocCount"]) == totals.alloc_count
    assert sum(paths["frees"]) == totals.free_count
    assert sum(paths["reallocs"]) == totals.free_realloc_count
    assert sum(paths["liveBytes"]) == totals.live_bytes
    assert sum(paths["liveCount"]) == totals.live_count
    assert model["totals"]["liveBytes"] == totals.live_bytes
    # leak sites: per allocating function, what inspect's leak report says
    leaks = Counter()
    for site in inspect_report(inp.reader, top=10_000)["leak_sites"]:
        leaks[(site["module"], site["stack"][0])] += site["bytes"]
    figures = model_functions(model)
    mine = Counter(
        {(k[0], k[1]): v["self_liveBytes"] for k, v in figures.items() if v["self_liveBytes"]}
    )
    assert mine == leaks
    # every allocating path has its call lines (leaf first), for the leak and allocation views
    sites = {i: lines for i, lines in model["sites"]}
    for i, p in enumerate(inp.paths):
        if p.alloc_count or p.live_bytes:
            assert sites[i] == list(p.lines)
            assert paths["callLine"][i] == (p.lines[1] if len(p.lines) > 1 else 0)


def test_line_figures_sit_at_function_line_plus_offset_minus_one():
    inp = load("cafe-tv-full")
    model = build_model(inp)
    tables = inp.reader.tables
    expected = Counter()
    for (pid, offset), (cpu, wall) in tables.line_cpu.items():
        node = tables.stack(pid)[0]
        expected[(pid, node.line + offset - 1, "cpu")] += cpu
        expected[(pid, node.line + offset - 1, "wall")] += wall
    flat = model["lines"]
    got = Counter()
    for i in range(0, len(flat), 4):
        got[(model["paths"]["id"][flat[i]], flat[i + 1], "cpu")] += flat[i + 2]
        got[(model["paths"]["id"][flat[i]], flat[i + 1], "wall")] += flat[i + 3]
    assert +got == +expected and got
    starts = {inp.frames[p.frames[0]].line for p in inp.paths}
    assert {line for _, line, _ in got} - starts  # real lines, not just where functions start


def test_allocation_sites_sit_at_their_source_lines_in_the_report_and_pprof(engine_env):
    data = stream(4.0, line_data=True, memory_ops=True)
    expected = allocations_per_line(data)
    inp = input_from_bytes(data)
    assert expected and inp.run.line_data
    model = build_model(inp)
    names, fns = model["strings"], model["functions"]["name"]
    node_fn, path_node = model["nodes"]["fn"], model["paths"]["node"]
    flat = model["allocLines"]
    got: Counter = Counter()
    for i in range(0, len(flat), 4):
        function = names[fns[node_fn[path_node[flat[i]]]]]
        got[(function, flat[i + 1], "count")] += flat[i + 2]
        got[(function, flat[i + 1], "bytes")] += flat[i + 3]
    assert got == expected
    starts = {inp.frames[p.frames[0]].line for p in inp.paths}
    assert {line for _, line, _ in got} - starts  # real lines, not where functions start
    # pprof: alloc_objects and alloc_space of the leaf locations at the same lines
    g = group(gzip.decompress(export(inp, "pprof")))
    strings = [t.decode("utf-8") for t in g[6]]
    function_names = {group(f)[1][0]: strings[group(f)[2][0]] for f in g[5]}
    where = {}
    for loc in g[4]:
        line = group(group(loc)[4][0])
        where[group(loc)[1][0]] = (function_names[line[1][0]], line.get(2, [0])[0])
    pprof: Counter = Counter()
    for sample in g[2]:
        sg = group(sample)
        leaf = varints(sg[1][0])[0]
        values = varints(sg[2][0])
        pprof[(*where[leaf], "count")] += values[3]
        pprof[(*where[leaf], "bytes")] += values[4]
    assert +pprof == expected


def test_timeline_runs_are_the_busy_samples_of_each_thread():
    inp = load("cafe-tv-long")
    model = build_model(inp)
    parent, fn = model["nodes"]["parent"], model["nodes"]["fn"]
    s = model["strings"]
    fns = model["functions"]
    threads = [m for m, _ in model["threads"]]
    for t, flat in model["timeline"]["lanes"]:
        thread = threads[t]
        expected = []  # (slot, leaf function name) of every busy sample
        for slot, sid, n in inp.timeline.runs[thread]:
            if sid != IDLE:
                leaf = inp.frames[inp.timeline.stacks[sid][0]].function
                expected += [(slot + i, leaf, len(inp.timeline.stacks[sid])) for i in range(n)]
        got, end = [], 0
        for i in range(0, len(flat), 3):
            start, node, n = end + flat[i], flat[i + 1], flat[i + 2]
            depth, m = 0, node
            while parent[m] >= 0:
                depth, m = depth + 1, parent[m]
            assert m == t  # the node belongs to its lane's thread
            got += [(start + k, s[fns["name"][fn[node]]], depth) for k in range(n)]
            end = start + n
        assert got == expected
    slot = value = 0
    heap = []
    flat = model["timeline"]["heap"]
    for i in range(0, len(flat), 2):
        slot, value = slot + flat[i], value + flat[i + 1]
        heap.append((slot, value))
    assert heap == inp.timeline.heap and heap
    assert model["timeline"]["slots"] == inp.timeline.last_slot()


def test_facts_and_status():
    model = build_model(load("cafe-tv-full"))
    facts = model["facts"]
    assert facts["app"] == "Café TV" and facts["appVersion"] == "2.4.1"
    assert (facts["vendor"], facts["model"]) == ("Roku", "4800X")
    assert facts["status"] == "complete" and facts["problem"] is None
    assert facts["lineData"] and facts["memoryOps"] and facts["sampleRatio"] == [1.0, 1.0]
    corrupt = build_model(load("cafe-tv-corrupt"))["facts"]
    assert corrupt["status"] == "corrupt" and "byte" in corrupt["problem"]
    cut = build_model(load("cafe-tv-cut-short"))["facts"]
    assert cut["status"] == "incomplete" and cut["problem"]


def test_embedded_json_cannot_end_the_script_element():
    data = {"name": HOSTILE, "x": "a & b > c \u2029"}
    text = embed_json(data)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text) == data


def test_page_with_hostile_names_has_only_its_own_scripts():
    data = stream(3.0, name=HOSTILE, names=(("parseJSON", HOSTILE), ("main", HOSTILE)))
    inp = input_from_bytes(data)
    html = render_html(build_model(inp))
    assert html.count("<script") == 2 and html.count("</script>") == 2
    assert HOSTILE not in html and "<!--" not in html
    from tests.viewers.report import model

    embedded = model(html)
    assert embedded["facts"]["app"] == HOSTILE
    assert HOSTILE in embedded["strings"]
    # the CSP allows exactly the page's own script
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp
    assert "http" not in html.replace("http-equiv", "")  # no address of any kind


def test_report_is_deterministic_and_in_the_export_registry():
    data = FULL.read_bytes()
    a = export(input_from_bytes(data), "report")
    assert a == export(input_from_bytes(data), "report")
    assert FORMATS["report"].suffix == ".report.html"
    assert a.startswith(b"<!doctype html>")


def levels_above(model: dict, node: int) -> int:
    """The node's level in the call tree (1 for a thread's root)."""
    parent = model["nodes"]["parent"]
    levels = 0
    while node >= 0:
        levels, node = levels + 1, parent[node]
    return levels


def test_a_call_path_20000_frames_deep_needs_no_recursion():
    """Nothing in the model walks a call path recursively (20,000 frames is far past Python's
    recursion limit) or keeps a key per frame per node: with stacks as deep as the stream's
    (a stack depth limit above it), and with the default limit, which folds them."""
    depth = 20_000
    folded = build_model(input_from_bytes(deep_stream(depth)))
    deepest = folded["paths"]["node"][folded["paths"]["id"].index(depth)]
    assert levels_above(folded, deepest) == Limits().max_stack_depth + 1
    inp = input_from_bytes(deep_stream(depth), limits=Limits(max_stack_depth=depth + 1))
    model = build_model(inp)
    parent = model["nodes"]["parent"]
    deepest = model["paths"]["node"][model["paths"]["id"].index(depth)]  # path ID = its depth
    assert levels_above(model, deepest) == depth + 1  # the thread root, every frame of the path
    assert sum(model["paths"]["wall"]) == inp.reader.tables.totals().wall == 21 * 1500
    # the A/B page's merged call tree of the run against itself: a row per node, no recursion
    tree = diff_model(model, inp, inp, compare(inp, inp), ("A", "B"))["tree"]
    assert len(tree["parent"]) == len(parent)
    live = tree["figures"]["liveBytes"]
    assert live["selfA"] == live["selfB"] and sum(v or 0 for v in live["selfA"]) == 320


def test_cli_writes_next_to_the_input_and_exits_0(tmp_path):
    capture = tmp_path / "run.bsprof"
    capture.write_bytes(FULL.read_bytes())
    proc = run_cli(str(capture))
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "run.report.html"
    assert out.read_bytes() == export(input_from_bytes(capture.read_bytes()), "report")
    assert f"report: {out}" in proc.stdout.decode() and proc.stderr == b""
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*"))


def test_cli_session_directory_stdin_and_output_option(tmp_path):
    session = tmp_path / "session"
    session.mkdir()
    (session / "capture.bsprof").write_bytes(FULL.read_bytes())
    assert run_cli(str(session)).returncode == 0
    assert (session / "capture.report.html").exists()
    proc = run_cli("-", cwd=tmp_path, stdin=FULL.read_bytes())
    assert proc.returncode == 0 and (tmp_path / "profile.report.html").exists()
    target = tmp_path / "x.html"
    assert run_cli(str(FULL), "-o", str(target)).returncode == 0 and target.exists()


@pytest.mark.parametrize("name", ["cafe-tv-corrupt", "cafe-tv-cut-short"])
def test_cli_incomplete_capture_exits_3_with_the_report_written(tmp_path, name):
    target = tmp_path / "r.html"
    proc = run_cli(str(SAMPLES / f"{name}.bsprof"), "-o", str(target))
    assert proc.returncode == 3
    [line] = proc.stderr.decode().splitlines()
    assert line.startswith("warning: ") and "the report shows what was read" in line
    from tests.viewers.report import model

    facts = model(target.read_text())["facts"]
    assert facts["status"] in ("corrupt", "incomplete") and facts["problem"] in line


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.bsprof", "cannot read"),
        (lambda d: (d / "text.bsprof").write_text("hello") and d / "text.bsprof", "not a .bsprof"),
        (lambda d: d, "without a capture.bsprof"),
    ],
)
def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path, make, message):
    proc = run_cli(str(make(tmp_path)), "-o", str(tmp_path / "out.html"))
    assert proc.returncode == 2
    [line] = proc.stderr.decode().splitlines()
    assert line.startswith("error: ") and message in line, line
    assert not (tmp_path / "out.html").exists() and b"Traceback" not in proc.stderr


def test_cli_unwritable_output_exits_2_before_decoding(tmp_path):
    proc = run_cli(str(FULL), "-o", str(tmp_path / "no" / "such" / "dir.html"))
    assert proc.returncode == 2
    assert b"no directory" in proc.stderr
    (tmp_path / "cafe-tv-full.report.html").mkdir()  # -o DIR names DIR/<stem>.report.html
    proc = run_cli(str(FULL), "-o", str(tmp_path))
    assert proc.returncode == 2 and b"is a directory" in proc.stderr


def test_open_uses_the_browser_and_says_when_there_is_none(tmp_path):
    opener = tmp_path / "browser.sh"
    seen = tmp_path / "seen.txt"
    opener.write_text(f'#!/bin/sh\necho "$1" > {seen}\n')
    opener.chmod(0o755)
    target = tmp_path / "r.html"
    proc = run_cli(str(FULL), "-o", str(target), "--open", env={"BROWSER": str(opener)})
    assert proc.returncode == 0, proc.stderr
    assert seen.read_text().strip() == target.resolve().as_uri()
    proc = run_cli(str(FULL), "-o", str(target), "--open", env={"BROWSER": str(tmp_path / "none")})
    assert proc.returncode == 0
    assert b"no web browser found to open it; open" in proc.stderr


def page_title_of(html: str) -> str:
    m = re.search(r"<title>(.*?)</title>", html, re.S)
    assert m, "no <title>"
    return m.group(1)


def test_title_names_the_app_version_and_capture(tmp_path):
    """The page's <title> (in the HTML, before any script) names the app, its version and the
    capture by its start time: the same from a file, standard input and the export registry."""
    want = "Café TV 2.4.1 — capture of 2026-11-21 15:04:05 UTC — rokuprof report"
    capture = tmp_path / "run.bsprof"
    capture.write_bytes(FULL.read_bytes())
    assert run_cli(str(capture)).returncode == 0
    assert page_title_of((tmp_path / "run.report.html").read_text()) == want
    proc = run_cli("-", "-o", "-", stdin=FULL.read_bytes())
    assert proc.returncode == 0 and page_title_of(proc.stdout.decode()) == want
    assert page_title_of(export(load("cafe-tv-full"), "report").decode()) == want
    assert build_model(load("cafe-tv-full"))["facts"]["capture"] == want.split(" — ")[1]


def test_title_is_escaped_device_text():
    data = stream(3.0, name=HOSTILE, version="1\x1b[31m")
    html = render_html(build_model(input_from_bytes(data)))
    assert page_title_of(html) == (
        "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;\u2028&lt;!-- 1\ufffd[31m — "
        "capture of 2023-11-14 22:13:20 UTC — rokuprof report"
    )
    assert html.count("<script") == 2 and "<!--" not in html


def test_capture_label_without_a_start():
    assert capture_label(1_700_000_000.0) == "capture of 2023-11-14 22:13:20 UTC"
    for start in (None, float("nan"), float("inf"), 1e300):
        assert capture_label(start) == "capture"
