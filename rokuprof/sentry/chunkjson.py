"""A V2 chunk's JSON text written straight from the placed runs, without a dict per sample.

The text is byte for byte what ``json.dumps(payload, ensure_ascii=False, separators=(",", ":"),
allow_nan=False)`` gives for the same payload: the same key order, floats as ``repr`` writes them.
So ``json.loads`` of the text is the payload, and the builder never makes the payload itself.

Samples come in time order, then by thread id (compared as strings), one object per sample::

    {"timestamp":1795273445.0099010,"thread_id":"1","stack_id":3}

A sample's time is ``origin + slot / hz`` (a slot is one sampling period). Its text is the text
of its slot's timestamp plus that of its thread and stack, both made once per chunk; the samples
are put in order by writing each run into a grid of (slot, thread) cells, so the cost per sample
is one string concatenation in C.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, compress
from operator import itemgetter

import orjson

from rokuprof.profile import engine

#: A run of samples on one thread: (first slot, stack id, number of samples, one slot apart).
Run = tuple[int, int, int]
#: A chunk whose grid of (slot, thread) cells has more than this many cells per sample is
#: written from its samples sorted rather than from the grid (each costs about as much).
SPARSE = 4
#: Floats whose orjson text is the text ``repr`` gives (outside it ``repr`` writes exponents
#: such as ``1e+16`` and ``1e-05``, orjson ``1e16``; sample times are epoch seconds, inside).
REPR_RANGE = (1.0, 1e15)


#: Compact JSON, as chunks are written (UTF-8 kept, no NaN or infinity); made once, since
#: ``json.dumps`` with options builds a new encoder per call.
dumps: Callable[[object], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
).encode


def samples_json(threads: Sequence[tuple[str, Sequence[Run]]], origin: float, hz: int) -> bytes:
    """The items of ``profile.samples`` (without the brackets) for the runs of each thread, as
    UTF-8: by the native core's writer when the native engine is in use (the same bytes; it
    declines runs the builder never lays, which are then written here)."""
    threads = sorted(((tid, runs) for tid, runs in threads if runs), key=lambda t: t[0])
    if not threads:
        return b""
    native = engine.native_function("samples_text")
    if native is not None:
        tails = [(f',"thread_id":{dumps(tid)},"stack_id":'.encode(), runs) for tid, runs in threads]
        text = native(tails, float(origin), hz, orjson.dumps)
        if text is not None:
            return text
    return _samples_text(threads, origin, hz).encode()


def _samples_text(threads: Sequence[tuple[str, Sequence[Run]]], origin: float, hz: int) -> str:
    """:func:`samples_json` in Python, as text, for threads sorted by id, each with runs."""
    first = min(slot for _, runs in threads for slot, _, _ in runs)
    last = max(slot + n - 1 for _, runs in threads for slot, _, n in runs)
    for t in (origin + first / hz, origin + last / hz):
        if not math.isfinite(t):
            raise ValueError(f"sample timestamp {t!r} is not JSON compliant")
    k = len(threads)
    count = sum(n for _, runs in threads for _, _, n in runs)
    if count * SPARSE < (last - first + 1) * k:
        return _sparse_samples_json(threads, origin, hz, first)
    cells: list[str | None] = [None] * ((last - first + 1) * k)
    for rank, (tid, runs) in enumerate(threads):
        texts = _tail_texts(tid)
        for slot, sid, n in runs:
            i = (slot - first) * k + rank
            cells[i : i + n * k : k] = [texts(sid)] * n
    if len(cells) - cells.count(None) != count:  # two samples in one cell: sort them instead
        return _sorted_samples_json(threads, origin, hz)
    # '{"timestamp":' + repr(origin + slot / hz) per slot, the loop in C
    stamps = _stamps(range(first, last + 1), origin, hz)
    if k > 1:
        stamps = list(chain.from_iterable(zip(*[stamps] * k, strict=True)))
    return ",".join(map(str.__add__, compress(stamps, cells), filter(None, cells)))


def _tail_texts(tid: str) -> Callable[[int], str]:
    """A thread's sample text after its timestamp, per stack id (each made once)."""
    tail = f',"thread_id":{dumps(tid)},"stack_id":'
    texts: dict[int, str] = {}

    def text(sid: int) -> str:
        made = texts.get(sid)
        if made is None:
            made = texts[sid] = f"{tail}{sid}}}"
        return made

    return text


def _stamps(slots: Iterable[int], origin: float, hz: int) -> list[str]:
    """``'{"timestamp":' + repr(origin + slot / hz)`` per slot, the loop in C: by orjson when
    every time lies where its text is ``repr``'s (:data:`REPR_RANGE`: both the shortest
    round-trip digits, neither with an exponent), else by ``repr`` itself."""
    times = list(map(float(origin).__add__, map(float(hz).__rtruediv__, slots)))
    low, high = REPR_RANGE
    if times and low <= min(times) and max(times) < high:
        texts: Iterable[str] = orjson.dumps(times).decode()[1:-1].split(",")
    else:
        texts = map(float.__repr__, times)
    return list(map('{"timestamp":'.__add__, texts))


def _sparse_samples_json(
    threads: Sequence[tuple[str, Sequence[Run]]], origin: float, hz: int, first: int
) -> str:
    """:func:`samples_json` for a chunk whose samples are few for its span of time (a long run
    of a mostly idle app): the cells that hold a sample, sorted, instead of the whole grid, so
    the cost follows the samples and not the span."""
    k = len(threads)
    keys: list[int] = []
    texts: list[str] = []
    for rank, (tid, runs) in enumerate(threads):
        text = _tail_texts(tid)
        for slot, sid, n in runs:
            i = (slot - first) * k + rank
            keys.extend(range(i, i + n * k, k))
            texts.extend([text(sid)] * n)
    if len(set(keys)) != len(keys):  # two samples in one cell
        return _sorted_samples_json(threads, origin, hz)
    cells = sorted(zip(keys, texts, strict=True))  # keys unique: texts never compared
    slots = map(first.__add__, map(k.__rfloordiv__, map(itemgetter(0), cells)))
    return ",".join(map(str.__add__, _stamps(slots, origin, hz), map(itemgetter(1), cells)))


def _sorted_samples_json(
    threads: Sequence[tuple[str, Sequence[Run]]], origin: float, hz: int
) -> str:
    """:func:`samples_json` for runs that overlap on a thread (the builder never lays any)."""
    rows = sorted(
        (slot + i, tid, sid) for tid, runs in threads for slot, sid, n in runs for i in range(n)
    )
    return ",".join(
        f'{{"timestamp":{origin + slot / hz!r},"thread_id":{dumps(tid)},"stack_id":{sid}}}'
        for slot, tid, sid in rows
    )


def chunk_json(
    head: Mapping[str, object],
    profile: Mapping[str, object],
    samples: bytes,
    measurements: Mapping[str, object] | None = None,
) -> bytes:
    """The whole chunk as UTF-8 JSON: ``head``'s fields, then ``profile`` (its ``frames``,
    ``stacks``, the ``samples`` text and ``thread_metadata``), then ``measurements``.

    ``head``, the frames, stacks and thread metadata hold only strings, integers and booleans:
    they are written by orjson (the same bytes as :func:`dumps` for such values, several times
    faster); the measurements hold floats and go through :func:`dumps` (NaN refused, floats as
    ``repr`` writes them)."""
    parts = [orjson.dumps(head)[1:-1], b","] if head else []
    parts += [
        b'"profile":{"frames":',
        orjson.dumps(profile["frames"]),
        b',"stacks":',
        orjson.dumps(profile["stacks"]),
        b',"samples":[',
        samples,
        b'],"thread_metadata":',
        orjson.dumps(profile["thread_metadata"]),
        b"}",
    ]
    if measurements is not None:
        parts += [b',"measurements":', dumps(measurements).encode("utf-8")]
    return b"{" + b"".join(parts) + b"}"
