"""``.cpuprofile``: the CDP ``Profiler.Profile`` object VS Code's profile editor, Node's
``--cpu-prof`` and DevTools read, one file per thread (issue 28 item 5). Checked on generated
streams with what those readers count on (``export_checks.check_cdp_profile``), on a capture
whose threads a device named to escape the output directory, and as ``rokuprof export`` writes
it. (The real readers: test_viewer_cpuprofile.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from export_checks import check_cdp_profile
from hypothesis import HealthCheck, given, settings
from strategies import streams

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import CPU, MODULE, PATH, STRING, Footer
from rokuprof.export import export, export_parts, input_from_bytes
from rokuprof.export.model import IDLE
from rokuprof.simulator.app import AppConfig, SyntheticApp

ROOT = Path(__file__).resolve().parent.parent
SAFE = re.compile(r"[A-Za-z0-9_-]+")
PART_LIMIT = 64  # the most characters of a thread's name in a file name


def export_process(*args: str) -> subprocess.CompletedProcess:
    """``rokuprof export ARGS`` as a process."""
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", "export", *args],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=60,
        check=False,
    )


def check_files(inp) -> None:
    """Every thread has its file; each is a CDP profile whose busy samples are the thread's
    timeline, in order, and whose nodes name the timeline's frames."""
    files = export_parts(inp, "cpuprofile")
    assert len(files) == len(inp.threads)
    assert all(SAFE.fullmatch(part) for part in files), list(files)
    for thread, data in zip(inp.thread_order(), files.values(), strict=True):
        doc = json.loads(data)
        parent = check_cdp_profile(doc)
        nodes = {n["id"]: n for n in doc["nodes"]}
        busy = []
        for node_id in doc["samples"]:
            names = []
            while node_id != 1:
                names.append(nodes[node_id]["callFrame"]["functionName"])
                node_id = parent[node_id]
            if names != ["(idle)"]:
                busy.append(tuple(names))
        timeline = inp.timeline
        want = [
            tuple(inp.frames[f].function[:256] for f in timeline.stacks[sid])
            for _, sid, n in timeline.runs.get(thread, ())
            if sid != IDLE
            for _ in range(n)
        ]
        assert [tuple(n[:255] for n in b) for b in busy] == [
            tuple(n[:255] for n in w) for w in want
        ]
    assert json.loads(export(inp, "cpuprofile")) == [json.loads(d) for d in files.values()]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(max_actions=60))
def test_generated_streams_give_one_cdp_profile_per_thread(spec):
    """Whatever a stream holds (cut short, times far off, no footer), each thread's file is
    what a ``.cpuprofile`` reader requires: unique ids, children that exist, ``(root)`` first,
    samples naming nodes, a time delta per sample, deltas within the run, hit counts that are
    the samples' (at b17a9e7 the file was one Trace Event array for all threads)."""
    check_files(input_from_bytes(spec.data))


#: Names a device may give its threads: a way out of the output directory, separators, a dot
#: file, controls, two that differ only in case, an empty one, a very long one.
HOSTILE = [
    "../../escaped",
    "a/b\\c",
    ".hidden",
    "main\x1b]0;pwned\x07\r\n",
    "Main",
    "main",
    "",
    "x" * 5000,
]


def hostile_capture(path: Path) -> Path:
    """A complete capture with one busy function in each of :data:`HOSTILE`'s threads."""
    start = 1_700_000_000_000
    header = SyntheticApp(AppConfig(seed=3)).header(start)
    entries: list = [(STRING, 1, "pkg:/source/x.brs"), (STRING, 2, "work")]
    for i, name in enumerate(HOSTILE):
        module, sid, path_id = i + 1, 10 + i, 100 + i
        entries += [(STRING, sid, name), (MODULE, module, sid)]
        entries += [(PATH, path_id, 0, module, 0, 1, 1, 2), (CPU, path_id, 2, 300, 200_000)]
    body = encode_entries(entries, True)
    path.write_bytes(build_header(header) + body + END_MARKER + build_footer(Footer(start + 2000)))
    return path


def test_thread_names_never_make_a_path_outside_the_output_directory(tmp_path):
    """``rokuprof export -f cpuprofile -o DIR/`` as a process: a file per thread, all in DIR,
    each named ``<stem>.<part>.cpuprofile`` with a part of letters, digits, ``_`` and ``-`` at
    most 64 long, no two the same (even where case does not count), each a CDP profile."""
    capture = hostile_capture(tmp_path / "run.bsprof")
    out = tmp_path / "deep" / "out"
    out.mkdir(parents=True)
    done = export_process(str(capture), "-f", "cpuprofile", "-o", f"{out}/")
    assert done.returncode == 0, done.stderr.decode()
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        ["run.bsprof", *(p.name for p in out.iterdir())]
    )
    files = sorted(out.iterdir())
    assert len(files) == len(HOSTILE)
    parts = [p.name[len("run.") : -len(".cpuprofile")] for p in files]
    assert all(SAFE.fullmatch(part) and len(part) <= PART_LIMIT for part in parts), parts
    assert len({part.lower() for part in parts}) == len(parts)
    busy = 0
    for f in files:
        doc = json.loads(f.read_bytes())
        check_cdp_profile(doc)
        names = {n["callFrame"]["functionName"] for n in doc["nodes"]}
        assert names == {"(root)", "(idle)", "work"}
        busy += sum(1 for s in doc["samples"] if s != 2)
    assert busy > 0
    assert f"cpuprofile: {out / 'run.*.cpuprofile'}" in done.stdout.decode()


def test_a_file_target_names_each_thread_beside_it(tmp_path):
    """``-o x.cpuprofile`` with one format: ``x.<thread>.cpuprofile`` beside it."""
    capture = ROOT / "samples" / "cafe-tv-full.bsprof"
    done = export_process(str(capture), "-f", "cpuprofile", "-o", str(tmp_path / "x.cpuprofile"))
    assert done.returncode == 0, done.stderr.decode()
    inp = input_from_bytes(capture.read_bytes())
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"x.{name}.cpuprofile"
        for name in inp.threads.values()  # names that are safe as such
    )
    refused = export_process(str(capture), "-f", "cpuprofile", "-o", "-")
    assert refused.returncode == 2 and refused.stdout == b""
    assert b"file per thread" in refused.stderr
