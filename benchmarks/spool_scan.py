"""Start-up scan of a large upload backlog: time and the memory the uploader keeps.

Creates ``--chunks`` pending chunk files (default 200,000) spread over ``--sessions`` session
directories in a temporary directory, then measures:

* ``walk``: a bare ``os.scandir`` walk that stats every chunk file once - the floor any scan
  that needs sizes and ages must pay; the baseline of the ratios, measured in the same run;
* ``rescan``: the uploader's start-up scan (:meth:`Uploader.rescan`), best of ``--repeat``;
* the memory the uploader holds afterwards (tracemalloc, after a collection) and the peak
  during the scan, in total and per pending chunk, and what it holds after scanning an empty
  spool (the baseline: the rest is the backlog's share).

The page cache is warm (the files were just written). Point ``PYTHONPATH`` at another checkout
to measure other code with the same script::

    python benchmarks/spool_scan.py
    PYTHONPATH=/tmp/before python benchmarks/spool_scan.py
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from rokuprof.sentry.dsn import Dsn
from rokuprof.store.spool import Spool
from rokuprof.store.uploader import Uploader

# never contacted: rescan does no network I/O
DSN = "http://0123456789abcdef0123456789abcdef@127.0.0.1:9/1"


def create(root: Path, chunks: int, sessions: int, size: int) -> None:
    """``chunks`` files of ``size`` bytes under ``root/dev<N>/<session>/chunks/`` (no fsync:
    this is set-up, not what is measured)."""
    payload = b"{" + b" " * max(0, size - 2) + b"}"
    per_session = -(-chunks // sessions)
    made = 0
    start = time.monotonic()
    for s in range(sessions):
        chunk_dir = root / f"dev{s % 4}" / f"20260101T{s // 60:02d}{s % 60:02d}00.000Z-{s:08x}"
        chunk_dir = chunk_dir / "chunks"
        chunk_dir.mkdir(parents=True)
        for i in range(1, min(per_session, chunks - made) + 1):
            with open(chunk_dir / f"{i:06d}.json", "wb") as f:
                f.write(payload)
        made += min(per_session, chunks - made)
        if sys.stderr.isatty():
            print(f"\rcreating chunk files: {made:,}/{chunks:,}", end="", file=sys.stderr)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(
        f"created {made:,} chunk files in {sessions} sessions in {time.monotonic() - start:.1f} s"
    )


def walk(root: Path) -> tuple[int, int]:
    """The baseline: list every directory once, stat every chunk file once."""
    count = total = 0
    for device in os.scandir(root):
        for session in os.scandir(device.path):
            for entry in os.scandir(os.path.join(session.path, "chunks")):
                count += 1
                total += entry.stat().st_size
    return count, total


def best_of(repeat: int, fn) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def rescan(root: Path) -> Uploader:
    uploader = Uploader(Spool(root), Dsn.parse(DSN))
    asyncio.run(uploader.rescan())
    return uploader


def held_memory(root: Path) -> tuple[int, int]:
    """(bytes an uploader holds after scanning ``root``, peak bytes during the scan), traced
    after a warm-up scan so that one-time allocations (imports, caches) do not count."""
    rescan(root)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = [rescan(root)]  # keep it alive while measuring what it holds
    gc.collect()
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del held
    return kept - before, peak - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=200_000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--chunk-bytes", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import rokuprof

    print(f"rokuprof from {Path(rokuprof.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="spool-scan-") as tmp:
        root = Path(tmp)
        create(root, args.chunks, args.sessions, args.chunk_bytes)

        t_walk, (count, total) = best_of(args.repeat, lambda: walk(root))
        t_scan, uploader = best_of(args.repeat, lambda: rescan(root))
        pending = uploader.pending
        if pending != count or uploader.pending_bytes != total:
            raise SystemExit(
                f"scan found {pending} pending ({uploader.pending_bytes} B), "
                f"expected {count} ({total} B)"
            )
        del uploader

        kept, peak = held_memory(root)
        empty = root / "empty"
        empty.mkdir()
        kept_empty, _ = held_memory(empty)

    print(f"walk (scandir + 1 stat per file, baseline): {t_walk:.3f} s")
    print(
        f"uploader start-up scan of {count:,} pending chunks: {t_scan:.3f} s "
        f"({t_scan / t_walk:.2f}x the walk, {t_scan / count * 1e6:.1f} us per chunk)"
    )
    print(
        f"uploader memory after the scan: {kept / 2**20:.2f} MiB ({kept / count:.1f} B per"
        f" pending chunk; {kept_empty / 2**20:.2f} MiB after scanning an empty spool, so"
        f" {(kept - kept_empty) / 2**20:.2f} MiB is the backlog's share)"
    )
    print(f"peak memory during the scan: {peak / 2**20:.2f} MiB ({peak / count:.1f} B per chunk)")


if __name__ == "__main__":
    main()
