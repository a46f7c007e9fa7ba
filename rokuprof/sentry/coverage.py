"""What a chunk covered: its busy samples per call path and its last sample's time (pure).

A crashed session's catch-up subtracts what its chunks already covered from the archive
(:mod:`rokuprof.capture.catchup`). A chunk the spool dropped because it was full is deleted, so
its dropped marker keeps the chunk's :func:`coverage`, a few hundred bytes instead of the chunk:
the catch-up then counts it as covered and does not build its samples again.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping

PathKey = tuple[str, ...]  # a call path's frames (canonical JSON), leaf first
COVERED = "covered"  # the key of a dropped marker's coverage


def chunk_samples(payload: Mapping) -> tuple[Counter, float | None]:
    """Busy samples per call path in one chunk payload (or in a :func:`coverage` of one), and
    its last sample's timestamp."""
    if COVERED in payload:
        return _read_coverage(payload[COVERED])
    profile = payload["profile"]
    frames = [json.dumps(f, sort_keys=True, ensure_ascii=False) for f in profile["frames"]]
    keys = [tuple(frames[i] for i in stack) for stack in profile["stacks"]]
    counts: Counter = Counter()
    last = None
    for sample in profile["samples"]:
        key = keys[sample["stack_id"]]
        if key:
            counts[key] += 1
        ts = sample["timestamp"]
        last = ts if last is None else max(last, ts)
    return counts, last


def coverage(payload: Mapping) -> dict:
    """A JSON-able summary of what the chunk ``payload`` covered, which :func:`chunk_samples`
    reads as it reads the chunk."""
    counts, last = chunk_samples(payload)
    frames: dict[str, int] = {}
    paths = [[frames.setdefault(frame, len(frames)) for frame in key] for key in counts]
    return {
        COVERED: {
            "frames": [json.loads(frame) for frame in frames],
            "paths": paths,
            "samples": list(counts.values()),
            "last": last,
        }
    }


def _read_coverage(covered: Mapping) -> tuple[Counter, float | None]:
    frames = [json.dumps(f, sort_keys=True, ensure_ascii=False) for f in covered["frames"]]
    counts: Counter = Counter()
    for path, n in zip(covered["paths"], covered["samples"], strict=True):
        counts[tuple(frames[i] for i in path)] += int(n)
    last = covered["last"]
    return counts, None if last is None else float(last)
