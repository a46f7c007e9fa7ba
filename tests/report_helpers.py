"""Inputs and a runner for the ``rokuprof report`` tests (test_report, test_report_browser) and
others that want a synthetic capture: streams from the simulated app, a hostile deep one, the
allocations per source line straight from the decoded entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from rokuprof.bsprof.decoder import Decoder
from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import ALLOC, CPU, MEMORY, PATH, STRING, Footer
from rokuprof.simulator.app import AppConfig, SyntheticApp

START_MS = 1_700_000_000_000
HOSTILE = "</script><script>alert(1)</script>\u2028<!--"


def stream(seconds: float, **config) -> bytes:
    """``seconds`` of the simulated app (seed 3), complete with its footer."""
    app = SyntheticApp(AppConfig(seed=3, **config))
    header = app.header(START_MS)
    data = build_header(header) + encode_entries(app.advance(seconds) + app.finish(), True)
    return data + END_MARKER + build_footer(Footer(START_MS + int(seconds * 1000)))


def deep_stream(depth: int) -> bytes:
    """A hostile stream: one call path ``depth`` frames deep (each path one level below the
    previous), with CPU and wall time at every 1000th level and the leaf, allocations left live at
    the leaf, and a shallow sibling so there is more than one branch."""
    header = AppConfig(seed=3, line_data=True, memory_ops=True)
    app_header = SyntheticApp(header).header(START_MS)
    entries: list = [(STRING, 1, "pkg:/source/deep.brs"), (STRING, 2, "main")]
    entries += [(STRING, 3, "recurse"), (STRING, 4, "leaf"), (1, 1, 2)]
    entries.append((PATH, 1, 0, 1, 0, 1, 1, 2))
    for pid in range(2, depth + 1):
        entries.append((PATH, pid, pid - 1, 0, 3, 1, 10, 3 if pid < depth else 4))
    entries.append((PATH, depth + 1, 1, 0, 5, 1, 90, 4))  # the shallow sibling
    for pid in [*range(1000, depth, 1000), depth, depth + 1]:
        entries += [(CPU, pid, 2, 700, 1500), (5, pid, 3)]
    entries += [(MEMORY, depth, ALLOC, 2, 0x1000 + 16 * i, 64) for i in range(5)]
    body = encode_entries(entries, True)
    return build_header(app_header) + body + END_MARKER + build_footer(Footer(START_MS + 2000))


def allocations_per_line(data: bytes) -> Counter:
    """(function, source line) -> allocation count and bytes, straight from the decoded entries:
    the path element's line + the memory operation's line offset - 1."""
    decoder = Decoder()
    entries = decoder.feed(data)
    strings = {e[1]: e[2] for e in entries if e[0] == STRING}
    defs = {e[1]: e for e in entries if e[0] == PATH}
    out: Counter = Counter()
    for e in entries:
        if e[0] == MEMORY and e[2] == ALLOC and e[1] in defs:
            *_, line, function = defs[e[1]]
            key = (strings[function], line + e[3] - 1)
            out[(*key, "count")] += 1
            out[(*key, "bytes")] += e[5]
    return out


def run_cli(
    *args: str, cwd: Path | None = None, env: dict | None = None, stdin: bytes | None = None
):
    """``rokuprof report ARGS`` as a process (at most 120 s)."""
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", "report", *args],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        input=stdin,
        timeout=120,
        check=False,
    )


START = START_MS / 1000  # the run start of stream(): the timeline's origin
HOSTILE_LABEL = '<img src=x onerror="document.title=1">'


def make_session(
    directory: Path,
    capture: bytes,
    *,
    marks: list | None = None,
    vitals: str | None = None,
    record: dict | None = None,
) -> Path:
    """A session directory as a capture leaves it: ``capture.bsprof``, a ``session.json`` with
    ``marks`` (``(label, seconds after START)`` tuples; anything else as it is) and ``record``'s
    fields, and, when given, ``vitals`` as the text of ``vitals.jsonl``."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "capture.bsprof").write_bytes(capture)
    items = [
        {"label": m[0], "time": START + m[1], "offset": m[1]} if isinstance(m, tuple) else m
        for m in marks or []
    ]
    (directory / "session.json").write_text(json.dumps({"marks": items, **(record or {})}))
    if vitals is not None:
        (directory / "vitals.jsonl").write_text(vitals)
    return directory


def vitals_lines(readings: list[tuple[float, object, object]]) -> str:
    """``vitals.jsonl`` text: one line per ``(seconds after START, cpu %, memory bytes)``."""
    return "".join(
        json.dumps({"time": START + t, "cpu_percent": cpu, "mem_bytes": mem}) + "\n"
        for t, cpu, mem in readings
    )
