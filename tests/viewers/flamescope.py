"""FlameScope (Netflix/flamescope, not on PyPI) as a reader: the rules its Python backend applies
to a Trace Event file (``app/trace_event/``) and a ``.cpuprofile`` (``app/cpuprofile/``),
reimplemented from what its code does (read, not copied). Where FlameScope would crash, these
raise :class:`Unreadable` naming why; what it would silently get wrong (a heat map sample outside
its columns, which Python's negative indexes would wrap) is an error too.

* Trace Event: the top level is iterated as the list of events; every row's ``pid`` and ``tid``
  are read (metadata too). The time range is the ``ts`` of the first and of the last non-``M``
  row. Heat map: per ``pid``/``tid``, each root slice (a ``B``..``E`` pair at depth 0, reading
  ``tts`` on both; or an ``X`` with ``dur > 0`` and ``tdur > 0``) adds one sample per 10 ms bin
  it touches. Flame graph: ``B`` reads ``cat``, ``name``, ``ts``, ``tts``; ``E`` reads ``ts``,
  ``tts`` and closes the innermost open slice of its thread (none open: an exception); a slice
  weighs ``tdur / dur`` (no weight when ``dur`` is 0, which breaks its tree building).
* ``.cpuprofile``: an object with ``nodes`` is one profile; otherwise the rows are events, and
  ``P`` ``Profile``/``ProfileChunk`` events make one profile each (``args.data.startTime``, then
  ``cpuProfile.nodes``/``samples`` and ``timeDeltas`` appended). Heat map: each sample not on
  the ``(idle)`` node sits at ``startTime + Σ timeDeltas`` (µs); the range runs from the
  smallest ``startTime`` to the largest ``endTime`` (or last sample time).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

BIN_US = 10_000  # FlameScope's heat map resolution for Trace Events (100 Hz)
ROWS = 50  # its default heat map rows per second


class Unreadable(Exception):
    """What FlameScope would fail on."""


def _field(row, name: str):
    if not isinstance(row, dict):
        raise Unreadable(f"a row is a {type(row).__name__}, not an event: {row!r:.80}")
    if name not in row:
        raise Unreadable(f"{row.get('ph')!r} row without {name!r}: {row!r:.200}")
    return row[name]


def _events(doc) -> list:
    if not isinstance(doc, list):
        raise Unreadable(f"the top level is a {type(doc).__name__}, not a list of events")
    return doc


@dataclass
class HeatMap:
    start_s: float
    end_s: float
    offsets: list[float]  # seconds, one per sample drawn

    def columns(self) -> int:
        return int(math.ceil(self.end_s) - math.floor(self.start_s))

    def cells(self) -> dict[tuple[int, int], int]:
        """``{(column, row): samples}``; a sample outside the columns is an error."""
        cols = self.columns()
        out: dict[tuple[int, int], int] = defaultdict(int)
        for t in self.offsets:
            col = math.floor(t - math.floor(self.start_s))
            if not 0 <= col < cols:
                raise Unreadable(f"sample at {t} s outside the heat map ({cols} columns)")
            out[(col, ROWS - math.floor(ROWS * (t % 1)) - 1)] += 1
        return dict(out)


def trace_time_range(doc) -> tuple[float, float]:
    """µs: the first and the last non-metadata row's ``ts``."""
    timed = [row for row in _events(doc) if _field(row, "ph") != "M"]
    if not timed:
        raise Unreadable("no event besides metadata")
    return _field(timed[0], "ts"), _field(timed[-1], "ts")


def trace_heatmap(doc) -> HeatMap:
    events = _events(doc)
    start, end = trace_time_range(events)
    roots: list[tuple[float, float]] = []
    open_: dict[tuple, dict] = {}
    for row in events:
        key = (_field(row, "pid"), _field(row, "tid"))
        ph = row["ph"]
        if ph == "B":
            if key in open_:
                open_[key]["depth"] += 1
            else:
                open_[key] = {"ts": _field(row, "ts"), "tts": _field(row, "tts"), "depth": 0}
        elif ph == "E":
            if key not in open_:
                raise Unreadable(f"E with nothing open on {key}")  # a KeyError there
            if open_[key]["depth"]:
                open_[key]["depth"] -= 1
            else:
                _field(row, "tts")
                roots.append((open_.pop(key)["ts"], _field(row, "ts")))
        elif ph == "X" and row.get("dur", 0) > 0 and row.get("tdur", 0) > 0 and key not in open_:
            _field(row, "tts")
            roots.append((row["ts"], row["ts"] + row["dur"]))
    offsets = []
    for begin, finish in roots:
        first = math.floor(begin / BIN_US) * BIN_US
        last = math.ceil(finish / BIN_US) * BIN_US
        offsets += [t / 1e6 for t in range(int(first), int(last), BIN_US)]
    return HeatMap(start / 1e6, end / 1e6, offsets)


@dataclass
class Slice:
    name: str
    ts: float
    tts: float
    dur: float = 0.0
    tdur: float = 0.0
    children: list[Slice] = field(default_factory=list)

    @property
    def value(self) -> float:
        if self.dur <= 0:
            raise Unreadable(f"slice {self.name!r} at {self.ts} has no duration (no value)")
        return self.tdur / self.dur


@dataclass
class Node:
    name: str
    value: float = 0.0
    children: dict[str, Node] = field(default_factory=dict)

    def add(self, piece: Slice) -> None:
        child = self.children.setdefault(piece.name, Node(piece.name))
        child.value += piece.value
        for grandchild in piece.children:
            child.add(grandchild)


def trace_flame_graph(doc) -> tuple[Node, list[Slice]]:
    """The whole range's flame graph, and every slice closed (each with its weight)."""
    root = Node("root")
    open_: dict[tuple, list[Slice]] = defaultdict(list)
    closed: list[Slice] = []
    for row in _events(doc):
        ph = _field(row, "ph")
        if ph not in ("B", "E"):
            continue  # X events with tdur would be read too; we write none
        key = (_field(row, "pid"), _field(row, "tid"))
        if ph == "B":
            _field(row, "cat")
            piece = Slice(_field(row, "name"), _field(row, "ts"), _field(row, "tts"))
            open_[key].append(piece)
            continue
        if not open_[key]:
            raise Unreadable(f"E at {row.get('ts')} closes nothing on {key}")
        piece = open_[key].pop()
        piece.dur = _field(row, "ts") - piece.ts
        piece.tdur = _field(row, "tts") - piece.tts
        piece.value  # noqa: B018 - FlameScope computes it for every slice
        closed.append(piece)
        if open_[key]:
            open_[key][-1].children.append(piece)
        else:
            root.add(piece)
    return root, closed


def cpuprofiles(doc) -> list[dict]:
    """The profiles FlameScope finds in a ``.cpuprofile`` or a Trace Event file."""
    if isinstance(doc, dict) and "nodes" in doc:
        return [doc]
    profiles: list[dict] = []
    current: dict | None = None
    for row in _events(doc):
        ph, name = _field(row, "ph"), row.get("name")
        if ph == "P" and name == "Profile":
            if current is not None:
                profiles.append(current)
            data = _field(row, "args")["data"]
            current = {"nodes": [], "samples": [], "timeDeltas": [], "startTime": data["startTime"]}
        elif ph == "P" and name == "ProfileChunk":
            if current is None:
                raise Unreadable("ProfileChunk before any Profile")
            data = _field(row, "args")["data"]
            current["nodes"] += data["cpuProfile"].get("nodes", [])
            current["samples"] += data["cpuProfile"]["samples"]
            current["timeDeltas"] += data["timeDeltas"]
    if current is not None:
        profiles.append(current)
    return profiles


def cpuprofile_heatmap(doc) -> HeatMap:
    start = end = None
    offsets = []
    profiles = cpuprofiles(doc)
    if not profiles:
        raise Unreadable("no profile")
    for p in profiles:
        idle = next(
            (n["id"] for n in p["nodes"] if n["callFrame"]["functionName"] == "(idle)"), None
        )
        start = p["startTime"] if start is None else min(start, p["startTime"])
        now = p["startTime"]
        for i, delta in enumerate(p["timeDeltas"]):
            now += delta
            if p["samples"][i] != idle:
                offsets.append(now / 1e6)
        last = p.get("endTime", now)
        end = last if end is None else max(end, last)
    return HeatMap(start / 1e6, end / 1e6, offsets)
