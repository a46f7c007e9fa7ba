"""Chrome DevTools' trace engine (npm ``@paulirish/trace_engine``) as a reader of Trace Event JSON
and ``.cpuprofile`` files, through ``trace_engine.mjs``.

The engine never throws on bad events, so "it parsed" proves nothing: ``entry_problems()``
compares the entries it parsed with the events that were written, and ``function_times()`` adds
up what it parsed per function, for comparison with ``inspect``.
"""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from pathlib import Path

from tests.viewers import VIEWERS, need_command, need_npm

SCRIPT = VIEWERS / "trace_engine.mjs"
TIMEOUT_S = 120


def parse(path: Path, cpuprofile: bool = False) -> dict:
    need_command("node", "apt-get install nodejs")
    need_npm("@paulirish/trace_engine")
    command = ["node", str(SCRIPT), str(path)] + (["--cpuprofile"] if cpuprofile else [])
    proc = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert proc.returncode == 0, f"trace_engine.mjs failed: {proc.stderr}"
    return json.loads(proc.stdout)


def _span(name: str, ts, dur, args: dict | None) -> tuple:
    args = args or {}
    return (ts, dur, name, args.get("file"), args.get("line"))


def written_spans(events: list[dict]) -> tuple[dict[int, list[tuple]], list[str]]:
    """{tid: [(ts, dur, name, file, line)]} of the complete (X) events and B/E pairs written
    (an E closes the innermost open B of its thread), and any pairing problems."""
    spans: dict[int, list[tuple]] = defaultdict(list)
    open_: dict[int, list[dict]] = defaultdict(list)
    problems = []
    for e in events:
        ph, tid = e.get("ph"), e.get("tid")
        if ph == "X":
            spans[tid].append(_span(e["name"], e["ts"], e["dur"], e.get("args")))
        elif ph == "B":
            open_[tid].append(e)
        elif ph == "E":
            if not open_[tid]:
                problems.append(f"tid {tid}: E {e.get('name')!r} at {e['ts']} with nothing open")
                continue
            b = open_[tid].pop()
            if e.get("name") != b["name"]:
                problems.append(f"tid {tid}: E {e.get('name')!r} closes B {b['name']!r}")
            spans[tid].append(_span(b["name"], b["ts"], e["ts"] - b["ts"], b.get("args")))
    problems += [f"tid {tid}: {len(bs)} B events never closed" for tid, bs in open_.items() if bs]
    return dict(spans), problems


def entry_problems(written: list[dict], parsed: dict) -> list[str]:
    """Differences between the spans (X events, B/E pairs) and thread names written and the
    entries the engine parsed."""
    names = {
        e["tid"]: e["args"]["name"]
        for e in written
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    mine, problems = written_spans(written)
    theirs = {t["tid"]: t for t in parsed["threads"]}
    for tid in sorted(set(mine) | set(theirs)):
        thread = theirs.get(tid)
        if thread is None:
            problems.append(f"tid {tid}: not parsed")
            continue
        if thread["name"] != names.get(tid):
            problems.append(f"tid {tid}: named {thread['name']!r}, written {names.get(tid)!r}")
        got = sorted(
            (_span(e["name"], e["ts"], e["dur"], e.get("args")) for e in thread["entries"]),
            key=repr,
        )
        want = sorted(mine.get(tid, []), key=repr)
        if got != want:
            missing = len(set(want) - set(got))
            extra = len(set(got) - set(want))
            problems.append(
                f"tid {tid}: {len(got)} entries parsed, {len(want)} written "
                f"({missing} written not parsed, {extra} parsed not written)"
            )
    return problems


def function_times(thread: dict) -> dict[tuple[str, str | None], list[int]]:
    """{(function, file): [self µs, total µs]} from one parsed thread's entries and the engine's
    own nesting (depth); total counts a recursive function's outermost entry only."""
    entries = sorted(thread["entries"], key=lambda e: (e["ts"], e["depth"]))
    out: dict[tuple[str, str | None], list[int]] = defaultdict(lambda: [0, 0])
    stack: list[tuple[dict, tuple]] = []
    for e in entries:
        key = (e["name"], (e.get("args") or {}).get("file"))
        del stack[e["depth"] :]
        assert len(stack) == e["depth"], f"entry at depth {e['depth']} without a parent: {e}"
        if stack:
            out[stack[-1][1]][0] -= e["dur"]
        out[key][0] += e["dur"]
        if all(k != key for _, k in stack):
            out[key][1] += e["dur"]
        stack.append((e, key))
    return dict(out)
