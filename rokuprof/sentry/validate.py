"""Check a V2 profile chunk against the rules Sentry's ingestion (Relay) enforces.

Relay answers ``200`` before it looks at a chunk and drops a bad one later, visible only on the
organization's stats page; a sender must therefore check every chunk itself. :func:`validate_chunk`
returns the problems in the order Relay would meet them (the first is the reason Relay would
give), each named with Relay's own discard reason:

* ``profiling_exceed_size_limit`` - the payload is over 50 MiB;
* ``profiling_invalid_json`` - not JSON, or a field is missing or of the wrong type (ids that are
  not 32 lowercase hex digits, a non-string ``thread_id``, a non-finite ``timestamp``, a frame
  ``lineno`` that is not a non-negative integer, a measurement unit Relay does not know, ...);
* ``profiling_platform_not_supported`` - ``version`` is missing or ``"1"`` (not ``"2"``);
* ``profiling_invalid_profile_metadata`` - ``client_sdk`` name or version empty;
* ``profiling_not_enough_samples`` - no sample left once every thread with at most one non-idle
  sample is dropped (Relay drops those threads);
* ``profiling_malformed_samples`` - a ``stack_id`` outside ``stacks``;
* ``profiling_malformed_stacks`` - a frame index outside ``frames`` (in any stack, used or not);
* ``profiling_duration_is_too_long`` - last sample minus first sample over 66 s.

A builder that holds its samples as runs passes :class:`SampleFacts` instead: the same rules,
checked at a cost that does not grow with the number of samples.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_CHUNK_BYTES = 50 * 1024 * 1024
#: Relay's limit on a chunk's last sample time minus its first (more: too long), 6 s above the
#: window the SDKs and the builder keep to (:data:`rokuprof.sentry.settings.MAX_CHUNK_SECONDS`).
MAX_SAMPLE_SPAN_SECONDS = 66.0
MEASUREMENT_UNITS = frozenset(
    {"nanosecond", "ns", "hertz", "hz", "byte", "percent", "nanojoule", "nj"}
)
U32_MAX = 0xFFFFFFFF

EXCEED_SIZE_LIMIT = "profiling_exceed_size_limit"
INVALID_JSON = "profiling_invalid_json"
PLATFORM_NOT_SUPPORTED = "profiling_platform_not_supported"
INVALID_PROFILE_METADATA = "profiling_invalid_profile_metadata"
NOT_ENOUGH_SAMPLES = "profiling_not_enough_samples"
MALFORMED_SAMPLES = "profiling_malformed_samples"
MALFORMED_STACKS = "profiling_malformed_stacks"
DURATION_IS_TOO_LONG = "profiling_duration_is_too_long"
INVALID_PROFILE_TYPE = "profiling_invalid_profile_type"  # envelope item header vs payload

_UUID_HEX = re.compile(r"[0-9a-f]{32}")
_STRING_FRAME_KEYS = ("function", "filename", "abs_path", "module", "package", "platform")


@dataclass(frozen=True, slots=True)
class SampleFacts:
    """What the rules need to know about a chunk's samples, from a builder that guarantees
    their types (``timestamp`` a float, ``thread_id`` a string, ``stack_id`` an index)."""

    count: int
    busy: Mapping[str, int]  # thread id -> samples whose stack has frames
    spans: Mapping[str, tuple[float, float]]  # thread id -> (first, last) sample timestamp
    outside: int = 0  # samples whose stack id is not an index of ``stacks``
    first_outside: int | None = None  # the first of them, when known


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason Relay would drop the chunk, and where."""

    reason: str
    detail: str

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}"


class ChunkInvalid(ValueError):
    """A chunk failed validation (raised only by :func:`check_chunk`)."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(map(str, problems)))
        self.problems = problems


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_u32(value: object) -> bool:
    return _is_int(value) and 0 <= value <= U32_MAX


def _is_index(value: object) -> bool:
    return _is_int(value) and value >= 0


def _all_indexes(values: list) -> bool:
    """Every value an index (:func:`_is_index`); a list of plain ints, the usual case, is
    checked in C."""
    if not values or (set(map(type, values)) == {int} and min(values) >= 0):
        return True
    return all(map(_is_index, values))


def _is_finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_number_or_numeric_string(value: object) -> bool:
    if _is_finite(value):
        return True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False


class _Checker:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def fail(self, reason: str, detail: str) -> None:
        self.problems.append(Problem(reason, detail))

    def json(self, detail: str) -> None:
        self.fail(INVALID_JSON, detail)


def _check_top(c: _Checker, chunk: Mapping) -> None:
    if not isinstance(chunk.get("platform"), str):
        c.json("platform: missing or not a string")
    version = chunk.get("version")
    if version is None or version == "1":
        c.fail(PLATFORM_NOT_SUPPORTED, f'version {version!r}: only "2" is a profile chunk')
    elif version != "2":
        c.json(f'version {version!r}: expected the string "2"')
    for key in ("chunk_id", "profiler_id"):
        value = chunk.get(key)
        if not (isinstance(value, str) and _UUID_HEX.fullmatch(value)):
            c.json(f"{key} {value!r}: expected 32 lowercase hex digits")
    sdk = chunk.get("client_sdk")
    if not isinstance(sdk, Mapping):
        c.json("client_sdk: missing or not an object")
    else:
        for key in ("name", "version"):
            value = sdk.get(key)
            if not isinstance(value, str):
                c.json(f"client_sdk.{key}: missing or not a string")
            elif not value:
                c.fail(INVALID_PROFILE_METADATA, f"client_sdk.{key} is empty")
    for key in ("release", "environment"):
        if key in chunk and chunk[key] is not None and not isinstance(chunk[key], str):
            c.json(f"{key}: not a string")
    if "measurements" in chunk:
        _check_measurements(c, chunk["measurements"])


def _check_measurements(c: _Checker, measurements: object) -> None:
    if not isinstance(measurements, Mapping):
        c.json("measurements: not an object")
        return
    for name, m in measurements.items():
        if not isinstance(m, Mapping):
            c.json(f"measurements.{name}: not an object")
            continue
        if m.get("unit") not in MEASUREMENT_UNITS:
            c.json(f"measurements.{name}.unit {m.get('unit')!r}: not a unit Relay knows")
        values = m.get("values")
        if not isinstance(values, list):
            c.json(f"measurements.{name}.values: not a list")
            continue
        for i, v in enumerate(values):
            if not isinstance(v, Mapping) or not _is_number_or_numeric_string(v.get("value")):
                c.json(f"measurements.{name}.values[{i}]: value missing or not a number")
            elif "timestamp" in v and not _is_finite(v["timestamp"]):
                c.json(f"measurements.{name}.values[{i}].timestamp: not a finite number")


def _check_profile_types(c: _Checker, profile: Mapping) -> SampleFacts | None:
    """Types inside ``profile``; the facts of its samples if the structure is sound enough to
    go on, else ``None``."""
    samples, stacks, frames = (profile.get(k) for k in ("samples", "stacks", "frames"))
    sound = True
    for name, value in (("samples", samples), ("stacks", stacks), ("frames", frames)):
        if not isinstance(value, list):
            c.json(f"profile.{name}: missing or not a list")
            sound = False
    if not sound:
        return None
    facts = _sample_facts(c, samples, stacks)
    for i, stack in enumerate(stacks):
        if not isinstance(stack, list) or not _all_indexes(stack):
            c.json(f"profile.stacks[{i}]: not a list of frame indexes")
            sound = False
    for i, frame in enumerate(frames):
        if not isinstance(frame, Mapping):
            c.json(f"profile.frames[{i}]: not an object")
            continue
        for key in _STRING_FRAME_KEYS:
            if key in frame and frame[key] is not None and not isinstance(frame[key], str):
                c.json(f"profile.frames[{i}].{key}: not a string")
        for key in ("lineno", "colno"):
            if key in frame and frame[key] is not None and not _is_u32(frame[key]):
                c.json(f"profile.frames[{i}].{key} {frame[key]!r}: not a non-negative integer")
        if (
            "in_app" in frame
            and frame["in_app"] is not None
            and not isinstance(frame["in_app"], bool)
        ):
            c.json(f"profile.frames[{i}].in_app: not a boolean")
        addr = frame.get("instruction_addr")
        if addr is not None and not isinstance(addr, str):
            c.json(f"profile.frames[{i}].instruction_addr: not a string")
    threads = profile.get("thread_metadata")
    if threads is not None:
        if not isinstance(threads, Mapping):
            c.json("profile.thread_metadata: not an object")
        else:
            for tid, meta in threads.items():
                if not isinstance(meta, Mapping):
                    c.json(f"profile.thread_metadata[{tid!r}]: not an object")
                    continue
                if meta.get("name") is not None and not isinstance(meta["name"], str):
                    c.json(f"profile.thread_metadata[{tid!r}].name: not a string")
                if meta.get("priority") is not None and not _is_u32(meta["priority"]):
                    c.json(f"profile.thread_metadata[{tid!r}].priority: not a u32")
    return facts if sound else None


def _sample_facts(c: _Checker, samples: list, stacks: list) -> SampleFacts | None:
    """One pass over the samples: their types (problems go to ``c``; ``None`` if any) and
    the facts the rules need. Chunks hold tens of thousands of samples: a plain dict with a
    finite float or int timestamp, an int stack id >= 0 and a string thread id takes the short
    way."""
    n_stacks = len(stacks)
    busy: dict[str, int] = {}
    low: dict[str, float] = {}
    high: dict[str, float] = {}
    outside = 0
    first_outside = None
    sound = True
    for i, s in enumerate(samples):
        if type(s) is dict:
            ts, sid, tid = s.get("timestamp"), s.get("stack_id"), s.get("thread_id")
            plain = (
                ((type(ts) is float and ts - ts == 0.0) or type(ts) is int)
                and type(sid) is int
                and sid >= 0
                and type(tid) is str
            )
        else:
            plain = False
        if not plain:
            if not isinstance(s, Mapping):
                c.json(f"profile.samples[{i}]: not an object")
                sound = False
                continue
            ts, sid, tid = s.get("timestamp"), s.get("stack_id"), s.get("thread_id")
            if not _is_finite(ts):
                c.json(f"profile.samples[{i}].timestamp {ts!r}: not a finite number")
                sound = False
            if not _is_index(sid):
                c.json(f"profile.samples[{i}].stack_id {sid!r}: not an index")
                sound = False
            if not isinstance(tid, str):
                c.json(f"profile.samples[{i}].thread_id {tid!r}: not a string")
                sound = False
            if not sound:
                continue
        if sid < n_stacks:
            if stacks[sid]:
                busy[tid] = busy.get(tid, 0) + 1
        else:
            outside += 1
            if first_outside is None:
                first_outside = i
        lo = low.get(tid)
        if lo is None:
            low[tid] = high[tid] = ts
        elif ts > high[tid]:
            high[tid] = ts
        elif ts < lo:
            low[tid] = ts
    if not sound:
        return None
    spans = {tid: (lo, high[tid]) for tid, lo in low.items()}
    return SampleFacts(len(samples), busy, spans, outside, first_outside)


def kept_samples(profile: Mapping) -> list[Mapping]:
    """The samples Relay keeps: those of threads with at least two non-idle samples (a sample
    pointing outside ``stacks`` counts as neither)."""
    stacks = profile["stacks"]
    busy: dict[str, int] = {}
    for s in profile["samples"]:
        sid = s["stack_id"]
        if sid < len(stacks) and stacks[sid]:
            busy[s["thread_id"]] = busy.get(s["thread_id"], 0) + 1
    return [s for s in profile["samples"] if busy.get(s["thread_id"], 0) > 1]


def _check_fact_rules(c: _Checker, profile: Mapping, facts: SampleFacts) -> None:
    kept = [facts.spans[tid] for tid, n in facts.busy.items() if n > 1 and tid in facts.spans]
    _check_rules(
        c,
        profile,
        count=facts.count,
        kept=bool(kept),
        outside=facts.outside,
        first_outside=facts.first_outside,
        span=max(b for _, b in kept) - min(a for a, _ in kept) if kept else None,
    )


def _check_rules(
    c: _Checker,
    profile: Mapping,
    *,
    count: int,
    kept: bool,
    outside: int,
    first_outside: int | None,
    span: float | None,
) -> None:
    """The rules after the types, on ``count`` samples: ``kept`` whether any survives
    Relay's thread filter, ``outside`` how many name a stack that does not exist (the first at
    index ``first_outside``, when known), ``span`` the time from the first to the last kept
    sample."""
    if not kept:
        c.fail(
            NOT_ENOUGH_SAMPLES,
            f"no thread has two or more non-idle samples ({count} samples in all)",
        )
    stacks, frames = profile["stacks"], profile["frames"]
    if outside:
        where = f" (first: samples[{first_outside}])" if first_outside is not None else ""
        c.fail(
            MALFORMED_SAMPLES,
            f"{outside} samples name a stack outside the {len(stacks)} stacks{where}",
        )
    n_frames = len(frames)  # the stacks' types are checked: lists of ints >= 0
    bad = [i for i, stack in enumerate(stacks) if stack and max(stack) >= n_frames]
    if bad:
        c.fail(
            MALFORMED_STACKS,
            f"{len(bad)} stacks name a frame outside the {len(frames)} frames "
            f"(first: stacks[{bad[0]}])",
        )
    if span is not None and span > MAX_SAMPLE_SPAN_SECONDS:
        c.fail(
            DURATION_IS_TOO_LONG,
            f"samples span {span:.3f} s (more than {MAX_SAMPLE_SPAN_SECONDS:g} s)",
        )


def validate_chunk(
    chunk: Mapping | bytes | str, *, size: int | None = None, samples: SampleFacts | None = None
) -> list[Problem]:
    """Every problem Relay would find in ``chunk`` (a decoded JSON object, or its JSON text);
    an empty list means it would be accepted. ``size`` is the payload's length in bytes when the
    caller already serialized it (otherwise it is measured). With ``samples``, the facts stand
    for ``profile.samples`` (which is not read, and is best left empty): the builder's shortcut.
    """
    c = _Checker()
    if isinstance(chunk, bytes | bytearray | str):
        size = len(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
        try:
            chunk = json.loads(chunk, parse_constant=_reject_constant)
        except ValueError as exc:
            return [Problem(INVALID_JSON, f"not JSON: {exc}")]
    elif size is None:
        try:
            size = len(json.dumps(chunk, allow_nan=False, separators=(",", ":")).encode("utf-8"))
        except (TypeError, ValueError) as exc:
            return [Problem(INVALID_JSON, f"cannot be written as JSON: {exc}")]
    if size > MAX_CHUNK_BYTES:
        c.fail(EXCEED_SIZE_LIMIT, f"{size} bytes (limit {MAX_CHUNK_BYTES})")
    if not isinstance(chunk, Mapping):
        c.json("the payload is not a JSON object")
        return c.problems
    _check_top(c, chunk)
    profile = chunk.get("profile")
    if not isinstance(profile, Mapping):
        c.json("profile: missing or not an object")
        return c.problems
    if samples is not None:
        profile = {**profile, "samples": []}
        for tid, span in samples.spans.items():
            if not all(map(_is_finite, span)):
                c.json(f"profile.samples: a timestamp of thread {tid!r} is not a finite number")
    facts = _check_profile_types(c, profile)
    if facts is not None and not any(p.reason == INVALID_JSON for p in c.problems):
        _check_fact_rules(c, profile, facts if samples is None else samples)
    return c.problems


def check_chunk(chunk: Mapping | bytes | str, *, size: int | None = None) -> None:
    """Raise :class:`ChunkInvalid` if :func:`validate_chunk` finds anything."""
    problems = validate_chunk(chunk, size=size)
    if problems:
        raise ChunkInvalid(problems)
