"""Exports and the report of hostile streams as a user runs them: ``rokuprof export`` and
``rokuprof report`` as processes, their peak RSS (``VmHWM``, polled) and what they write, on the
worst-case streams of :mod:`rokuprof.simulator.worst_cases` (issue 27, rows 8 to 10, scaled down
so each runs in seconds; ``benchmarks/worst_cases.py --only exports`` takes the full sizes).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest

from rokuprof.export.names import NAME_LIMIT
from rokuprof.export.report.cold import MAX_PATHS, OTHER_FUNCTION
from rokuprof.simulator.worst_cases import deep_chain, long_names, many_paths

REPO = Path(__file__).resolve().parent.parent
MIB = 1 << 20
AS_LIMIT = 3 << 30  # a backstop: the figures asserted are far below it


def _peak_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def rokuprof(
    *args: str, timeout: float = 120, stdout: IO[bytes] | None = None
) -> tuple[subprocess.CompletedProcess, int]:
    """``python -m rokuprof ARGS`` as a process under an address-space cap; its result and its
    peak RSS in bytes (its ``VmHWM``, read every 10 ms until it exits). ``stdout``: a file for
    its standard output (else captured)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rokuprof", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"},
        stdout=stdout or subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_cap,
    )
    peak, deadline = 0, time.monotonic() + timeout
    while proc.poll() is None:
        peak = max(peak, _peak_kib(proc.pid))
        if time.monotonic() > deadline:
            proc.kill()
            break
        time.sleep(0.01)
    out, err = proc.communicate()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
    assert b"Traceback" not in err
    return done, peak * 1024


def test_speedscope_of_a_deep_chain_is_written_as_it_is_built(tmp_path):
    """Row 8: every call path of a 3,000-deep chain has its own folded stack, so the timeline
    has 3,000 x 254 frame events; a dict per event cost 323 MiB at 0e83a1a (90 now)."""
    stream = tmp_path / "deep.bsprof"
    stream.write_bytes(deep_chain(3_000, seconds=61, wall_us=20_000))
    out = tmp_path / "deep.speedscope.json"
    _, peak = rokuprof("export", str(stream), "-f", "speedscope", "-o", str(out))
    assert peak < 160 * MIB, f"{peak / MIB:.0f} MiB"
    doc = json.loads(out.read_bytes())
    (timeline,) = (p for p in doc["profiles"] if p["type"] == "evented")
    # each stack past depth 128 closes and opens its 127 unfolded frames: paths x folded depth
    assert 2 * 127 * (3_000 - 128) <= len(timeline["events"]) <= 2 * 128 * 3_000


def test_speedscope_does_not_grow_with_the_length_of_names(tmp_path):
    """Row 8: 40 function names of 64 KiB over a 1,500-deep chain (1,500 frames). At 0e83a1a
    each frame carried its whole name: 100 MB against 15 MB with 64-character names. Now a
    drawn name has at most NAME_LIMIT characters and the whole names are written once."""
    sizes, docs = {}, {}
    for length in (64, 64 * 1024):
        stream = tmp_path / f"names-{length}.bsprof"
        stream.write_bytes(long_names(names=40, length=length, depth=1_500))
        out = tmp_path / f"names-{length}.speedscope.json"
        rokuprof("export", str(stream), "-f", "speedscope", "-o", str(out))
        sizes[length], docs[length] = out.stat().st_size, json.loads(out.read_bytes())
    doc = docs[64 * 1024]
    frames = doc["shared"]["frames"]
    assert sizes[64 * 1024] <= sizes[64] + 40 * 64 * 1024 + len(frames) * NAME_LIMIT * 4
    whole = doc["wholeNames"]
    assert len(whole) == 40 and all(len(name) == 64 * 1024 for name in whole)
    assert all(len(f["name"]) <= NAME_LIMIT and len(f["file"]) <= NAME_LIMIT for f in frames)
    cut = [f for f in frames if "wholeName" in f]
    assert len(cut) == 1_500
    for f in cut:  # the drawn name is the start of the whole one
        assert f["name"].endswith("…") and whole[f["wholeName"]].startswith(f["name"][:-1])


def test_report_of_very_many_call_paths_adds_up_the_cold_ones(tmp_path):
    """Row 9 (scaled: 60,000 paths where the issue has 1,000,000): every path is cold, so the
    page has one '[other call paths]' node per thread holding all of their time and samples,
    and says so. At 0e83a1a the page carried every path: 2.5 MB here, 109 MB for a million."""
    paths = 60_000
    assert paths > MAX_PATHS
    stream = tmp_path / "many.bsprof"
    stream.write_bytes(many_paths(paths, seconds=paths * 0.02, modules=4))
    page = tmp_path / "many.html"
    _, peak = rokuprof("report", str(stream), "-o", str(page))
    html = page.read_text("utf-8")
    assert len(html) < 400_000, len(html)
    assert peak < 1024 * MIB
    start = html.index('type="application/json">') + len('type="application/json">')
    model = json.loads(html[start : html.index("</script>", start)])
    assert model["other"]["paths"] == paths and "other call paths" in model["other"]["note"]
    strings, fns = model["strings"], model["functions"]
    others = [i for i, name in enumerate(fns["name"]) if strings[name] == OTHER_FUNCTION]
    assert len(others) == 4
    cols = model["paths"]
    assert sum(cols["wall"]) == model["totals"]["wall"] == paths * 20_000
    assert sum(cols["calls"]) == paths
    # the timeline's samples all land on the four "other" nodes
    other_nodes = {n for n, fn in enumerate(model["nodes"]["fn"]) if fn in others}
    for _, flat in model["timeline"]["lanes"]:
        assert {flat[i + 1] for i in range(0, len(flat), 3)} <= other_nodes


def test_speedscope_of_very_many_call_paths_builds_no_event_objects(tmp_path):
    """Row 9: 60,000 call paths each with its own stack; 193 MiB at 0e83a1a, 143 now (the
    input, laid out, is most of it)."""
    stream = tmp_path / "many.bsprof"
    stream.write_bytes(many_paths(60_000, seconds=1_200, modules=4))
    out = tmp_path / "many.speedscope.json"
    _, peak = rokuprof("export", str(stream), "-f", "speedscope", "-o", str(out))
    assert peak < 175 * MIB, f"{peak / MIB:.0f} MiB"
    doc = json.loads(out.read_bytes())
    sampled = [p for p in doc["profiles"] if p["name"].endswith(" — wall")]
    assert sum(len(p["samples"]) for p in sampled) == 60_000


@pytest.mark.parametrize("depth", [5_000])
def test_report_of_a_deep_chain_of_distinct_functions(tmp_path, depth):
    """Row 10: a chain whose functions all differ has call paths x folded depth nodes (635,000
    here): 167 MiB at 0e83a1a, 114 MiB now (a node is array items, not objects)."""
    stream = tmp_path / "distinct.bsprof"
    stream.write_bytes(long_names(names=depth, length=24, depth=depth))
    page = tmp_path / "distinct.html"
    _, peak = rokuprof("report", str(stream), "-o", str(page))
    assert peak < 140 * MIB, f"{peak / MIB:.0f} MiB"
    html = page.read_text("utf-8")
    start = html.index('type="application/json">') + len('type="application/json">')
    model = json.loads(html[start : html.index("</script>", start)])
    nodes = len(model["nodes"]["parent"])
    assert 127 * (depth - 128) < nodes < 128 * depth + 10


def test_timeline_exports_do_not_grow_with_the_length_of_names(tmp_path):
    """Row 8, the other formats that write a name per event, node or stack line: past
    NAME_LIMIT a longer name changes no byte of the Trace Event, .cpuprofile, nflxprofile or
    folded file (at 0e83a1a, 4 KiB names instead of 1 KiB ones made each several times larger)."""
    formats = {"chrome-trace": ".trace.json", "cpuprofile": ".cpuprofile"}
    formats |= {"nflxprofile": ".nflxprofile", "folded": ".folded"}
    sizes = {}
    for length in (1024, 4096):
        stream = tmp_path / f"names-{length}.bsprof"
        stream.write_bytes(long_names(names=40, length=length, depth=600))
        out = tmp_path / f"out-{length}"
        rokuprof("export", str(stream), "-f", ",".join(formats), "-o", f"{out}/")
        sizes[length] = {  # .cpuprofile: a file per thread, names-<length>.<thread>.cpuprofile
            f: sum(p.stat().st_size for p in out.glob(f"names-{length}*{s}"))
            for f, s in formats.items()
        }
        assert len(list(out.glob("*.cpuprofile"))) >= 1
    assert sizes[1024] == sizes[4096]


def test_trace_event_export_of_a_deep_chain_builds_no_event_objects(tmp_path):
    """Row 8's mechanism in the Trace Event export: a dict per slice end and begin cost 656 MiB
    for a 3,000-deep chain at 0e83a1a (166 now)."""
    stream = tmp_path / "deep.bsprof"
    stream.write_bytes(deep_chain(3_000, seconds=61, wall_us=20_000))
    out = tmp_path / "deep.trace.json"
    _, peak = rokuprof("export", str(stream), "-f", "chrome-trace", "-o", str(out))
    assert peak < 250 * MIB, f"{peak / MIB:.0f} MiB"
    events = json.loads(out.read_bytes())
    begins = sum(1 for e in events if e["ph"] == "B")
    assert begins == sum(1 for e in events if e["ph"] == "E") >= 127 * (3_000 - 128)


@pytest.mark.parametrize(
    ("stream", "most"),
    [
        (lambda: deep_chain(3_000, seconds=61, wall_us=20_000), 160),
        (lambda: many_paths(60_000, seconds=1_200, modules=4), 200),
    ],
    ids=["deep-chain-3000", "many-paths-60000"],
)
def test_cpuprofile_of_hostile_streams_is_written_as_it_is_built(tmp_path, stream, most):
    """The CDP profile per thread (issue 28) is written in blocks as its nodes and samples are
    walked: the process peaks where the speedscope and Trace Event exports of the same streams
    do (99 and 142 MiB here; the input, laid out, is most of it), and each file is a whole
    profile whose samples are the thread's timeline."""
    path = tmp_path / "hostile.bsprof"
    path.write_bytes(stream())
    out = tmp_path / "out"
    _, peak = rokuprof("export", str(path), "-f", "cpuprofile", "-o", f"{out}/")
    assert peak < most * MIB, f"{peak / MIB:.0f} MiB"
    files = sorted(out.glob("hostile.*.cpuprofile"))
    assert files
    total = 0
    for f in files:
        doc = json.loads(f.read_bytes())
        assert len(doc["samples"]) == len(doc["timeDeltas"])
        assert doc["startTime"] + sum(doc["timeDeltas"]) == doc["endTime"]
        total += sum(1 for s in doc["samples"] if s != 2)  # node 2 is (idle)
    assert total > 0


@pytest.mark.parametrize("to", ["file", "stdout"])
def test_speedscope_far_larger_than_the_memory_it_may_use_is_streamed_to_its_file(tmp_path, to):
    """Row 8's file itself: a 12,000-deep chain (a 0.2 MB stream) makes a speedscope file of
    125 MiB. It is written to ``.tmp`` block by block as it is made and renamed when whole (or
    to standard output as it is made, ``-o -``), so the process stays far below the file's size
    (0e83a1a: 1,155 MiB; be62009, the file held whole before it was written: 212 MiB; now
    86 MiB, of which 45 are the interpreter)."""
    stream = tmp_path / "deep.bsprof"
    stream.write_bytes(deep_chain(12_000, seconds=12_000 * 0.02 + 1, wall_us=20_000))
    out = tmp_path / "deep.speedscope.json"
    if to == "file":
        done, peak = rokuprof("export", str(stream), "-f", "speedscope", "-o", str(out))
        assert f"({out.stat().st_size:,} bytes)".encode() in done.stdout
    else:
        with out.open("wb") as f:
            _, peak = rokuprof("export", str(stream), "-f", "speedscope", "-o", "-", stdout=f)
    size = out.stat().st_size
    assert size > 120 * MIB, f"{size / MIB:.0f} MiB"
    assert peak < 110 * MIB, f"{peak / MIB:.0f} MiB for a file of {size / MIB:.0f} MiB"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep.bsprof", out.name]  # no .tmp
    with out.open("rb") as f:
        assert f.read(12) == b'{"$schema":"'
        f.seek(-1, os.SEEK_END)
        assert f.read() == b"}"
