"""Chunk building alone: a pre-decoded delta sequence through ChunkBuilder, this tree vs another.

    python benchmarks/chunks.py                          # the 40 MB generated stream (cached)
    python benchmarks/chunks.py --baseline /tmp/before   # and an earlier checkout, same run
    python benchmarks/chunks.py --file X.bsprof --wall-unit ms

The stream is decoded first, in slices as ``rokuprof convert`` cuts it (``default_slice_bytes``),
keeping each slice's wall-self time per call path, live heap and memory flag: the deltas a live
capture or a conversion hands the builder. Only what follows is timed: ``add_wall`` for every
slice at an arrival time spread over the run by byte position, ``ready()`` after each, and
``finish``. It prints chunks per second, megabytes of chunk JSON per second, and the share of the
time spent writing JSON and validating chunks (measured by wrapping the functions the builder of
that tree calls for them: ``json.dumps`` before the chunk writer existed, ``samples_json`` and
``chunk_json`` after; ``validate_chunk`` in both).

Each tree is measured in its own child process (``PYTHONPATH`` = the tree) on the same stream
with the same chunk ids, so the chunk bytes can be compared too.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


class Timed:
    """Wraps a callable and adds up the time spent in it."""

    def __init__(self, fn) -> None:
        self.fn = fn
        self.seconds = 0.0

    def __call__(self, *args, **kwargs):
        t = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t


class TimedJson:
    """The ``json`` module with ``dumps`` timed (for a builder that calls ``json.dumps``)."""

    def __init__(self, module, timer: Timed) -> None:
        self._module = module
        self.dumps = timer

    def __getattr__(self, name: str):
        return getattr(self._module, name)


def worker(path: Path, wall_unit: str, repeat: int) -> dict:
    """Decode ``path`` into deltas, then time the builder over them (in the tree on sys.path)."""
    import rokuprof.sentry.chunk as chunk_module
    from rokuprof.profile.reader import ProfileReader

    with contextlib.suppress(ImportError):  # where chunks are written and checked now (the
        import rokuprof.sentry.assemble as chunk_module  # builder's own module before the split)
    from rokuprof.sentry.chunk import ChunkBuilder, delta_walls
    from rokuprof.sentry.convert import default_slice_bytes
    from rokuprof.sentry.settings import ChunkSettings

    data = path.read_bytes()
    step = default_slice_bytes(len(data))
    reader = ProfileReader()
    deltas = []
    for offset in range(0, len(data), step):
        reader.feed(data[offset : offset + step])
        delta = reader.tables.take_delta(lines=False)
        walls, memory = delta_walls(delta)
        deltas.append((min(offset + step, len(data)), walls, delta.live_bytes, memory))
    reader.close()
    header, footer = reader.header, reader.footer
    start = header.start_ms / 1000
    end = footer.end_ms / 1000 if footer else start + 3600
    body = header.header_size
    settings = ChunkSettings(wall_unit=wall_unit)

    writers = ("samples_json", "chunk_json")
    if all(hasattr(chunk_module, name) for name in writers):
        json_timers = [Timed(getattr(chunk_module, name)) for name in writers]
        for timer, name in zip(json_timers, writers, strict=True):
            setattr(chunk_module, name, timer)
    else:  # a builder that writes its payload with json.dumps
        json_timers = [Timed(json.dumps)]
        chunk_module.json = TimedJson(json, json_timers[0])
    validate = chunk_module.validate_chunk = Timed(chunk_module.validate_chunk)

    best = None
    for _ in range(repeat):
        for timer in [*json_timers, validate]:
            timer.seconds = 0.0
        ids = itertools.count(1)
        builder = ChunkBuilder(
            reader.tables,
            start,
            header=header,
            settings=settings,
            profiler_id="f" * 32,
            new_id=lambda ids=ids: f"{next(ids):032x}",
        )
        chunks = []
        t = time.perf_counter()
        for offset, walls, live_bytes, memory in deltas:
            fraction = (offset - body) / (len(data) - body)
            arrival = start + (end - start) * min(1.0, max(0.0, fraction))
            builder.add_wall(walls, arrival, live_bytes=live_bytes, memory=memory)
            chunks += builder.ready()
        chunks += builder.finish(end).chunks
        seconds = time.perf_counter() - t
        if best is None or seconds < best["seconds"]:
            digest = hashlib.sha256()
            for c in chunks:
                digest.update(c.data)
            best = {
                "seconds": seconds,
                "json": sum(timer.seconds for timer in json_timers),
                "validate": validate.seconds,
                "chunks": len(chunks),
                "bytes": sum(len(c.data) for c in chunks),
                "samples": sum(c.samples for c in chunks),
                "deltas": len(deltas),
                "sha256": digest.hexdigest(),
            }
    assert best is not None
    return best


def measure(tree: Path, args: argparse.Namespace, path: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [
            *(sys.executable, __file__, "--worker", str(path)),
            *("--wall-unit", args.wall_unit, "--repeat", str(args.repeat)),
        ],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        sys.exit(f"worker in {tree} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, help="build chunks from this .bsprof instead")
    parser.add_argument("--mb", type=int, default=40, help="size of the generated stream (MB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--wall-unit", default="us", help="wall unit the builder assumes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tree (best kept)")
    parser.add_argument("--baseline", type=Path, help="an earlier checkout to compare with")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.wall_unit, args.repeat)))
        return 0

    from decode import CACHE, synthetic_stream

    if args.file:
        path = args.file.resolve()  # the workers run in their tree
    else:
        CACHE.mkdir(exist_ok=True)
        path = CACHE / f"synthetic-{args.mb}mb-seed{args.seed}.bsprof"
        if not path.exists():
            print(f"building {args.mb} MB synthetic stream (cached in {path}) ...", flush=True)
            path.write_bytes(synthetic_stream(args.mb * 1_000_000, args.seed))
    trees = [("current", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    load = os.getloadavg()[0]
    results = {name: measure(tree, args, path) for name, tree in trees}
    first = results["current"]
    print(
        f"stream: {path} ({path.stat().st_size / 1e6:.1f} MB), wall unit {args.wall_unit}: "
        f"{first['deltas']} deltas -> {first['chunks']} chunks, {first['samples']:,} samples, "
        f"{first['bytes'] / 1e6:.1f} MB of JSON; load average {load:.1f} -> "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(
        f"\n{'':10} {'seconds':>8} {'chunks/s':>9} {'JSON MB/s':>10} {'samples/s':>11} "
        f"{'JSON %':>7} {'validate %':>11}"
    )
    for name, r in results.items():
        s = r["seconds"]
        json_share, validate_share = 100 * r["json"] / s, 100 * r["validate"] / s
        print(
            f"{name:10} {s:8.3f} {r['chunks'] / s:9.1f} {r['bytes'] / 1e6 / s:10.1f} "
            f"{r['samples'] / s:11,.0f} {json_share:6.1f}% {validate_share:10.1f}%"
        )
    if args.baseline:
        base = results["baseline"]
        same = base["sha256"] == first["sha256"]
        print(
            f"\ncurrent vs baseline: {base['seconds'] / first['seconds']:.2f}x faster; "
            f"JSON {base['json'] / max(first['json'], 1e-9):.1f}x less time, validation "
            f"{base['validate'] / max(first['validate'], 1e-9):.1f}x less; chunk bytes "
            + ("identical" if same else "DIFFER")
        )
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
