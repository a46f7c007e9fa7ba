"""The Memory tab's range view in headless Chromium (issue 22, item 5: "what grew the heap in this
minute?"), and the device vitals in a range (item 6), on a planted capture: a 10 s run whose
``cacheImage`` leaks (allocates, never frees) only from 4 s to 6 s; ``loadConfig`` allocates from
1 s to 3 s and ``dropConfig`` frees those blocks from 7 s to 9 s (frees elsewhere, on another call
path); ``cacheImage`` is also called from ``prefetch``, which frees each block right away; a
function with a hostile name on a second thread keeps one block. The expected figures come from
the capture's own memory operations, here: each operation's byte position in the stream, timed
by the rule the converter documents (a file has no times: data decoded by the end of a 4 KiB
slice arrives at the slice's byte position spread over the run, on the timeline's 101 Hz slots),
never from the page's model. The steps are tests/viewers/report_memrange.mjs."""

from __future__ import annotations

import math
import shutil
from collections import Counter

import pytest
from report_helpers import HOSTILE, START_MS, make_session, vitals_lines

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import ALLOC, CPU, FREE, MEMORY, MODULE, PATH, STRING, Footer
from rokuprof.export import export, input_from_bytes
from rokuprof.export.model import build_input
from rokuprof.export.report.model import build_model, memory_buckets
from rokuprof.export.report.session import write_session_report
from rokuprof.sentry.convert import SLICE_BYTES, OfflineConverter
from rokuprof.simulator.app import AppConfig, SyntheticApp
from tests.viewers import REPO
from tests.viewers.report import model, open_reports, problems, steps_with

ARTIFACTS = REPO / "test-artifacts" / "report"
SAMPLE = REPO / "samples" / "cafe-tv-full.bsprof"
SECONDS = 10
STEPS = 20_000  # 0.5 ms of wall each: a 0.6 MB stream, slices about 70 ms apart
HZ = 101
MAIN, RENDER = "MainThread", "RenderTask"
MAIN_BRS, RENDER_BRS = "pkg:/source/main.brs", "pkg:/components/Render.brs"
#: path id -> (caller path, function, file)
PATHS = {
    1: (0, "main", MAIN_BRS),
    2: (1, "handleKey", MAIN_BRS),
    3: (2, "idleLoop", MAIN_BRS),
    4: (2, "cacheImage", MAIN_BRS),  # the planted leak site
    5: (1, "loadConfig", MAIN_BRS),
    6: (1, "dropConfig", MAIN_BRS),
    7: (1, "prefetch", MAIN_BRS),
    8: (7, "cacheImage", MAIN_BRS),  # the same function, balanced
    9: (0, "renderRoot", RENDER_BRS),
    10: (9, HOSTILE, RENDER_BRS),
}
LEAK = (0.4, 0.6)  # cacheImage leaks over this share of the steps (and of the run)
LEAK_SIZE, CONFIG_SIZE, PREFETCH_SIZE, HOSTILE_SIZE = 100, 32, 256, 48
#: ranges the test picks (seconds); the leak range holds the whole leak, well inside
RANGES = {"leak": (3.0, 7.0), "later": (7.5, 9.8), "config": (0.5, 3.5)}
DRAG = (3.2, 6.8)  # the range dragged with the mouse
VITALS = [(t / 4, (t * 13) % 97, 3_000_000 + 7_000 * t) for t in range(4 * SECONDS)]
SAMPLE_RANGE = (15.0, 40.0)  # of cafe-tv-full's 45 s


def share(i: int) -> float:
    return i / STEPS


LEAK_BLOCKS = sum(LEAK[0] <= share(i) < LEAK[1] for i in range(STEPS))  # 4,000


def planted() -> tuple[bytes, list[tuple[int, tuple]], int]:
    """The stream, its memory operations as ``(end offset in the stream, entry)``, and the
    header's size."""
    header = build_header(
        SyntheticApp(AppConfig(seed=3, line_data=False, memory_ops=True)).header(START_MS)
    )
    names = sorted({f for _, f, _ in PATHS.values()} | {MAIN_BRS, RENDER_BRS, MAIN, RENDER})
    sid = {name: i + 1 for i, name in enumerate(names)}
    entries: list = [(STRING, i, name) for name, i in sid.items()]
    entries += [(MODULE, 1, sid[MAIN]), (MODULE, 2, sid[RENDER])]
    for pid, (caller, function, file) in PATHS.items():
        module = (1 if pid == 1 else 2) if caller == 0 else 0
        entries.append((PATH, pid, caller, module, 0, sid[file], 10 * pid, sid[function]))
    address = iter(range(0x10000, 0x10000000, 0x100))
    config: list[int] = []
    hostile: list[int] = []
    for i in range(STEPS):
        at = share(i) * SECONDS
        work = 4 if LEAK[0] <= share(i) < LEAK[1] else 3
        entries += [(CPU, work, 0, 40, 400), (CPU, 10, 0, 20, 500), (CPU, 7, 0, 5, 100)]
        block = next(address)  # prefetch > cacheImage: allocated and freed at once
        entries += [(MEMORY, 8, ALLOC, 0, block, PREFETCH_SIZE), (MEMORY, 8, FREE, 0, block, 0)]
        if work == 4:
            entries.append((MEMORY, 4, ALLOC, 0, next(address), LEAK_SIZE))
        if 1 <= at < 3:
            config.append(next(address))
            entries.append((MEMORY, 5, ALLOC, 0, config[-1], CONFIG_SIZE))
        if 7 <= at < 9 and config:
            entries.append((MEMORY, 6, FREE, 0, config.pop(0), 0))
        if i % 10 == 0:
            hostile.append(next(address))
            entries.append((MEMORY, 10, ALLOC, 0, hostile[-1], HOSTILE_SIZE))
        if i % 10 == 5 and len(hostile) > 1:
            entries.append((MEMORY, 10, FREE, 0, hostile.pop(0), 0))
    body = bytearray(header)
    ops = []
    for e in entries:
        body += encode_entries([e], False)
        if e[0] == MEMORY:
            ops.append((len(body), e))
    data = bytes(body) + END_MARKER + build_footer(Footer(START_MS + SECONDS * 1000))
    return data, ops, len(header)


def op_slots(data: bytes, ops: list, header_size: int) -> list[tuple[int, tuple]]:
    """Each memory operation's slot by the converter's rule (see the module docstring): the end
    of the 4 KiB slice that completes it, as a share of the body, over the run's 10 s."""
    out = []
    for end, e in ops:
        cut = min(len(data), math.ceil(end / SLICE_BYTES) * SLICE_BYTES)
        seconds = SECONDS * (cut - header_size) / (len(data) - header_size)
        out.append((math.floor(seconds * HZ + 1e-6), e))
    return out


def expected(slots: list, a: int, b: int) -> dict[int, Counter]:
    """Per path: allocations, bytes, frees and freed bytes of the operations in the slots
    (a, b], each free as big as its block."""
    sizes = {e[4]: e[5] for _, e in slots if e[2] == ALLOC}
    out: dict[int, Counter] = {}
    for slot, (_, pid, op, _, address, size) in slots:
        if not a < slot <= b:
            continue
        c = out.setdefault(pid, Counter())
        if op == ALLOC:
            c["allocCount"] += 1
            c["allocBytes"] += size
        else:
            c["frees"] += 1
            c["freedBytes"] += sizes[address]
    return out


def function_of(pid: int) -> str:
    return PATHS[pid][1]


# ---------------------------------------------------------------- the page


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    directory = tmp_path_factory.mktemp("memrange")
    data, ops, header_size = planted()
    session = make_session(directory / "planted", data, vitals=vitals_lines(VITALS))
    report = write_session_report(session)
    sample = directory / "cafe-tv-full.html"
    sample.write_bytes(export(input_from_bytes(SAMPLE.read_bytes()), "report"))
    params = {
        "report": {
            "ranges": {**RANGES, "drag": DRAG},
            "drag": "drag",
            "leakRange": "leak",
            "leakFn": "cacheImage",
        },
        # the sample's largest leak site, and a picture of 25 s of it (README)
        sample.stem: {"ranges": {"middle": SAMPLE_RANGE}, "leakRange": "middle", "shot": True},
    }
    steps = steps_with(directory, "report_memrange.mjs", params)
    result, sample_result = open_reports([report, sample], steps=steps, shots=directory)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sample_result["shots"], ARTIFACTS / "memory-range.png")
    return {
        "sample": sample_result,
        "result": result,
        "steps": result["steps"],
        "model": model(report.read_text()),
        "slots": op_slots(data, ops, header_size),
        "ops": ops,
        "data": data,
    }


def path_ids(m: dict) -> list[int]:
    """The page's path index -> the .bsprof path ID."""
    return m["paths"]["id"]


def growth_by_path(page, look: dict) -> dict[int, dict]:
    ids = path_ids(page["model"])
    return {ids[int(r["attrs"]["path"])]: r for r in look["paths"]["rows"]}


def growth_by_function(look: dict) -> dict[str, dict]:
    return {r["function"]: r for r in look["functions"]["rows"]}


def check_range(page, look: dict) -> dict[int, Counter]:
    """The growth tables and totals of a range equal the operations in it, as the capture has
    them; returns those."""
    a, b = look["range"] if look["range"] else (0, 10**9)
    want = expected(page["slots"], a, b) if look["range"] else expected(page["slots"], -1, b)
    got = growth_by_path(page, look)
    assert set(got) == set(want), (look["range"], set(got), set(want))
    for pid, c in want.items():
        row = got[pid]
        assert row["allocBytes"]["value"] == c["allocBytes"], pid
        assert row["allocCount"]["value"] == c["allocCount"], pid
        assert row["freedBytes"]["value"] == c["freedBytes"], pid
        assert row["frees"]["value"] == c["frees"], pid
        assert row["net"]["value"] == c["allocBytes"] - c["freedBytes"], pid
        assert row["fn"] == function_of(pid)
    per_fn: dict[str, Counter] = {}
    for pid, c in want.items():
        per_fn.setdefault(function_of(pid), Counter()).update(c)
    fns = growth_by_function(look)
    assert set(fns) == set(per_fn)
    for name, c in per_fn.items():
        assert fns[name]["net"]["value"] == c["allocBytes"] - c["freedBytes"], name
        assert fns[name]["allocCount"]["value"] == c["allocCount"], name
        assert fns[name]["frees"]["value"] == c["frees"], name
    g = look["growth"]
    assert g["alloc"] == sum(c["allocBytes"] for c in want.values())
    assert g["freed"] == sum(c["freedBytes"] for c in want.values())
    assert g["net"] == g["alloc"] - g["freed"]
    # the allocation flame graph of the range: sized by the bytes allocated in it
    assert look["flame"]["total"] == g["alloc"]
    return want


def test_page_loads_cleanly_and_every_interaction_runs(page):
    for result in (page["result"], page["sample"]):
        assert problems(result) == []
        assert len(result["requests"]) == 1 and result["scripts"] == 2
        assert result["steps"]["elements"] == 0
        times = {k: v for k, v in result["ms"].items() if not k.endswith("RoundTrip")}
        assert {"tab", "showPath", "crumb", "clear"} <= set(times)
        # each ran to the end of its layout (timed in the page; how fast is
        # benchmarks/report.py's figure, not a bound on a shared machine's clock)
        assert all(ms >= 0 for ms in times.values()), result["ms"]
    sample = page["sample"]["steps"]
    assert sample["shown"]["flame"]["zoom"] == sample["leakNode"] >= 0
    assert sample["ranges"]["middle"]["growth"]["alloc"] > 0
    shot = ARTIFACTS / "memory-range.png"
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:4] == b"\x89PNG"


def test_the_planted_leak_is_the_growth_of_its_window(page):
    """In a range around 4-6 s, cacheImage's leak path grew by every block it allocated (known
    by construction), and so did cacheImage as a function (its balanced path adds nothing);
    every other figure equals the operations of the range."""
    look = page["steps"]["ranges"]["leak"]
    want = check_range(page, look)
    leak_blocks = LEAK_BLOCKS
    assert want[4] == Counter(allocCount=leak_blocks, allocBytes=leak_blocks * LEAK_SIZE)
    leak = growth_by_path(page, look)[4]
    assert leak["net"]["value"] == leak_blocks * LEAK_SIZE
    assert leak["path"].startswith("main:") and leak["path"].endswith("cacheImage:40")
    # the rows are ordered by net growth: the leak tops them
    assert look["paths"]["rows"][0] is not None
    assert path_ids(page["model"])[int(look["paths"]["rows"][0]["attrs"]["path"])] == 4
    fn = growth_by_function(look)["cacheImage"]
    balanced = want[8]["allocBytes"] - want[8]["freedBytes"]  # a block freed across the edge
    assert abs(balanced) <= PREFETCH_SIZE
    assert fn["net"]["value"] == leak_blocks * LEAK_SIZE + balanced
    assert fn["allocCount"]["value"] == leak_blocks + want[8]["allocCount"]
    # its window: the buckets inside the range, said in the page
    g = look["growth"]
    a, b = look["range"]
    assert g["from"] <= a < g["to"] <= b and g["buckets"] > 40
    assert "steps about" in g["resolution"] and "snaps to them" in g["resolution"]


def test_a_range_without_the_leak_shows_no_growth_for_it(page):
    later = page["steps"]["ranges"]["later"]
    check_range(page, later)
    assert 4 not in growth_by_path(page, later)
    fn = growth_by_function(later)["cacheImage"]  # its balanced path only
    assert abs(fn["net"]["value"]) <= PREFETCH_SIZE and fn["allocCount"]["value"] > 0
    # frees elsewhere: dropConfig frees what loadConfig allocated, on its own call path
    drop = growth_by_path(page, later)[6]
    assert drop["net"]["value"] < 0 and drop["allocCount"]["value"] == 0
    config = page["steps"]["ranges"]["config"]
    check_range(page, config)
    assert growth_by_path(page, config)[5]["net"]["value"] > 0
    assert 6 not in growth_by_path(page, config)


def test_the_whole_run_and_a_dragged_range(page):
    whole = page["steps"]["whole"]
    assert whole["range"] is None and whole["growth"]["heading"].endswith("the whole run")
    check_range(page, whole)
    # the whole run's figures are the tables' (inspect's): the sum of every path
    inp = input_from_bytes(page["data"])
    assert whole["growth"]["alloc"] == sum(p.alloc_bytes for p in inp.paths)
    dragged = page["steps"]["dragged"]
    a, b = dragged["range"]
    assert abs(a / HZ - DRAG[0]) < 0.1 and abs(b / HZ - DRAG[1]) < 0.1
    check_range(page, dragged)
    assert growth_by_path(page, dragged)[4]["net"]["value"] > 0
    cleared = page["steps"]["cleared"]
    assert cleared["range"] is None and cleared["growth"] == whole["growth"]


def test_a_leak_site_shows_its_call_path(page):
    steps = page["steps"]
    m = page["model"]
    node = steps["leakNode"]
    ids = path_ids(m)
    assert ids[m["paths"]["node"].index(node)] == 4  # the leak's call path
    shown = steps["shown"]
    flame = shown["flame"]
    assert flame["zoom"] == node and flame["chain"][-1] == node
    assert [c["text"] for c in shown["growth"]["crumbs"]] == [
        "all threads",
        MAIN,
        "main",
        "handleKey",
        "cacheImage",
    ]
    leak_blocks = LEAK_BLOCKS
    assert flame["total"] == leak_blocks * LEAK_SIZE  # its allocations in the range
    assert "cacheImage" in shown["growth"]["flameNote"]
    # back out through the first crumb: the whole range's flame graph again
    assert steps["backOut"]["zoom"] == -1
    assert steps["backOut"]["total"] == shown["growth"]["alloc"]


def test_the_hostile_name_is_text(page):
    look = page["steps"]["ranges"]["leak"]
    rows = growth_by_path(page, look)
    assert rows[10]["fn"] == HOSTILE
    assert HOSTILE in rows[10]["path"]
    assert growth_by_function(look)[HOSTILE]["net"]["value"] == rows[10]["net"]["value"]
    leaks = {r["fn"]: r for r in page["steps"]["whole"]["leaks"]["rows"]}
    assert leaks[HOSTILE]["liveBytes"]["value"] == HOSTILE_SIZE
    assert page["steps"]["elements"] == 0


def test_vitals_follow_the_range(page):
    """Item 6: the device's CPU and memory in the selected range, lowest, mean and highest of
    the readings in it; hidden for the whole run."""
    assert page["steps"]["whole"]["vitals"]["hidden"] is True
    for name in ("leak", "later"):
        look = page["steps"]["ranges"][name]
        a, b = (x / HZ for x in look["range"])
        inside = [(cpu, mem) for t, cpu, mem in VITALS if a <= t <= b]
        assert look["vitals"]["hidden"] is False
        got = {s["series"]: s for s in look["vitals"]["series"]}
        for key, values in (("cpu", [c for c, _ in inside]), ("mem", [m for _, m in inside])):
            assert got[key]["count"] == len(values)
            assert got[key]["min"] == min(values) and got[key]["max"] == max(values)
            assert got[key]["mean"] == pytest.approx(sum(values) / len(values))


# ---------------------------------------------------------------- the model


def test_memory_buckets_add_up_to_the_tables_and_stay_bounded():
    """Per call path the buckets add up to the tables' counters; past the row budget neighbouring
    buckets merge (same sums, fewer buckets, counted)."""
    data, ops, header_size = planted()
    inp = input_from_bytes(data)
    m = build_model(inp)
    mem = m["timeline"]["memory"]
    flat, sums = mem["flat"], Counter()
    i = 0
    slots = []
    slot = 0
    for _ in range(mem["buckets"]):
        slot += flat[i]
        slots.append(slot)
        k, i, p = flat[i + 1], i + 2, 0
        for _ in range(k):
            p += flat[i]
            sums[(p, "allocBytes")] += flat[i + 2]
            sums[(p, "freedBytes")] += flat[i + 5]
            i += 6
    assert i == len(flat) and slots == sorted(slots)
    for p, path in enumerate(inp.paths):
        stats = inp.reader.tables.stats(path.id)
        assert sums[(p, "allocBytes")] == path.alloc_bytes
        assert sums[(p, "freedBytes")] == stats.freed_bytes
    # the same operations, on the slots the test's own rule gives them
    by_slot = Counter()
    for s, e in op_slots(data, ops, header_size):
        by_slot[s] += e[5] if e[2] == ALLOC else 0
    assert set(by_slot) <= set(slots)
    index = {p.id: n for n, p in enumerate(inp.paths)}
    coarse = memory_buckets(inp.timeline.memory, index, max_rows=100)
    assert coarse["merged"] > 0 and coarse["buckets"] < mem["buckets"]
    flat, i, total, rows = coarse["flat"], 0, 0, 0
    while i < len(flat):
        k, i = flat[i + 1], i + 2
        total += sum(flat[i + 6 * j + 2] for j in range(k))
        rows, i = rows + k, i + 6 * k
    assert rows <= 100 and total == sum(p.alloc_bytes for p in inp.paths)


def test_the_converter_holds_memory_rows_in_bounded_memory():
    """Past its budget of memory rows the converter merges the rows of neighbouring slices into
    the later one: fewer, wider steps, the same counters per call path, and the same timeline
    and live heap (the slices' wall times, and so the chunks, are as they were)."""
    data, _, _ = planted()
    seen = {}
    for budget in (None, 30):
        converter = OfflineConverter()
        if budget:
            converter.max_memory_entries = budget
        converter.feed(data)
        inp = build_input(converter)
        assert converter._memory_entries <= 2 * (budget or converter._memory_entries)
        total: Counter = Counter()
        for _, ops in inp.timeline.memory:
            for pid, row in ops.items():
                total[(pid, "allocBytes")] += row[1]
                total[(pid, "freedBytes")] += row[4]
        seen[budget] = (len(inp.timeline.memory), total, inp.timeline.runs, inp.timeline.heap)
    (fine, exact, runs, heap), (coarse, same, runs_, heap_) = seen[None], seen[30]
    assert coarse < fine and same == exact
    assert runs_ == runs and heap_ == heap


def test_steps_of_distinct_call_paths_are_not_merged_for_nothing():
    """A hostile stream whose every step allocates on call paths of its own: merging steps makes
    no fewer rows, so the page keeps them at their own times (as large as its paths' columns)."""
    buckets = [(slot, {slot * 10 + k: [1, 16, 0, 0, 0] for k in range(10)}) for slot in range(50)]
    index = {pid: pid for _, ops in buckets for pid in ops}
    kept = memory_buckets(buckets, index, max_rows=100)
    assert kept["merged"] == 0 and kept["buckets"] == 50
    shared = [(slot, {k: [1, 16, 0, 0, 0] for k in range(10)}) for slot in range(50)]
    merged = memory_buckets(shared, {k: k for k in range(10)}, max_rows=100)
    assert merged["merged"] == 3 and merged["buckets"] == 7  # 50 > 25 > 13 > 7 steps of 10 rows
