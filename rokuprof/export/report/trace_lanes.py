"""A session's Perfetto app trace joined to its report: the model's ``trace`` entry (pure).

A session directory may hold, beside ``capture.bsprof``, ``trace.perfetto-trace``: the device's
app trace of the same run (Roku OS 15.1+, :mod:`rokuprof.trace`). The page draws its threads as
lanes under the stack chart, on the same time axis, with a *Frames* lane of the missed frames
(:func:`~rokuprof.trace.analysis.frame_cadence`) and a findings panel (rendezvous, observers,
script slices), each finding pointing at its slices. Times are seconds since the report's
timeline origin (the run's start, Unix seconds):

* **clock**: the trace's clock snapshot (:meth:`~rokuprof.trace.model.Trace.wall_offset_ns`)
  puts each timestamp on Unix time, then the run's start is subtracted;
* **arrival**: without a snapshot (or without a run start), the trace's first event is taken
  to be at the run's start.

What the page gets is bounded whatever the trace's length (a long one has millions of slices),
and building it is linear in the trace: per lane the :data:`MAX_PER_LANE` longest slices at
depths below :data:`MAX_DEPTH`, the :data:`MAX_LANES` lanes with most slices, the
:data:`MAX_MISSED` longest missed frames, and the slices the findings name (each finding's
longest :data:`MAX_FINDING_SLICES`); ``notes`` say what was left out. A script slice's call
stack (``"function pkg:/file.brs:line"``) is matched to the report's functions (by name and
file, case-insensitively, as BrightScript names are; the function starting nearest above the
line), so a click on it selects that function in every view. Device text stays text: names are
cut to :data:`MAX_NAME` characters and a lone surrogate replaced; the page never reads them as
markup.
"""

from __future__ import annotations

import heapq
import re
from collections import defaultdict

from rokuprof.trace.analysis import field_of, frame_cadence, observers, rendezvous, script
from rokuprof.trace.model import Trace

#: Slices per lane the page gets at most (the longest).
MAX_PER_LANE = 2000
#: Lanes (threads) the page gets at most (those with most slices).
MAX_LANES = 32
#: Slices of all lanes together the page gets at most (besides the findings'): with many lanes
#: each keeps fewer than :data:`MAX_PER_LANE` (about 70 bytes of the page a slice).
MAX_SLICES = 20_000
#: Nesting depths drawn per lane (a slice deeper is left out).
MAX_DEPTH = 12
#: Missed frames the page gets at most (the longest).
MAX_MISSED = 5000
#: Rows of each finding table (rendezvous, script) and slices kept per finding (its longest).
MAX_FINDINGS = 10
MAX_FINDING_SLICES = 50
#: Characters of a name kept.
MAX_NAME = 200
CAUSES = ("late to render", "slow render", "slow swap")
#: Seconds a clock-aligned trace may lie outside the run and still be placed by its clock (the
#: device's two clocks, the capture's arrival times).
GRACE_S = 5.0

_SURROGATE = re.compile("[\ud800-\udfff]")
_FRAME = re.compile(r"(\S+)\s+(\S+?):(\d+)")


def _text(value: object) -> str:
    text = str(value)
    text = text if len(text) <= MAX_NAME else text[: MAX_NAME - 1] + "…"
    return _SURROGATE.sub("\ufffd", text)


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def parse_callstack(stack: object) -> tuple[str, str, int] | None:
    """The first frame of an ``ExecBrightScript`` call stack: ``(function, file, line)``."""
    if not isinstance(stack, str):
        return None
    m = _FRAME.search(stack)
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


class FunctionIndex:
    """The report's functions by (name, file), lower-cased, for a call stack's frame."""

    def __init__(self, model: dict) -> None:
        strings: list[str] = model["strings"]
        fns = model["functions"]
        self._by: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
        for f, (name, file, line) in enumerate(
            zip(fns["name"], fns["file"], fns["line"], strict=True)
        ):
            self._by[(strings[name].lower(), strings[file].lower())].append((line, f))
        self._cache: dict[str, int] = {}

    def find(self, stack: object) -> int:
        """The function a call stack names (-1: none of the report's)."""
        key = stack if isinstance(stack, str) else ""
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._find(parse_callstack(stack))
        return hit

    def _find(self, frame: tuple[str, str, int] | None) -> int:
        if frame is None:
            return -1
        name, file, line = frame
        rows = self._by.get((name.lower(), file.lower()))
        if not rows:
            return -1
        above = [r for r in rows if r[0] <= line]
        return max(above)[1] if above else min(rows)[1]


def _longest(items: list[tuple[int, int]], n: int) -> list[int]:
    """The indexes of the ``n`` longest ``(duration, index)`` items, in index order."""
    return sorted(i for _, i in heapq.nlargest(n, items))


class _Seconds:
    """Trace nanoseconds as seconds since the run's start, and how they were aligned."""

    def __init__(self, trace: Trace, origin: float | None, span: float, first: int, last: int):
        offset = trace.wall_offset_ns()
        misplaced = (
            offset is not None
            and origin is not None
            and not (
                (first + offset) / 1e9 - origin <= span + GRACE_S
                and (last + offset) / 1e9 - origin >= -GRACE_S
            )
        )
        if offset is not None and origin is not None and not misplaced:
            self.alignment = "clock"
            self.base = offset - round(origin * 1e9)
            self.note = (
                "the trace's clock snapshot puts it on wall time, the same axis as the "
                "capture's (Unix time of the run's start)"
            )
        else:
            self.alignment = "arrival"
            self.base = -first
            why = (
                "no clock snapshot"
                if offset is None
                else "the capture has no start time"
                if origin is None
                else "its clock snapshot puts it outside the capture's run"
            )
            self.note = (
                f"by arrival ({why}): the trace's first event is taken to be at the run's start"
            )

    def __call__(self, ns: int) -> float:
        return round((ns + self.base) / 1e9, 6)


def trace_entry(trace: Trace, model: dict, origin: float | None, span: float) -> dict:
    """The model's ``trace`` entry of ``trace`` for the report ``model`` (its functions and
    strings) whose timeline starts at ``origin`` (Unix seconds) and lasts ``span`` seconds."""
    first_ts, last_ts = trace.first_ts, trace.last_ts  # each a pass over the slices: once
    end_ns = last_ts or 0
    at = _Seconds(trace, origin, span, first_ts or 0, end_ns)
    fns = FunctionIndex(model)
    notes: list[str] = []

    # One pass: per track, (duration, index) of the slices a lane can draw.
    per_track: dict[int, list[tuple[int, int]]] = defaultdict(list)
    deep = unfinished = 0
    for i, s in enumerate(trace.slices):
        if s.end is None:
            unfinished += 1
        if s.depth >= MAX_DEPTH:
            deep += 1
            continue
        per_track[s.track].append((s.lower_bound(end_ns), i))
    tracks = sorted(per_track, key=lambda t: (-len(per_track[t]), t))
    # the lanes with most slices, drawn in the order their threads first appear
    shown_tracks = sorted(tracks[:MAX_LANES], key=lambda t: per_track[t][0][1])
    kept: set[int] = set()
    left_out = 0
    per_lane = min(MAX_PER_LANE, max(1, MAX_SLICES // max(1, len(shown_tracks))))
    for t in shown_tracks:
        items = per_track[t]
        kept.update(_longest(items, per_lane))
        left_out += max(0, len(items) - per_lane)

    # The findings and their slices (kept whatever the lanes' bound; on a lane shown).
    shown = set(shown_tracks)
    rows = rendezvous(trace)[:MAX_FINDINGS]
    wanted_rows = {(r["thread"], r["field"]): k for k, r in enumerate(rows)}
    rv_slices: list[list[tuple[int, int]]] = [[] for _ in rows]
    script_rows = script(trace)[:MAX_FINDINGS]
    wanted_stacks = {r["callstack"]: k for k, r in enumerate(script_rows)}
    sc_slices: list[list[tuple[int, int]]] = [[] for _ in script_rows]
    obs_slices: list[tuple[int, int]] = []
    for i, s in enumerate(trace.slices):
        if s.end is None or s.track not in shown or s.depth >= MAX_DEPTH:
            continue
        if s.name == "Rendezvous":
            k = wanted_rows.get((trace.thread_name(s.track), field_of(trace, s)))
            if k is not None:
                rv_slices[k].append((s.end - s.start, i))
        elif s.name == "ExecBrightScript":
            k = wanted_stacks.get(str(s.args.get("callstack", "(no call stack)")))
            if k is not None:
                sc_slices[k].append((s.end - s.start, i))
        elif s.name == "observer.callback":
            up = s.parent
            while up is not None and trace.slices[up].name != "observer.callback":
                up = trace.slices[up].parent
            if up is None:  # outermost
                obs_slices.append((s.end - s.start, i))
    rv_keep = [_longest(x, MAX_FINDING_SLICES) for x in rv_slices]
    sc_keep = [_longest(x, MAX_FINDING_SLICES) for x in sc_slices]
    obs_keep = _longest(obs_slices, MAX_FINDING_SLICES * 4)
    for group in (*rv_keep, *sc_keep, obs_keep):
        kept.update(group)

    # The slices, in lane then time order, as columns; names (device text) once each.
    names: list[str] = []
    name_ids: dict[str, int] = {}

    def name_id(text: str) -> int:
        i = name_ids.get(text)
        if i is None:
            i = name_ids[text] = len(names)
            names.append(_text(text))
        return i

    lane_of = {t: k for k, t in enumerate(shown_tracks)}
    order = sorted(kept, key=lambda i: (lane_of[trace.slices[i].track], trace.slices[i].start, i))
    index_of = {i: k for k, i in enumerate(order)}
    cols: dict[str, list] = {"lane": [], "start": [], "end": [], "depth": [], "name": [], "fn": []}
    stacks: list[list[object]] = []  # [slice, call stack text] of the script slices kept
    outside = 0
    for i in order:
        s = trace.slices[i]
        a, b = at(s.start), at(s.end if s.end is not None else max(end_ns, s.start))
        if b < 0 or a > span:
            outside += 1
        cols["lane"].append(lane_of[s.track])
        cols["start"].append(a)
        cols["end"].append(b)
        cols["depth"].append(s.depth)
        cols["name"].append(name_id(s.name))
        stack = s.args.get("callstack")
        cols["fn"].append(fns.find(stack) if stack is not None else -1)
        if stack is not None:
            stacks.append([index_of[i], _text(stack)])
    lanes = []
    for t in shown_tracks:
        track = trace.tracks.get(t)
        depth = max((trace.slices[i].depth for _, i in per_track[t]), default=0)
        lanes.append(
            {
                "name": _text(trace.thread_name(t)),
                "tid": track.tid if track is not None else None,
                "rows": min(MAX_DEPTH, depth + 1),
                "slices": len(per_track[t]),
            }
        )

    figures, missed = frame_cadence(trace)
    frames_kept = sorted(
        heapq.nlargest(MAX_MISSED, missed, key=lambda m: m.end - m.start), key=lambda m: m.start
    )
    frames = {
        "figures": figures,
        "causes": list(CAUSES),
        "missed": [[at(m.start), at(m.end), CAUSES.index(m.cause)] for m in frames_kept],
    }

    def refs(group: list[int]) -> list[int]:
        return sorted(index_of[i] for i in group)

    obs = observers(trace)
    findings = {
        "rendezvous": [
            {
                **{k: (_text(v) if isinstance(v, str) else v) for k, v in r.items()},
                "refs": refs(keep),
            }
            for r, keep in zip(rows, rv_keep, strict=True)
        ],
        "observers": {**obs, "refs": refs(obs_keep)},
        "script": [
            {
                **{k: (_text(v) if isinstance(v, str) else v) for k, v in r.items()},
                "fn": fns.find(r["callstack"]),
                "refs": refs(keep),
            }
            for r, keep in zip(script_rows, sc_keep, strict=True)
        ],
    }

    # What was left out, said on the page.
    if len(tracks) > MAX_LANES:
        hidden = sum(len(per_track[t]) for t in tracks[MAX_LANES:])
        notes.append(
            f"{_count(len(tracks) - MAX_LANES, 'thread')} with fewer slices not drawn "
            f"({_count(hidden, 'slice')}; the page draws {MAX_LANES} threads)"
        )
    if left_out:
        notes.append(
            f"{_count(left_out, 'shorter slice')} not drawn (the page keeps the "
            f"{per_lane:,} longest of each thread, and the findings' slices)"
        )
    if deep:
        notes.append(f"{_count(deep, 'slice')} nested deeper than {MAX_DEPTH} levels not drawn")
    if len(missed) > MAX_MISSED:
        notes.append(
            f"{_count(len(missed) - MAX_MISSED, 'shorter missed frame')} not drawn "
            f"(the page marks the {MAX_MISSED:,} longest)"
        )
    if unfinished:
        notes.append(
            f"{_count(unfinished, 'slice')} still open when the trace ended, drawn to its end"
        )
    if outside:
        notes.append(f"{_count(outside, 'slice')} outside the capture's time axis")
    if trace.error is not None:
        notes.append(f"the trace could not be read to its end: {_text(trace.error)}")
    notes += [_text(p) for p in trace.problems[:5]]
    if len(trace.problems) > 5:
        notes.append(f"and {_count(len(trace.problems) - 5, 'more problem')} in the trace")
    return {
        "alignment": at.alignment,
        "alignmentNote": at.note,
        "start": at(first_ts) if first_ts is not None else None,
        "end": at(end_ns) if last_ts is not None else None,
        "total": len(trace.slices),
        "names": names,
        "lanes": lanes,
        "slices": cols,
        "stacks": stacks,
        "frames": frames,
        "findings": findings,
        "notes": notes,
    }
