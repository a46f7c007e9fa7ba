"""speedscope's file format (https://www.speedscope.app/file-format-schema.json).

Per thread (executable module), four profiles:

* ``<thread> — timeline``: ``evented``, in microseconds since the run start: the synthetic 101 Hz
  timeline of the Sentry chunks (a busy sample lasts one period);
* ``<thread> — wall``, ``— cpu``, ``— alloc bytes``: ``sampled``, one sample per call path
  weighted by its exact self wall time, CPU or allocated bytes (paths with 0 are left out).

Frames: ``name`` = function, ``file``, ``line`` = definition line (left out when unknown). No
``null`` anywhere (the schema rejects it). A function or file name longer than
:data:`~rokuprof.export.names.NAME_LIMIT` characters is cut with an ellipsis where speedscope
draws it; the whole text is in the top-level ``wholeNames`` list (each text once; speedscope
ignores the field), and the frame says where: ``wholeName`` / ``wholeFile``, an index into it.

The file is written as it is built (no object graph of the whole document), so its cost is
linear in the call paths and the timeline's frame events, whatever the names' lengths.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

from rokuprof import __version__
from rokuprof.export.model import ExportInput
from rokuprof.export.names import JsonWriter, drawn, dumps, is_cut
from rokuprof.export.walk import OPEN, frame_events, slot_us

SCHEMA = "https://www.speedscope.app/file-format-schema.json"
SEPARATOR = " — "

#: (profile name suffix, CallPath attribute, unit or None for the wall unit)
WEIGHTED = (("wall", "wall", None), ("cpu", "cpu", "none"), ("alloc bytes", "alloc_bytes", "bytes"))

_EMPTY = {
    "type": "sampled",
    "name": "no data",
    "unit": "none",
    "startValue": 0,
    "endValue": 0,
    "samples": [],
    "weights": [],
}


def _frames(out: JsonWriter, inp: ExportInput) -> Generator[bytes, None, list[str]]:
    """Write the frame table (yielding the blocks that fill); return the whole names that
    were cut (each once)."""
    whole: dict[str, int] = {}
    for i, f in enumerate(inp.frames):
        frame: dict[str, object] = {"name": drawn(f.function), "file": drawn(f.file)}
        if f.line:
            frame["line"] = f.line
        for text, field in ((f.function, "wholeName"), (f.file, "wholeFile")):
            if is_cut(text):
                frame[field] = whole.setdefault(text, len(whole))
        out.raw(("," if i else "") + dumps(frame))
        if out.ready:
            yield from out.take()
    return list(whole)


def _timeline(
    out: JsonWriter, inp: ExportInput, thread: int, name: str, comma: str
) -> Generator[bytes, None, bool]:
    """Write the thread's evented profile (after ``comma``); False when the thread has no
    samples (then nothing is written)."""
    timeline = inp.timeline
    events = frame_events(timeline, thread)
    first = next(events, None)
    if first is None:
        return False
    head = {"type": "evented", "name": f"{name}{SEPARATOR}timeline", "unit": "microseconds"}
    out.raw(comma + dumps(head)[:-1] + ',"events":[')
    start = at = slot_us(timeline, first[2])
    out.raw(f'{{"type":"{first[0]}","frame":{first[1]},"at":{at}}}')
    for kind, frame, slot, _ in events:
        at = slot_us(timeline, slot)
        if kind == OPEN:
            start = min(start, at)
        out.raw(f',{{"type":"{kind}","frame":{frame},"at":{at}}}')
        if out.ready:
            yield from out.take()
    out.raw(f'],"startValue":{start},"endValue":{at}}}')
    return True


def _sampled(
    out: JsonWriter, inp: ExportInput, paths: list, name: str, comma: str
) -> Generator[bytes, None, bool]:
    """Write one sampled profile per :data:`WEIGHTED` kind that has a weight (after ``comma``
    for the first, between the others); False when none has."""
    written = False
    for label, attr, unit in WEIGHTED:
        kept = [p for p in paths if getattr(p, attr)]
        if not kept:
            continue
        head = {
            "type": "sampled",
            "name": f"{name}{SEPARATOR}{label}",
            "unit": unit or inp.run.wall_unit_name,
            "startValue": 0,
            "endValue": sum(getattr(p, attr) for p in kept),
        }
        out.raw(("," if written else comma) + dumps(head)[:-1] + ',"samples":[')
        for i, p in enumerate(kept):
            out.raw(("," if i else "") + "[" + ",".join(map(str, reversed(p.frames))) + "]")
            if out.ready:
                yield from out.take()
        out.raw('],"weights":[' + ",".join(str(getattr(p, attr)) for p in kept) + "]}")
        written = True
    return written


def export(inp: ExportInput) -> bytes:
    """The speedscope file (see the module docstring), as UTF-8 bytes."""
    return b"".join(pieces(inp))


def pieces(inp: ExportInput) -> Iterator[bytes]:
    """The speedscope file in blocks of UTF-8, each yielded as soon as it is encoded."""
    out = JsonWriter()
    out.raw(f'{{"$schema":"{SCHEMA}","shared":{{"frames":[')
    whole = yield from _frames(out, inp)
    out.raw(']},"profiles":[')
    by_thread: dict[int, list] = {t: [] for t in inp.thread_order()}
    for p in inp.paths:
        by_thread[p.thread].append(p)
    written = False
    for thread in inp.thread_order():
        name = drawn(inp.threads[thread])
        wrote = yield from _timeline(out, inp, thread, name, "," if written else "")
        written = wrote or written
        wrote = yield from _sampled(out, inp, by_thread[thread], name, "," if written else "")
        written = wrote or written
    if not written:  # nothing was decoded: one empty profile keeps the file importable
        out.value(_EMPTY)
    tail = {"name": _title(inp), "activeProfileIndex": 0, "exporter": f"rokuprof {__version__}"}
    out.raw("]," + dumps(tail)[1:-1])
    if whole:
        out.raw(',"wholeNames":' + dumps(whole))
    out.raw("}")
    yield from out.close()


def _title(inp: ExportInput) -> str:
    app = inp.run.app or "BrightScript profile"
    return f"{app} {inp.run.app_version}".strip() if inp.run.app_version else app
