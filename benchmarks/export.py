"""Export cost and fidelity: size and time of every format, against decoding alone.

    python benchmarks/export.py                          # samples/cafe-tv-long.bsprof and a
                                                         # generated 40 MB stream (cached)
    python benchmarks/export.py --file X.bsprof          # your own file
    python benchmarks/export.py --mb 10 --no-sample      # a smaller generated stream only

For each input it prints: decoding alone (``ProfileReader``, the baseline), decoding plus laying
out the timeline (``build_input``, what ``rokuprof export`` does before writing), then per format
the bytes written, the time and its ratio to the baseline, and the worst per-function difference
of self wall time against ``inspect`` (0 for formats that carry the tables' integers; for formats
that carry the 101 Hz timeline, in ms and in sample periods). Peak memory is the process's
maximum RSS after each input.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode import CACHE, synthetic_stream

from rokuprof.export import FORMATS, export_parts, input_from_bytes
from rokuprof.export.model import IDLE
from rokuprof.export.sentry_v1 import build as build_v1
from rokuprof.profile.functions import aggregate_functions
from rokuprof.profile.reader import ProfileReader

ROOT = Path(__file__).resolve().parent.parent
# Formats whose per-function figures are the tables' exact counters (speedscope: its weighted
# profiles, beside a timeline; report: per call path, beside its timeline strip).
EXACT = {"pprof", "folded", "speedscope", "report"}


def timed(fn):
    t = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t


def worst_differences(inp) -> dict[str, tuple[float, float]]:
    """Per format: the worst |difference| of a function's self wall vs inspect in ms and in
    sample periods, and the worst such difference divided by the function's call paths."""
    units = inp.run.units_per_second
    hz = inp.timeline.hz
    inspect = {
        (f.module, f.function, f.file): f.self_wall for f in aggregate_functions(inp.reader.tables)
    }
    exact: Counter = Counter()
    for p in inp.paths:
        f = inp.frames[p.frames[0]]
        exact[(inp.threads[p.thread], f.function, f.file)] += p.wall
    timeline: Counter = Counter()
    for thread, runs in inp.timeline.runs.items():
        for _, sid, n in runs:
            if sid != IDLE:
                f = inp.frames[inp.timeline.stacks[sid][0]]
                timeline[(inp.threads[thread], f.function, f.file)] += n
    v1 = timeline.copy()
    for (thread, sid), n in build_v1(inp).dropped.items():
        f = inp.frames[inp.timeline.stacks[sid][0]]
        v1[(inp.threads[thread], f.function, f.file)] -= n

    def worst_exact() -> tuple[float, float, float]:
        d = max(
            (abs(exact[k] - inspect.get(k, 0)) for k in exact.keys() | inspect.keys()), default=0
        )
        return d / units * 1000, d / units * hz, 0.0

    paths: Counter = Counter()
    for p in inp.paths:
        if p.wall:
            f = inp.frames[p.frames[0]]
            paths[(inp.threads[p.thread], f.function, f.file)] += 1

    def worst_samples(counts: Counter) -> tuple[float, float, float]:
        keys = counts.keys() | inspect.keys()
        diff = {k: abs(counts[k] / hz - inspect.get(k, 0) / units) for k in keys}
        d = max(diff.values(), default=0.0)
        per_path = max((diff[k] * hz / max(1, paths[k]) for k in keys), default=0.0)
        return d * 1000, d * hz, per_path

    out = {}
    for name in FORMATS:
        if name in EXACT:
            out[name] = worst_exact()
        elif name == "sentry-v1":
            out[name] = worst_samples(v1)
        else:
            out[name] = worst_samples(timeline)
    out["(timeline)"] = worst_samples(timeline)
    return out


def measure(data: bytes, label: str, repeat: int) -> None:
    print(f"\n== {label}: {len(data) / 1e6:.1f} MB")
    base = min(timed(lambda: ProfileReader.from_bytes(data))[1] for _ in range(repeat))
    inp, build = None, float("inf")
    for _ in range(repeat):
        inp, t = timed(lambda: input_from_bytes(data))
        build = min(build, t)
    assert inp is not None
    print(
        f"run {inp.run.duration:.1f} s, {len(inp.paths):,} call paths, "
        f"{sum(inp.timeline.samples(t) for t in inp.timeline.runs):,} timeline samples; "
        f"status {inp.run.status}"
    )
    print(f"{'decode only (baseline)':<24}{base:8.2f} s   1.00x")
    print(f"{'decode + timeline':<24}{build:8.2f} s   {build / base:5.2f}x")
    diffs = worst_differences(inp)
    print(
        f"{'format':<14}{'bytes':>14}{'time s':>9}{'x base':>8}   worst self-wall diff vs inspect"
    )
    for name in FORMATS:
        parts, t = None, float("inf")
        for _ in range(repeat):
            parts, dt = timed(lambda name=name: export_parts(inp, name))
            t = min(t, dt)
        size = sum(map(len, parts.values()))
        ms, periods, per_path = diffs[name]
        kind = "exact integers" if name in EXACT else "timeline"
        print(
            f"{name:<14}{size:>14,}{t:>9.3f}{t / base:>8.2f}   "
            f"{ms:8.2f} ms = {periods:5.2f} periods, {per_path:4.2f} per call path ({kind})"
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS so far: {rss:.0f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, action="append", help="measure this .bsprof")
    parser.add_argument("--mb", type=int, default=40, help="generated stream size (0: none)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (best kept)")
    parser.add_argument("--no-sample", action="store_true", help="skip samples/cafe-tv-long")
    args = parser.parse_args()
    inputs: list[tuple[str, Path | None]] = [(str(f), f) for f in args.file or []]
    if not args.file and not args.no_sample:
        inputs.append(("samples/cafe-tv-long.bsprof", ROOT / "samples" / "cafe-tv-long.bsprof"))
    for label, path in inputs:
        measure(path.read_bytes(), label, args.repeat)
    if args.mb and not args.file:
        CACHE.mkdir(exist_ok=True)
        path = CACHE / f"synthetic-{args.mb}mb-seed{args.seed}.bsprof"
        if not path.exists():
            print(f"building {args.mb} MB synthetic stream (cached in {path}) ...", flush=True)
            path.write_bytes(synthetic_stream(args.mb * 1_000_000, args.seed))
        measure(path.read_bytes(), f"generated {args.mb} MB stream", args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
