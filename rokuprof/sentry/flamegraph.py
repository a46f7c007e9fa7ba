"""The time Sentry computes from chunks: what its flamegraph would show (pure helper).

Sentry (after Relay drops every thread with at most one non-idle sample) sorts each thread's
samples by timestamp and gives every sample the time until the next sample on the same thread;
the last sample of a thread gets nothing, and idle samples (empty stacks) count for no function.
Used by the tests to prove that chunks carry the same time as the ``.bsprof`` tables.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from itertools import pairwise

from rokuprof.sentry.validate import kept_samples

#: A frame as the flamegraph identifies it: (function, abs_path).
FrameKey = tuple[str, str]


def sample_durations(chunk: Mapping) -> Iterable[tuple[str, list[int], float]]:
    """``(thread_id, stack, seconds)`` for every sample Sentry keeps, with the time it gets."""
    profile = chunk["profile"]
    stacks = profile["stacks"]
    by_thread: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for s in kept_samples(profile):
        by_thread[s["thread_id"]].append((s["timestamp"], s["stack_id"]))
    for tid, samples in by_thread.items():
        samples.sort(key=lambda t: t[0])  # stable, as Relay's sort
        for (t, sid), (t_next, _) in pairwise(samples):
            yield tid, stacks[sid], t_next - t
        # the last sample of a thread lasts nothing


def stack_times(chunks: Iterable[Mapping]) -> dict[tuple[str, tuple[FrameKey, ...]], float]:
    """Seconds per (thread name, stack leaf first) over all ``chunks``; idle time left out."""
    out: dict[tuple[str, tuple[FrameKey, ...]], float] = defaultdict(float)
    for chunk in chunks:
        profile = chunk["profile"]
        frames = profile["frames"]
        names = {tid: meta.get("name", tid) for tid, meta in profile["thread_metadata"].items()}
        for tid, stack, seconds in sample_durations(chunk):
            if stack:
                key = tuple((frames[f]["function"], frames[f]["abs_path"]) for f in stack)
                out[(names.get(tid, tid), key)] += seconds
    return dict(out)


def function_self_times(chunks: Iterable[Mapping]) -> dict[tuple[str, str, str], float]:
    """Self seconds per (thread name, function, abs_path): the leaf frame of each sample, the
    same key as :func:`rokuprof.profile.aggregate_functions` (module, function, file)."""
    out: dict[tuple[str, str, str], float] = defaultdict(float)
    for (thread, stack), seconds in stack_times(chunks).items():
        function, path = stack[0]
        out[(thread, function, path)] += seconds
    return dict(out)
