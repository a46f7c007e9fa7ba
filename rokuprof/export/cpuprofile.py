"""CPU profiles (the Chrome DevTools Protocol's ``Profiler.Profile`` object), one per thread, on
the run's own time axis: the ``.cpuprofile`` that VS Code's profile editor, Node's
``--cpu-prof``, DevTools, speedscope and FlameScope read.

A ``Profiler.Profile`` holds one timeline where a sample lasts until the next, so threads that
ran at the same time cannot share one: each thread (executable module) is a file of its own,
``<stem>.<thread>.cpuprofile`` (:func:`file_parts` makes the thread's name safe in a file name;
the multi-thread timeline is ``chrome-trace``). Each file is::

    {"nodes": [{"id", "callFrame": {"functionName", "scriptId", "url", "lineNumber",
                "columnNumber"}, "hitCount", "children"?}, ...],
     "startTime": <run start, µs since 1970>, "endTime": <run end>,
     "samples": [node id, ...], "timeDeltas": [µs, ...]}

Node 1 is ``(root)``; under it the thread's frames and ``(idle)``. ``lineNumber`` and
``columnNumber`` are 0-based as in CDP (``lineNumber`` = the definition line - 1; the column
is not known: 0), -1 for the nodes that are not code. The samples are the synthetic 101 Hz
timeline of the Sentry chunks (:mod:`rokuprof.export.walk`); an idle sample marks where a busy
run ends, and a last idle sample sits at the run's end, so ``startTime + Σ timeDeltas =
endTime``. A node's ``hitCount`` is the number of samples whose leaf it is.

Bounded: a file is written in blocks as it is made (:class:`~rokuprof.export.names.JsonWriter`),
its samples walked twice (once to count, once to write) rather than held; what is held is the
thread's node tree (at most one node per distinct stack prefix of its timeline).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from rokuprof.export.calltree import CallTree
from rokuprof.export.model import ExportInput
from rokuprof.export.names import JsonWriter, drawn, dumps
from rokuprof.export.walk import samples_in_order, slot_us
from rokuprof.timeline import IDLE

#: The most characters of a thread's name kept in a file name.
FILE_PART_LIMIT = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def file_parts(inp: ExportInput) -> dict[int, str]:
    """Per thread (module ID, in order) the part of its file name: ``<stem>.<part>.cpuprofile``.

    A device names its threads: the part keeps only ``A-Z a-z 0-9 _ -`` (anything else is
    ``_``, so no separator, dot or control character reaches a path), at most
    :data:`FILE_PART_LIMIT` characters, and is unique even where case does not count (a
    repeated part gets ``-<module ID>``)."""
    parts: dict[int, str] = {}
    taken: set[str] = set()
    for thread in inp.thread_order():
        part = _UNSAFE.sub("_", inp.threads[thread][:FILE_PART_LIMIT]) or "thread"
        if part.lower() in taken:
            part = f"{part[: FILE_PART_LIMIT - 12]}-{thread}"
        taken.add(part.lower())
        parts[thread] = part
    return parts


def _origin(inp: ExportInput) -> int:
    return round(inp.run.start * 1_000_000) if inp.run.start is not None else 0


def _walk(inp: ExportInput, thread: int, tree: CallTree) -> Iterator[tuple[int, int]]:
    """``(node id, µs since the run start)`` of every sample of one thread, the last idle one
    at the run's end included; nodes are added to ``tree`` as they are met."""
    timeline = inp.timeline
    last = 0
    any_sample = False
    for slot, sid in samples_in_order(timeline, thread):
        node = tree.idle() if sid == IDLE else tree.leaf(thread, sid)
        last = slot_us(timeline, slot)
        any_sample = True
        yield node, last
    end = _end(inp, last)
    if end > last or not any_sample:
        yield tree.idle(), end


def _end(inp: ExportInput, last: int) -> int:
    run = inp.run
    if run.start is not None and run.end is not None:
        return max(last, round((run.end - run.start) * 1_000_000))
    return last


def _tree(inp: ExportInput, thread: int) -> tuple[CallTree, int]:
    """The thread's node tree with its hit counts, and its last sample's time."""
    tree = CallTree(inp, 1, "(root)", thread_nodes=False)
    tree.idle()
    last = 0
    for node, last in _walk(inp, thread, tree):  # noqa: B007 (the last time is wanted)
        tree.node(node).hits += 1
    return tree, last


def _node_json(inp: ExportInput, node, scripts: dict[str, str]) -> str:
    if node.frame is None:
        frame = {
            "functionName": node.name,
            "scriptId": "0",
            "url": "",
            "lineNumber": -1,
            "columnNumber": -1,
        }
    else:
        f = inp.frames[node.frame]
        known = f.line > 0
        frame = {
            "functionName": node.name,
            "scriptId": scripts.setdefault(f.file, str(len(scripts) + 1)),
            "url": drawn(f.file),
            "lineNumber": f.line - 1 if known else -1,
            "columnNumber": 0 if known else -1,
        }
    entry: dict[str, object] = {"id": node.id, "callFrame": frame, "hitCount": node.hits}
    if node.children:
        entry["children"] = node.children
    return dumps(entry)


def thread_pieces(inp: ExportInput, thread: int) -> Iterator[bytes]:
    """One thread's ``.cpuprofile`` in blocks of UTF-8, each yielded as soon as it is encoded."""
    tree, last = _tree(inp, thread)
    origin = _origin(inp)
    out = JsonWriter()
    out.raw('{"nodes":[')
    scripts: dict[str, str] = {}
    for i, node in enumerate(tree.nodes):
        out.raw(("," if i else "") + _node_json(inp, node, scripts))
        if out.ready:
            yield from out.take()
    del scripts
    out.raw(f'],"startTime":{origin},"endTime":{origin + last},"samples":[')
    first = True
    for node, _ in _walk(inp, thread, tree):  # every node is known: the same ids
        out.raw(str(node) if first else f",{node}")
        first = False
        if out.ready:
            yield from out.take()
    out.raw('],"timeDeltas":[')
    before, first = 0, True
    for _, t in _walk(inp, thread, tree):
        out.raw(str(t - before) if first else f",{t - before}")
        before, first = t, False
        if out.ready:
            yield from out.take()
    out.raw("]}")
    yield from out.close()


def parts(inp: ExportInput) -> dict[str, Iterator[bytes]]:
    """``{file part: the thread's .cpuprofile in pieces}`` (see :func:`file_parts`); a capture
    without threads has no file."""
    return {part: thread_pieces(inp, t) for t, part in file_parts(inp).items()}


def thread_profile(inp: ExportInput, thread: int) -> dict:
    """One thread's ``.cpuprofile`` object (parsed: for tests and small captures)."""
    return json.loads(b"".join(thread_pieces(inp, thread)))


def export(inp: ExportInput) -> dict[str, bytes]:
    """``{file part: the thread's .cpuprofile bytes}``."""
    return {part: b"".join(pieces) for part, pieces in parts(inp).items()}
