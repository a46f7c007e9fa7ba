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
from collections.abc import Mapping, Sequence
from itertools import chain, compress

#: A run of samples on one thread: (first slot, stack id, number of samples, one slot apart).
Run = tuple[int, int, int]


def dumps(value: object) -> str:
    """Compact JSON, as chunks are written (UTF-8 kept, no NaN or infinity)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def samples_json(threads: Sequence[tuple[str, Sequence[Run]]], origin: float, hz: int) -> str:
    """The items of ``profile.samples`` (without the brackets) for the runs of each thread."""
    threads = sorted(((tid, runs) for tid, runs in threads if runs), key=lambda t: t[0])
    if not threads:
        return ""
    first = min(slot for _, runs in threads for slot, _, _ in runs)
    last = max(slot + n - 1 for _, runs in threads for slot, _, n in runs)
    for t in (origin + first / hz, origin + last / hz):
        if not math.isfinite(t):
            raise ValueError(f"sample timestamp {t!r} is not JSON compliant")
    k = len(threads)
    cells: list[str | None] = [None] * ((last - first + 1) * k)
    count = 0
    for rank, (tid, runs) in enumerate(threads):
        tail = f',"thread_id":{dumps(tid)},"stack_id":'
        texts: dict[int, str] = {}
        for slot, sid, n in runs:
            text = texts.get(sid)
            if text is None:
                text = texts[sid] = f"{tail}{sid}}}"
            i = (slot - first) * k + rank
            cells[i : i + n * k : k] = [text] * n
            count += n
    if len(cells) - cells.count(None) != count:  # two samples in one cell: sort them instead
        return _sorted_samples_json(threads, origin, hz)
    # '{"timestamp":' + repr(origin + slot / hz) per slot, the loop in C
    per_slot = map(float(hz).__rtruediv__, range(first, last + 1))
    stamps = list(
        map('{"timestamp":'.__add__, map(float.__repr__, map(float(origin).__add__, per_slot)))
    )
    if k > 1:
        stamps = list(chain.from_iterable(zip(*[stamps] * k, strict=True)))
    return ",".join(map(str.__add__, compress(stamps, cells), filter(None, cells)))


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
    samples: str,
    measurements: Mapping[str, object] | None = None,
) -> bytes:
    """The whole chunk as UTF-8 JSON: ``head``'s fields, then ``profile`` (its ``frames``,
    ``stacks``, the ``samples`` text and ``thread_metadata``), then ``measurements``."""
    fields = [dumps(head)[1:-1]] if head else []
    fields.append(
        f'"profile":{{"frames":{dumps(profile["frames"])},"stacks":{dumps(profile["stacks"])},'
        f'"samples":[{samples}],"thread_metadata":{dumps(profile["thread_metadata"])}}}'
    )
    if measurements is not None:
        fields.append(f'"measurements":{dumps(measurements)}')
    return ("{" + ",".join(fields) + "}").encode("utf-8")
