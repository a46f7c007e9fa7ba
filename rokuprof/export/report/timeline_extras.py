"""A session's marks and device vitals for the report's timeline (pure: no I/O, no clock).

A session directory may hold, beside its capture, named moments (``session.json`` ``"marks"``:
``{"label", "time", "offset"}`` each) and the app's CPU % and memory once a second
(``vitals.jsonl``: one ``{"time", "cpu_percent", "mem_bytes"}`` a line). Both come from a
capture that may have been cut off, or from a file someone edited, so everything is checked:
a line that is not JSON (a torn last line too), a value of the wrong type, a time that is not a
finite number or lies outside the run is skipped and counted, and the counts become one note
for the page. What the page embeds is bounded: at most :data:`MAX_MARKS` marks and
:data:`MAX_POINTS` points per series (more readings: per time bucket the lowest and the highest,
so every peak stays). Times become seconds since the timeline's origin (the run's start)::

    vitals = VitalsReader(origin, span)
    for line in lines:                      # bytes, one line each (the I/O shell reads them)
        vitals.feed(line)
    extras = timeline_extras(record, vitals, origin, span)
    model["session"] = extras               # None: nothing to draw and nothing to say
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

#: Points per vitals series the page embeds at most (peaks kept).
MAX_POINTS = 3000
#: Marks the page draws at most (the first in time).
MAX_MARKS = 1000
#: Characters of a mark's label kept (the capture keeps 200).
MAX_LABEL = 200
#: Bytes of a ``vitals.jsonl`` line read at most (a reading is about 70).
MAX_LINE = 4096
#: Lines of ``vitals.jsonl`` read at most: eight weeks of readings once a second (a few seconds'
#: work); the rest of a longer file is not drawn (said in the note).
MAX_LINES = 5_000_000
#: A time this close outside the run (seconds) is still drawn, at the run's edge: the vitals and
#: marks are timed by the host's clock, the run by the device's.
GRACE_S = 1.0
#: The largest number taken (a time, a percentage, bytes): larger ones, and integers too large
#: for a float, are not readings.
MAX_NUMBER = float(2**63)

_decode = json.JSONDecoder().decode


def _number(value: object) -> bool:
    """A JSON number (``bool`` is an ``int`` subclass: not one)."""
    kind = type(value)
    return kind is int or kind is float


def _finite(value: object) -> float | None:
    """``value`` as a float when it is a JSON number (not a bool) within ±:data:`MAX_NUMBER`."""
    if _number(value) and -MAX_NUMBER <= value <= MAX_NUMBER:  # NaN compares false
        return float(value)
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(text: str, limit: int) -> str:
    """Device or user text as the page can carry it: at most ``limit`` characters, a lone
    surrogate (``"\\ud800"`` is valid JSON, not UTF-8) replaced."""
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return _SURROGATE.sub("\ufffd", text)


def _ms(seconds: float) -> float:
    return round(seconds, 3)


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


class _Series:
    """One series' points ``(at, value)``: all of them while there are few, and per time bucket
    the lowest and the highest, for when there are many."""

    def __init__(self, span: float, limit: int) -> None:
        self.span = span
        self.buckets = max(1, limit // 2)
        self.limit = limit
        self.count = 0
        self.points: list[tuple[float, float]] | None = []
        self.low: dict[int, tuple[float, float]] = {}
        self.high: dict[int, tuple[float, float]] = {}

    def add(self, at: float, value: float) -> None:
        self.count += 1
        if self.points is not None:
            self.points.append((at, value))
            if len(self.points) > self.limit:
                self.points = None
        b = min(self.buckets - 1, int(at / self.span * self.buckets)) if self.span > 0 else 0
        low, high = self.low.get(b), self.high.get(b)
        if low is None or value < low[1]:
            self.low[b] = (at, value)
        if high is None or value > high[1]:
            self.high[b] = (at, value)

    def result(self) -> list[tuple[float, float]]:
        """The points in time order: all, or the buckets' extremes when there were too many."""
        if self.points is not None:
            return sorted(self.points)
        return sorted(set(self.low.values()) | set(self.high.values()))

    def flat(self) -> list[float]:
        """:meth:`result` as ``at, value, at, value...`` (whole values as integers)."""
        out: list[float] = []
        for at, value in self.result():
            out += (at, value if not value.is_integer() else int(value))
        return out


@dataclass
class VitalsReader:
    """``vitals.jsonl`` read line by line (:meth:`feed`), in bounded memory whatever its length.

    ``origin``: the run's start (Unix seconds; ``None``: the capture has none, nothing can be
    placed); ``span``: the run's length in seconds (what the timeline draws)."""

    origin: float | None
    span: float
    limit: int = MAX_POINTS
    max_lines: int = MAX_LINES
    lines: int = 0  # lines fed
    cut: bool = False  # a line past max_lines came: the rest of the file is not read
    readings: int = 0  # lines that were readings inside the run
    not_json: int = 0
    torn: int = 0  # the last line, cut off
    wrong: int = 0  # JSON, but not a reading (a value of the wrong type, no time...)
    outside: int = 0
    _pending: bytes | None = field(default=None, repr=False)  # the last line fed, unparsed

    def __post_init__(self) -> None:
        self.cpu = _Series(self.span, self.limit)
        self.mem = _Series(self.span, self.limit)

    def feed(self, line: bytes) -> None:
        """One line (its newline included, except maybe on the last); past ``max_lines``,
        nothing but :attr:`cut` (a reader stops feeding then)."""
        if self.lines >= self.max_lines:
            self.cut = True
            return
        self.lines += 1
        if self._pending is not None:
            self._parse(self._pending, last=False)
        self._pending = line

    def finish(self) -> VitalsReader:
        """The end of the file: the last line fed is read now (a torn one is told apart)."""
        if self._pending is not None:
            self._parse(self._pending, last=True)
            self._pending = None
        return self

    def _parse(self, line: bytes, *, last: bool) -> None:
        # The hot path of a long run's file (a million lines a fortnight): plain type checks.
        try:
            reading = _decode(line.decode("utf-8"))
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            if not line.strip():
                return  # a blank line is nothing
            if last and not line.endswith(b"\n"):
                self.torn += 1
            else:
                self.not_json += 1
            return
        if type(reading) is not dict:
            self.wrong += 1
            return
        when = reading.get("time")
        cpu = reading.get("cpu_percent")
        mem = reading.get("mem_bytes")
        if not (_number(when) and -MAX_NUMBER <= when <= MAX_NUMBER):
            self.wrong += 1
            return
        if (cpu is not None and not (_number(cpu) and 0 <= cpu <= MAX_NUMBER)) or (
            mem is not None and not (_number(mem) and 0 <= mem <= MAX_NUMBER)
        ):
            self.wrong += 1
            return
        if self.origin is None:
            self.outside += 1
            return
        at = when - self.origin
        if not -GRACE_S <= at <= self.span + GRACE_S:
            self.outside += 1
            return
        at = _ms(min(max(at, 0.0), self.span))
        self.readings += 1
        if cpu is not None:
            self.cpu.add(at, float(cpu))
        if mem is not None:
            self.mem.add(at, float(round(mem)))

    def notes(self) -> list[str]:
        """What was skipped or thinned out, as short sentences (none when nothing was)."""
        out: list[str] = []
        skipped = [
            (self.not_json, "not JSON"),
            (self.torn, "cut off at the end"),
            (self.wrong, "not a reading"),
        ]
        total = sum(n for n, _ in skipped)
        if total:
            why = ", ".join(f"{n:,} {what}" for n, what in skipped if n)
            out.append(f"vitals.jsonl: {_count(total, 'line')} skipped ({why})")
        if self.outside:
            where = "outside the run" if self.origin is not None else "with no run start to place"
            out.append(f"vitals.jsonl: {_count(self.outside, 'reading')} {where} skipped")
        if self.cut:
            out.append(f"vitals.jsonl: only its first {self.max_lines:,} lines were read")
        for name, series in (("CPU", self.cpu), ("memory", self.mem)):
            if series.points is None:
                shown = len(series.result())
                out.append(
                    f"{name}: {_count(series.count, 'reading')} drawn as {shown:,} points "
                    "(the lowest and highest of each stretch of time)"
                )
        return out


def read_marks(
    record: object, origin: float | None, span: float, limit: int = MAX_MARKS
) -> tuple[list[list[object]], list[str]]:
    """``session.json``'s marks as ``[at, label]`` pairs in time order (``at``: seconds since the
    run's start), at most ``limit``, and the notes on what was skipped."""
    raw = record.get("marks") if isinstance(record, dict) else None
    if raw is None:
        raw = []
    notes: list[str] = []
    if not isinstance(raw, list):
        return [], ["session.json: its marks are not a list (skipped)"]
    marks: list[tuple[float, str]] = []
    wrong = outside = 0
    for item in raw:
        when = _finite(item.get("time")) if isinstance(item, dict) else None
        label = item.get("label") if isinstance(item, dict) else None
        if when is None or not isinstance(label, str):
            wrong += 1
            continue
        if origin is None or not -GRACE_S <= when - origin <= span + GRACE_S:
            outside += 1
            continue
        marks.append(
            (_ms(min(max(when - origin, 0.0), span)), _text(label, MAX_LABEL) or "(unnamed)")
        )
    marks.sort(key=lambda m: m[0])
    if wrong:
        notes.append(f"session.json: {_count(wrong, 'mark')} without a label and a time skipped")
    if outside:
        where = "outside the run" if origin is not None else "with no run start to place"
        notes.append(f"session.json: {_count(outside, 'mark')} {where} skipped")
    if len(marks) > limit:
        over = _count(len(marks) - limit, "more mark")
        notes.append(f"session.json: {over} not drawn (the report draws the first {limit:,})")
    dropped = record.get("marks_dropped") if isinstance(record, dict) else None
    if _number(dropped) and 0 < dropped < MAX_NUMBER:
        dropped = _count(int(dropped), "more mark")
        notes.append(f"session.json: {dropped} past the capture's limit, not kept")
    return [[at, label] for at, label in marks[:limit]], notes


def _unavailable(record: object) -> list[str]:
    """The capture's word on why there are no vitals (``session.json`` ``vitals.unavailable``)."""
    vitals = record.get("vitals") if isinstance(record, dict) else None
    why = vitals.get("unavailable") if isinstance(vitals, dict) else None
    if isinstance(why, str) and why.strip():
        return [f"no device vitals: {_text(why.strip(), 300)}"]
    return []


def timeline_extras(
    record: object,
    vitals: VitalsReader | None,
    origin: float | None,
    span: float,
    notes: list[str] | None = None,
) -> dict[str, object] | None:
    """The model's ``session`` entry: ``marks`` (``[at, label]``), ``cpu`` and ``mem`` (flat
    ``at, value`` pairs), ``readings`` and ``notes``; ``None`` when there is nothing to draw and
    nothing to say (a report of a plain capture stays as it was). ``record``: ``session.json``
    parsed (anything else is ignored); ``notes``: the shell's own (a file it could not read)."""
    marks, mark_notes = read_marks(record, origin, span)
    out_notes = [*(notes or []), *mark_notes]
    cpu: list[float] = []
    mem: list[float] = []
    readings = 0
    if vitals is not None:
        vitals.finish()
        cpu, mem, readings = vitals.cpu.flat(), vitals.mem.flat(), vitals.readings
        out_notes += vitals.notes()
    if not readings:
        out_notes += _unavailable(record)
    if not (marks or cpu or mem or out_notes):
        return None
    return {"marks": marks, "cpu": cpu, "mem": mem, "readings": readings, "notes": out_notes}
