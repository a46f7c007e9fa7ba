"""The report's Bottom-up tab in headless Chromium (issue 22, item 2), on a planted capture: a
JSON-parser-like recursion (parseJSON → parseValue → parseObject → parseValue → …) and a function
called from two callers (formatDate, from parseValue and from renderRow), with a second thread
that has a formatDate of its own. The expected figures are computed here from the capture's call
paths alone (self: the paths that end in the function; total: the paths that have it, or the
chain of callers, anywhere on their stack, once however often it recurs), and agree with
``inspect --json`` where it has the figure. The steps are tests/viewers/report_bottomup.mjs."""

from __future__ import annotations

from collections import Counter

import pytest
from report_helpers import HOSTILE, START_MS

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import ALLOC, CALLS, CPU, MEMORY, MODULE, PATH, STRING, Footer
from rokuprof.export import export, input_from_bytes
from rokuprof.export.model import IDLE
from rokuprof.profile.report import inspect_report
from rokuprof.simulator.app import AppConfig, SyntheticApp
from tests.viewers import REPO, VIEWERS
from tests.viewers.report import model, open_reports, problems

ARTIFACTS = REPO / "test-artifacts" / "report"
STEPS = VIEWERS / "report_bottomup.mjs"
JSON_BRS, MAIN_BRS = "pkg:/source/json.brs", "pkg:/source/main.brs"
MAIN, TASK = "MainThread", "TaskThread"
REPS = 300  # repetitions of each phase's CPU entries (the stream's bytes give its timeline)
#: path id -> (caller path, function, file, thread of a root)
PATHS = {
    1: (0, "main", MAIN_BRS, MAIN),
    2: (1, "parseJSON", JSON_BRS, None),
    3: (2, "parseValue", JSON_BRS, None),
    4: (3, "parseObject", JSON_BRS, None),
    5: (4, "parseValue", JSON_BRS, None),
    6: (5, "parseObject", JSON_BRS, None),
    7: (6, "parseValue", JSON_BRS, None),
    8: (7, "formatDate", MAIN_BRS, None),
    9: (1, "renderRow", MAIN_BRS, None),
    10: (9, "formatDate", MAIN_BRS, None),
    11: (1, HOSTILE, MAIN_BRS, None),
    12: (0, "taskMain", MAIN_BRS, TASK),
    13: (12, "formatDate", MAIN_BRS, None),
}
#: wall time per repetition in ms: the parser first, then rendering and the task
PHASE_A = {2: 1, 3: 10, 4: 5, 5: 20, 6: 3, 7: 40, 8: 7}
PHASE_B = {1: 2, 9: 2, 10: 30, 11: 1, 12: 4, 13: 50}
ALLOCS = {8: 1, 10: 3, 13: 2}  # 64-byte blocks, left live
FIGURES = {"wall": "wall", "cpu": "cpu", "calls": "calls", "allocBytes": "alloc_bytes"}


def cpu_of(pid: int, ms: int) -> int:
    return ms * 7 + pid  # CPU differs from wall, so the metric switch shows


def planted() -> bytes:
    header = SyntheticApp(AppConfig(seed=3, name="Bottom-up")).header(START_MS)
    names = sorted({f for _, f, _, _ in PATHS.values()} | {JSON_BRS, MAIN_BRS, MAIN, TASK})
    sid = {name: i + 1 for i, name in enumerate(names)}
    entries: list = [(STRING, i, name) for name, i in sid.items()]
    entries += [(MODULE, 1, sid[MAIN]), (MODULE, 2, sid[TASK])]
    for pid, (caller, function, file, thread) in PATHS.items():
        module = (1 if thread == MAIN else 2) if caller == 0 else 0
        entries.append((PATH, pid, caller, module, 1, sid[file], 10 * pid, sid[function]))
    for phase in (PHASE_A, PHASE_B):
        for _ in range(REPS):
            entries += [(CPU, pid, 1, cpu_of(pid, ms), ms * 1000) for pid, ms in phase.items()]
    address = 0x1000
    for pid, blocks in ALLOCS.items():
        for _ in range(blocks):
            entries.append((MEMORY, pid, ALLOC, 1, address, 64))
            address += 64
    entries += [(CALLS, pid, REPS + pid) for pid in PATHS]
    busy_ms = REPS * (sum(PHASE_A.values()) + PHASE_B[1] + PHASE_B[9] + PHASE_B[10] + PHASE_B[11])
    body = build_header(header) + encode_entries(entries, True) + END_MARKER
    return body + build_footer(Footer(START_MS + busy_ms + 1000))


# ---------------------------------------------------------------- expected, from the paths


def stack(inp, p) -> list[tuple[str, str, str]]:
    """The path's functions, leaf first, as ``(thread, function, file)``."""
    return [(inp.threads[p.thread], inp.frames[f].function, inp.frames[f].file) for f in p.frames]


def has(s: list, chain: tuple) -> bool:
    k = len(chain)
    return any(tuple(s[i : i + k]) == chain for i in range(len(s) - k + 1))


def chain_figures(inp, values: list[float], chain: tuple) -> tuple[float, float]:
    """Self (paths that end with the chain) and total (paths that have it, once each)."""
    self_ = total = 0.0
    for p, v in zip(inp.paths, values, strict=True):
        s = stack(inp, p)
        self_ += v if tuple(s[: len(chain)]) == chain else 0
        total += v if has(s, chain) else 0
    return self_, total


def callee_total(inp, values: list[float], f: tuple, h: tuple) -> float:
    """The paths on which f called h, once each."""
    return sum(v for p, v in zip(inp.paths, values, strict=True) if has(stack(inp, p), (h, f)))


def range_values(inp, field: str, a: int, b: int) -> list[float]:
    """Each path's figure in the slots [a, b): apportioned by its stack's samples there."""
    everywhere: Counter = Counter()
    inside: Counter = Counter()
    for thread, runs in inp.timeline.runs.items():
        for slot, sid, n in runs:
            if sid != IDLE:
                frames = inp.timeline.stacks[sid]
                key = (thread, tuple((inp.frames[f].function, inp.frames[f].file) for f in frames))
                everywhere[key] += n
                inside[key] += max(0, min(b, slot + n) - max(a, slot))
    out = []
    for p in inp.paths:
        key = (p.thread, tuple((inp.frames[f].function, inp.frames[f].file) for f in p.frames))
        share = inside[key] / everywhere[key] if everywhere[key] else 0
        out.append(getattr(p, field) * share)
    return out


# ---------------------------------------------------------------- the page


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bottomup")
    inp = input_from_bytes(planted())
    path = directory / "bottomup.html"
    path.write_bytes(export(inp, "report"))
    [result] = open_reports([path], steps=STEPS, shots=ARTIFACTS)
    return result, model(path.read_text()), inp


def keys_of(data: dict) -> list[tuple[str, str, str]]:
    s, fns = data["strings"], data["functions"]
    threads = [s[n] for _, n in data["threads"]]
    return [
        (threads[t], s[n], s[file])
        for t, n, file in zip(fns["thread"], fns["name"], fns["file"], strict=True)
    ]


def rows_by_chain(table: dict, keys: list) -> dict[tuple, dict]:
    """The table's rows by their chain of function keys (leaf first)."""
    return {tuple(keys[int(f)] for f in r["attrs"]["chain"].split(",")): r for r in table["rows"]}


def k(function: str, thread: str = MAIN) -> tuple[str, str, str]:
    file = JSON_BRS if function.startswith("parse") else MAIN_BRS
    return (thread, function, file)


PV, PO, PJ, FD, RR = map(k, ("parseValue", "parseObject", "parseJSON", "formatDate", "renderRow"))


def test_page_loads_cleanly_and_every_interaction_runs(page):
    result, _, _ = page
    assert problems(result) == []
    assert len(result["requests"]) == 1 and result["scripts"] == 2
    assert set(result["ms"]) >= {"tab", "open", "select", "selectInPanel", "range", "thread"}
    # each click (or call) ran to the end of the layout it causes (timed in the page; how
    # fast is benchmarks/report.py's figure, not a bound on a shared machine's clock)
    assert all(ms >= 0 for ms in result["ms"].values()), result["ms"]
    shot = ARTIFACTS / "bottom-up.png"
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:4] == b"\x89PNG"


def test_functions_by_self_time_with_recursion_counted_once(page):
    result, data, inp = page
    keys = keys_of(data)
    table = result["steps"]["initial"]["table"]
    assert [h["key"] for h in table["heads"]][:5] == [
        "name",
        "self",
        "selfPct",
        "total",
        "totalPct",
    ]
    tops = [r for r in table["rows"] if r["attrs"]["depth"] == "0"]
    walls = [p.wall for p in inp.paths]
    inspect = {
        (f["module"], f["function"], f["file"]): f for f in inspect_report(inp.reader)["functions"]
    }
    assert {keys[int(r["attrs"]["fn"])] for r in tops} == {
        k for k, f in inspect.items() if f["total_wall"]
    }
    for r in tops:
        key = keys[int(r["attrs"]["fn"])]
        want = chain_figures(inp, walls, (key,))
        assert (r["self"]["value"], r["total"]["value"]) == want, key
        assert want == (inspect[key]["self_wall"], inspect[key]["total_wall"]), key
    selves = [r["self"]["value"] for r in tops]
    assert selves == sorted(selves, reverse=True)  # ranked by self time
    # the planted recursion: three parseValue frames on one stack count once in its total
    pv = next(r for r in tops if keys[int(r["attrs"]["fn"])] == PV)
    assert pv["self"]["value"] == REPS * (10 + 20 + 40) * 1000
    assert pv["total"]["value"] == REPS * (10 + 5 + 20 + 3 + 40 + 7) * 1000
    assert pv["name"].endswith("parseValue") and pv["totalPct"]["value"] == pytest.approx(
        100 * pv["total"]["value"] / sum(walls)
    )


def test_callers_of_the_recursive_function_three_levels_up(page):
    result, data, inp = page
    keys = keys_of(data)
    walls = [p.wall for p in inp.paths]
    rows = rows_by_chain(result["steps"]["opened"]["table"], keys)
    opened = [c for c in rows if len(c) > 1]
    assert set(opened) == {
        (PV, PJ),
        (PV, PO),
        (PV, PO, PV),
        (PV, PO, PV, PJ),
        (PV, PO, PV, PO),
    }
    for chain in opened:
        r = rows[chain]
        assert (r["self"]["value"], r["total"]["value"]) == chain_figures(inp, walls, chain)
        assert r["attrs"]["depth"] == str(len(chain) - 1)
    # parseValue as parseObject calls it: 200 + 400 of its own, the paths below once: 700
    assert rows[(PV, PO)]["total"]["value"] == REPS * (20 + 3 + 40 + 7) * 1000
    assert rows[(PV, PJ)]["total"]["value"] == REPS * 85 * 1000
    # a row's callers follow it, largest total first
    order = [c for c in rows_by_chain(result["steps"]["opened"]["table"], keys)]
    at = order.index((PV,))
    assert order[at + 1 : at + 3] == [(PV, PJ), (PV, PO)]


def test_callers_and_callees_side_by_side(page):
    result, data, inp = page
    keys = keys_of(data)
    walls = [p.wall for p in inp.paths]
    fd = result["steps"]["formatDate"]["panel"]
    assert keys[fd["fn"]] == FD and fd["name"] == "formatDate"
    self_, total = chain_figures(inp, walls, (FD,))
    assert fd["figs"] == {"self": self_, "total": total}
    assert [(keys[int(c["fn"])], c["total"]) for c in fd["callers"]] == [
        (RR, REPS * 30_000),
        (PV, REPS * 7_000),
    ]
    assert [c["share"] for c in fd["callers"]] == pytest.approx([30 / 37, 7 / 37])
    assert fd["callees"] == [{"fn": "self", "name": "(self)", "total": total, "share": 1.0}]

    pv = result["steps"]["parseValue"]  # selected by a click on it in formatDate's callers
    assert keys[pv["selected"]] == PV and keys[pv["panel"]["fn"]] == PV
    _, pv_total = chain_figures(inp, walls, (PV,))
    callers = [(keys[int(c["fn"])], c["total"]) for c in pv["panel"]["callers"]]
    assert callers == [
        (PJ, chain_figures(inp, walls, (PV, PJ))[1]),
        (PO, chain_figures(inp, walls, (PV, PO))[1]),
    ]
    callees = pv["panel"]["callees"]
    assert callees[0]["name"] == "(self)" and callees[0]["total"] == REPS * 70_000
    got = [(keys[int(c["fn"])], c["total"], c["share"]) for c in callees[1:]]
    want = [(h, callee_total(inp, walls, PV, h)) for h in (PO, FD)]
    assert got == [(h, t, pytest.approx(t / pv_total)) for h, t in want]
    assert want == [(PO, REPS * 75_000), (FD, REPS * 7_000)]
    assert pv["panel"]["name"] == "parseValue"


def test_the_selection_reaches_the_other_views(page):
    result, data, _ = page
    keys = keys_of(data)
    elsewhere = result["steps"]["elsewhere"]
    assert [keys[int(r["fn"])] for r in elsewhere["functions"]] == [PV]
    nodes = [int(r["node"]) for r in elsewhere["tree"]]
    fns = data["nodes"]["fn"]
    assert nodes and all(keys[fns[n]] == PV for n in nodes)
    assert keys[elsewhere["flame"]] == PV


def test_every_metric_and_the_thread_filter(page):
    result, data, inp = page
    keys = keys_of(data)
    for metric, field in FIGURES.items():
        values = [getattr(p, field) for p in inp.paths]
        look = result["steps"]["metrics"][metric]
        rows = rows_by_chain(look["table"], keys)
        for chain, r in rows.items():
            assert (r["self"]["value"], r["total"]["value"]) == chain_figures(inp, values, chain), (
                metric,
                chain,
            )
        selves = [r["self"]["value"] for c, r in rows.items() if len(c) == 1]
        assert selves == sorted(selves, reverse=True), metric
        callers = {keys[int(c["fn"])]: c["total"] for c in look["panel"]["callers"]}
        assert callers == {
            c: t for c in (PJ, PO) if (t := chain_figures(inp, values, (PV, c))[1])
        }, metric
    allocs = result["steps"]["metrics"]["allocBytes"]["table"]
    fd = rows_by_chain(allocs, keys)[(FD,)]
    assert fd["self"]["value"] == 4 * 64
    one = rows_by_chain(result["steps"]["oneThread"]["table"], keys)
    assert one and {c[0][0] for c in one} == {MAIN}
    assert (k("formatDate", TASK),) in rows_by_chain(result["steps"]["initial"]["table"], keys)


def test_a_time_range_is_followed(page):
    result, data, inp = page
    keys = keys_of(data)
    step = result["steps"]["range"]
    a, b = step["range"]
    assert a == 0 and 0 < b < inp.timeline.last_slot()
    values = range_values(inp, "wall", a, b)
    rows = rows_by_chain(step["table"], keys)
    assert rows
    for chain, r in rows.items():
        want = chain_figures(inp, values, chain)
        assert r["self"]["value"] == pytest.approx(want[0], rel=1e-9, abs=1e-6), chain
        assert r["total"]["value"] == pytest.approx(want[1], rel=1e-9, abs=1e-6), chain
    # the range is the parser's time: formatDate's calls from renderRow are mostly later
    panel = step["panel"]
    assert keys[panel["fn"]] == FD
    callers = {keys[int(c["fn"])]: c["total"] for c in panel["callers"]}
    whole = {
        keys[int(c["fn"])]: c["total"] for c in result["steps"]["formatDate"]["panel"]["callers"]
    }
    for caller, total in callers.items():
        assert total == pytest.approx(callee_total(inp, values, caller, FD), rel=1e-9, abs=1e-6)
    assert callers.get(RR, 0) < whole[RR] / 2 and callers.get(PV, 0) > 0
    cleared = rows_by_chain(result["steps"]["cleared"]["table"], keys)
    initial = rows_by_chain(result["steps"]["initial"]["table"], keys)
    assert {c: r["total"]["value"] for c, r in cleared.items() if len(c) == 1} == {
        c: r["total"]["value"] for c, r in initial.items()
    }


def test_a_hostile_function_name_is_text(page):
    result, data, _ = page
    hostile = result["steps"]["hostile"]
    assert hostile["row"] == HOSTILE
    assert hostile["panel"]["name"] == HOSTILE
    assert hostile["elements"] == 0 and result["dialogs"] == []
    assert keys_of(data)[hostile["fn"]] == k(HOSTILE)
