"""Leaks by iteration (pure): live bytes per call path at each boundary of a scenario's
``iterations`` step, and the verdict "keeps growing after a warm-up", each explained in a line.

**Marks.** An ``iterations`` step of label ``L`` marks ``L #1`` .. ``L #N`` at each iteration's
start and ``L #end`` after the last (:func:`iteration_mark`; the scenario model writes them, this
module owns the scheme). A group is the marks of one label, read in time order: ``#1``, ``#2``,
.. while each follows the one before, then ``#end``. Without ``#end`` (a run cut short, marks
lost past the capture's limit) the last mark found closes the iterations before it.

**Live bytes.** The capture's memory operations by time (``Timeline.memory``: per slot, per
call path, the differences of :data:`~rokuprof.path_model.MEMORY_COUNTERS`) are summed per call
path as ``alloc_bytes - freed_bytes`` up to each boundary: the net bytes a call path allocated
and freed since the run started. A bucket at slot ``s`` is before a boundary at slot ``b`` when
``s <= b`` (``b`` = the mark's time after the timeline's origin, in slots, rounded down). The
stream gives frees to the call path that frees, so an object allocated in one call path and
freed in another raises the first's series and lowers the second's; the total (every call
path's, named or not) is exact. One pass over the operations: the cost is linear in them, plus
the series of the call paths that changed during the iterations.

**Verdict** (:class:`LeakParams`): the first ``warmup`` iterations are left out (caches fill,
screens are built once); on the live bytes at the boundaries from there to the end (the
``measured`` iterations), a call path leaks when

* its series keeps growing: the one-sided Mann-Kendall p-value (:mod:`.trend`) is below
  ``alpha``, and the Theil-Sen slope (bytes per iteration) is above zero;
* it grows by at least ``min_growth`` bytes over the measured iterations (slope x measured):
  a few bytes of bookkeeping are not a leak;
* it grows in at least ``min_share`` of the measured iterations: one step that stays (a cache
  filled once) is not growth per iteration;
* when the capture says what each call path allocated that was still live at its end
  (``retained``: the live heap by allocating call path), at least ``min_growth`` of it: a
  call path whose objects another call path frees is not a leak. (A gate on the heap's total
  would not do: a heap that shrinks as start-up objects are freed hides a real leak.)

A group of fewer than :func:`min_measured` measured iterations cannot reach ``alpha`` and is
said to be too short. At most ``max_paths`` call paths per group are tested (those that grew
most), so a run of very many call paths costs a bounded number of trend tests.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from rokuprof.units import size
from rokuprof.verdict.trend import mann_kendall_p, theil_sen_slope

#: the suffixes of iteration marks: `` #1`` .. and `` #end``
ITERATION_SUFFIX = " #"
ITERATION_END = "end"
_ITERATION_MARK = re.compile(r"(.+) #(?:([1-9][0-9]{0,8})|end)\Z", re.DOTALL)
ALLOC_BYTES, FREED_BYTES = 1, 4  # their places in MEMORY_COUNTERS


def iteration_mark(label: str, number: int | None) -> str:
    """The mark at the start of iteration ``number`` (1-based) of the iterations step
    ``label``, or after its last iteration (``None``): ``label #3``, ``label #end``."""
    return f"{label}{ITERATION_SUFFIX}{ITERATION_END if number is None else number}"


def parse_iteration_mark(label: str) -> tuple[str, int | None] | None:
    """The iterations label and iteration number (``None``: the end) of an iteration mark,
    or ``None`` when ``label`` is not one: the inverse of :func:`iteration_mark`."""
    match = _ITERATION_MARK.match(label)
    if match is None:
        return None
    number = match.group(2)
    return match.group(1), None if number is None else int(number)


@dataclass(frozen=True, slots=True)
class LeakParams:
    warmup: int = 2  # iterations left out at the start
    alpha: float = 0.01  # Mann-Kendall p below this: growing
    min_growth: int = 1024  # bytes over the measured iterations (Theil-Sen slope x measured)
    max_paths: int = 50  # call paths tested per group, those that grew most
    min_share: float = 2 / 3  # of the measured iterations, those that must grow

    def __post_init__(self) -> None:
        if self.warmup < 0 or not 0 < self.alpha < 1 or self.min_growth < 0:
            raise ValueError("warmup >= 0, 0 < alpha < 1, min_growth >= 0")
        if not 0 <= self.min_share <= 1:
            raise ValueError("0 <= min_share <= 1")
        if self.max_paths < 0:
            raise ValueError("max_paths >= 0")


def min_measured(alpha: float) -> int:
    """The fewest measured iterations whose series can reach ``alpha``: a strictly growing
    series of ``m + 1`` distinct values has p = 1/(m + 1)!."""
    m = 1
    while 1 / math.factorial(m + 1) >= alpha:
        m += 1
    return m


@dataclass(frozen=True, slots=True)
class PathName:
    """How a call path is named in a line: its leaf function and file (and its caller's
    function, said when two call paths of one group share the leaf)."""

    function: str
    file: str
    caller: str | None = None


@dataclass(frozen=True, slots=True)
class Series:
    """One call path's (``path`` None: the total's) live bytes at each boundary of a group
    (``live[k]``: at iteration ``k + 1``'s start; the last: after the last iteration) and the
    verdict on them; ``grew`` counts the measured iterations whose growth was above zero."""

    path: int | None
    name: PathName | None
    live: tuple[int, ...]
    slope: float  # bytes per iteration, over the measured iterations
    p: float
    grew: int
    measured: int
    leak: bool

    @property
    def growth(self) -> tuple[int, ...]:
        """Bytes added in each iteration."""
        return tuple(b - a for a, b in pairwise(self.live))

    def to_json(self) -> dict[str, object]:
        name = self.name
        return {
            "path": self.path,
            "function": name.function if name else None,
            "file": name.file if name else None,
            "caller": name.caller if name else None,
            "live_bytes": list(self.live),
            "growth": list(self.growth),
            "slope": self.slope,
            "p": self.p,
            "grew": self.grew,
            "measured": self.measured,
            "leak": self.leak,
        }


@dataclass(frozen=True, slots=True)
class IterationGroup:
    """The iterations of one label: their boundaries (epoch seconds), the total's series and
    the tested call paths' (leaks first, then by slope), and why nothing was judged
    (``short``)."""

    label: str
    times: tuple[float, ...]
    ended: bool  # the #end mark was found
    warmup: int
    total: Series | None
    paths: tuple[Series, ...]
    short: str | None = None

    @property
    def iterations(self) -> int:
        return max(0, len(self.times) - 1)

    @property
    def leaks(self) -> tuple[Series, ...]:
        return tuple(s for s in self.paths if s.leak)

    def lines(self) -> list[str]:
        """One line per finding: each leaking call path, the heap's leak when it grows with no
        one call path to blame, or that there is no leak (or too few iterations)."""
        label = _quoted(self.label)
        if self.short is not None:
            return [f"no verdict: {label}: {self.short}"]
        facts = f"{self.iterations} iterations, {self.warmup} warm-up"
        lines = [
            f"leak: {_named(s.name)} keeps {_plus(s.slope)} live per iteration of {label} "
            f"({facts}, growth in {s.grew} of {s.measured}, p = {_p(s.p)})"
            for s in self.leaks
        ]
        total = self.total
        assert total is not None
        if not lines and total.leak:
            lines.append(
                f"leak: the heap keeps {_plus(total.slope)} live per iteration of {label} "
                f"({facts}, growth in {total.grew} of {total.measured}, p = {_p(total.p)}; "
                "no one call path does)"
            )
        if not lines:
            lines.append(
                f"no leak: {label} ({facts}): no call path keeps growing; the heap "
                f"{_plus(total.slope)} per iteration (p = {_p(total.p)})"
            )
        return lines

    def to_json(self) -> dict[str, object]:
        return {
            "label": self.label,
            "iterations": self.iterations,
            "ended": self.ended,
            "warmup": self.warmup,
            "boundaries": list(self.times),
            "short": self.short,
            "total": self.total.to_json() if self.total else None,
            "paths": [s.to_json() for s in self.paths],
        }


def iteration_groups(marks: Iterable[Mapping[str, object]]) -> dict[str, tuple[list[float], bool]]:
    """Per iterations label, in order of first appearance: the boundary times (epoch seconds:
    ``#1``, ``#2`` .. as long as each follows the one before in time and number, then ``#end``
    when it follows) and whether ``#end`` was found. Malformed marks are skipped."""
    found: dict[str, dict[int | None, float]] = {}
    for mark in marks:
        label, when = mark.get("label"), mark.get("time")
        if not isinstance(label, str) or isinstance(when, bool):
            continue
        if not isinstance(when, int | float) or not math.isfinite(when):
            continue
        parsed = parse_iteration_mark(label)
        if parsed is not None:
            found.setdefault(parsed[0], {}).setdefault(parsed[1], float(when))
    groups: dict[str, tuple[list[float], bool]] = {}
    for label, numbered in found.items():
        times: list[float] = []
        while (t := numbered.get(len(times) + 1)) is not None and (not times or t >= times[-1]):
            times.append(t)
        end = numbered.get(None)
        ended = end is not None and bool(times) and end >= times[-1]
        if ended:
            times.append(end)  # type: ignore[arg-type]
        if times:
            groups[label] = (times, ended)
    return groups


def leak_groups(
    memory: Sequence[tuple[int, Mapping[int, Sequence[int]]]],
    origin: float,
    hz: int,
    marks: Iterable[Mapping[str, object]],
    name_of: Callable[[int], PathName | None],
    params: LeakParams = LeakParams(),  # frozen: one shared default is safe
    retained: Mapping[int, int] | None = None,
) -> list[IterationGroup]:
    """Every iterations group of ``marks`` judged on ``memory`` (a timeline's: slots from
    ``origin`` at ``hz``); ``name_of`` names a call path (``None``: the export holds none);
    ``retained`` (optional): per call path, the bytes it allocated still live at the end."""
    return [
        _judge(label, times, ended, memory, origin, hz, name_of, params, retained)
        for label, (times, ended) in iteration_groups(marks).items()
    ]


def _judge(
    label: str,
    times: list[float],
    ended: bool,
    memory: Sequence[tuple[int, Mapping[int, Sequence[int]]]],
    origin: float,
    hz: int,
    name_of: Callable[[int], PathName | None],
    params: LeakParams,
    retained: Mapping[int, int] | None,
) -> IterationGroup:
    iterations = len(times) - 1
    measured = iterations - params.warmup
    needed = min_measured(params.alpha)
    group = IterationGroup(label, tuple(times), ended, params.warmup, None, ())
    if measured < needed:
        short = (
            f"{iterations} iteration{'s' * (iterations != 1)} ({params.warmup} warm-up): "
            f"too few to judge; at least {needed + params.warmup} are needed"
        )
        return replace(group, short=short)
    bounds = [math.floor((t - origin) * hz) for t in times]
    last = len(bounds)
    total = [0] * (last + 1)  # net bytes per interval: before #1, each iteration, after
    per_path: dict[int, dict[int, int]] = {}  # path -> interval -> net bytes
    for slot, ops in memory:  # one pass: linear in the operations
        j = bisect_left(bounds, slot)
        for path, row in ops.items():
            net = row[ALLOC_BYTES] - row[FREED_BYTES]
            if net:
                total[j] += net
                if 0 < j < last:  # inside the iterations: the path's series changes
                    intervals = per_path.setdefault(path, {})
                    intervals[j] = intervals.get(j, 0) + net
                elif j == 0:
                    before = per_path.setdefault(path, {})
                    before[0] = before.get(0, 0) + net
    base = params.warmup
    total_series = _series(None, None, _cumulative(total, last), base, params, None)
    kept = retained.get if retained is not None else None
    changed = [(p, ivs) for p, ivs in per_path.items() if len(ivs) > (0 in ivs)]
    live = {path: _cumulative(intervals, last) for path, intervals in changed}
    ranked = sorted(live, key=lambda p: (-(live[p][-1] - live[p][base]), p))[: params.max_paths]
    series = [
        _series(p, name_of(p), live[p], base, params, kept(p, 0) if kept else None) for p in ranked
    ]
    series.sort(key=lambda s: (not s.leak, -s.slope, s.path))
    return IterationGroup(
        label, tuple(times), ended, params.warmup, total_series, tuple(_disambiguated(series))
    )


def _cumulative(intervals: Mapping[int, int] | Sequence[int], boundaries: int) -> tuple[int, ...]:
    """Live bytes at each of ``boundaries`` boundaries: the sum of intervals 0 .. k."""
    get = intervals.get if isinstance(intervals, Mapping) else (lambda j: intervals[j])
    out, running = [], 0
    for k in range(boundaries):
        running += get(k) or 0
        out.append(running)
    return tuple(out)


def _series(
    path: int | None,
    name: PathName | None,
    live: tuple[int, ...],
    base: int,
    params: LeakParams,
    retained: int | None,
) -> Series:
    measured_live = live[base:]
    measured = len(measured_live) - 1
    slope = theil_sen_slope(measured_live)
    p = mann_kendall_p(measured_live)
    grew = sum(b > a for a, b in pairwise(measured_live))
    leak = (
        p < params.alpha
        and slope > 0
        and slope * measured >= params.min_growth
        and grew >= params.min_share * measured
    )
    if retained is not None:  # still live at the end: not objects another call path frees
        leak = leak and retained >= params.min_growth
    return Series(path, name, live, slope, p, grew, measured, leak)


def _disambiguated(series: list[Series]) -> Iterable[Series]:
    """The series, with the caller named only where two share a leaf function and file."""
    leaf = [(s.name.function, s.name.file) if s.name else None for s in series]
    for s, key in zip(series, leaf, strict=True):
        if s.name is not None and s.name.caller is not None and leaf.count(key) < 2:
            s = replace(s, name=PathName(s.name.function, s.name.file))
        yield s


def _named(name: PathName | None) -> str:
    if name is None:
        return "a call path the capture does not name"
    via = f" via {name.caller}" if name.caller else ""
    return f"{name.function} ({name.file}){via}"


def _quoted(label: str) -> str:
    return f'"{label}"'


def _plus(bytes_: float) -> str:
    return ("+" if bytes_ >= 0 else "-") + size(abs(bytes_))


def _p(p: float) -> str:
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


__all__ = [
    "IterationGroup",
    "LeakParams",
    "PathName",
    "Series",
    "iteration_groups",
    "iteration_mark",
    "leak_groups",
    "min_measured",
    "parse_iteration_mark",
]
