"""Memory a device can make rokuprof hold, per thing it defines, and per device at the limits.

    python benchmarks/memory.py                       # measure this checkout
    python benchmarks/memory.py --baseline ../old     # and another checkout, in the same run
    python benchmarks/memory.py --quick               # counts / 10 (fixed caches weigh more)
    python benchmarks/memory.py --all-limits          # also fill every default limit at once
    python benchmarks/memory.py --only "stream of line allocs"   # some kinds only
    python benchmarks/memory.py --inspect-paths       # `rokuprof inspect` of 100 k and 1 M paths

The streams are decoded by ``ProfileReader``: the native core when it is built, the pure tables
with ``ROKUPROF_PURE_PYTHON=1`` (the environment reaches every child).

Each figure comes from a fresh child process and is how much its resident set grew (``VmRSS``
from ``/proc/self/status`` after a full collection; ``peak``: ``VmHWM``), divided by the number
of things the device defined:

* **stream of paths**: end to end, as a capture holds it: a stream defining call paths (chains
  8 deep, each with some CPU) decoded in 64 KiB reads into the tables, a delta handed to the
  chunk builder every 16 reads (its IDs stay under 50,000,000, which older versions refused);
* **stream of line allocs**: end to end likewise, a stream with line data whose allocations
  fall on distinct (path, line offset) pairs (1,000 paths, each allocation freed again, so the
  live heap stays empty): the cost of a key of the allocations-per-line table;
* **stream of live allocs**: end to end likewise, a stream of allocations at distinct
  addresses that are never freed: the cost of an entry of the live heap as the core in use
  holds it (the figure the worst case uses);
* **path**: the tables alone: a call path with CPU and a call count, after ``take_delta`` (its
  delta baseline exists) and ``stack()`` (as the chunk builder asks for it);
* **allocation**: a live heap entry in the pure-Python tables alone (distinct addresses,
  never freed);
* **line key**: a distinct (path, line offset) pair with line-level CPU, after ``take_delta``;
* **module**: an executable module definition;
* **string (8 chars)** and **char**: ASCII and astral-plane text (Python stores a string with
  any astral character at 4 bytes per character); a string's fixed part is the cost of an
  8-character string minus 8 ASCII characters.

Entries are applied in decoder-sized batches; IDs and addresses are spread over the whole uint32
range (large ints cost more than small ones). The worst case per device multiplies the figures
by the default ``Limits`` (paths at the larger of the two path figures, characters at the
astral-plane rate); ``--all-limits`` fills every default limit of the tables in one process and
reports its RSS. Only public APIs are used, so ``--baseline`` works on older checkouts.

``--inspect-paths`` runs ``rokuprof inspect`` as a user does, as a process, on streams of
100,000 and 1,000,000 call paths (the stream of paths above; ``--quick``: 10,000 and 100,000) and
on the realistic stream of ``benchmarks/decode.py`` (the synthetic app, 20 MB), and prints each
one's CPU (user + system), CPU per MB, microseconds per path and peak RSS (``ru_maxrss``), with
the goals of issue 30: 1,000,000 paths under 500 MiB and at most 5x the realistic stream's CPU
per MB, and the cost per path flat as paths grow (each path from 100 k to 1 M costs at most
1.25x a path of the 100 k stream, start-up included).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BATCH = 8192  # entries per apply(): about what one 64 KiB network read decodes to
SPREAD = 2654435761  # odd multiplier: i -> i * SPREAD mod 2**32 is a bijection on uint32

START_MS = 1_795_273_445_000
STREAM = "stream of paths"  # the kind measured end to end: decoder, tables, chunk builder
LINE_ALLOCS = "stream of line allocs"  # end to end too: allocations at distinct line keys
LIVE_ALLOCS = "stream of live allocs"  # end to end too: the live heap of the core in use
LINE_ALLOC_PATHS = 1000
LIVE_ALLOC_GOAL = 64  # bytes per tracked allocation (native core)

#: Default counts per kind (``--quick`` divides them by 10).
COUNTS = {
    STREAM: 1_000_000,
    LINE_ALLOCS: 1_000_000,
    LIVE_ALLOCS: 2_000_000,
    "path": 1_000_000,
    "allocation": 2_000_000,
    "line key": 1_000_000,
    "module": 100_000,
    "string (8 chars)": 1_000_000,
    "char (ASCII)": 20_000_000,
    "char (astral)": 20_000_000,
}


def spread(i: int) -> int:
    """A distinct, non-zero uint32 for each ``i`` in ``1 .. 2**32 - 1``."""
    return (i * SPREAD) & 0xFFFFFFFF or 0xFFFFFFFF


def status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_peak() -> None:
    """Make ``VmHWM`` start again from the current RSS (Linux 4.0+), so the peak is the
    workload's own."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass  # the peak then includes start-up, which is small next to the workloads


# --- workloads (run in the child) -------------------------------------------------------------


def _strings(tables, n: int, length: int, char: str) -> None:
    """``n`` distinct strings of ``length`` characters (the decoder makes a new object for each
    string it reads; only one-character strings are shared singletons)."""
    batch = []
    for i in range(1, n + 1):
        batch.append((0, spread(i), f"{i:08d}" + char * (length - 8)))
        if len(batch) == BATCH:
            tables.apply(batch)
            batch = []
    tables.apply(batch)


def workload(kind: str, n: int, tables) -> int:
    """Define ``n`` things of ``kind`` (or, for characters, about ``n`` characters); return the
    number of things the figure is per."""
    roots = [(0, 1, "f"), (1, 1, 1)]
    tables.apply(roots)
    if kind == "path":
        for lo in range(1, n + 1, BATCH // 3):
            batch = []
            for i in range(lo, min(lo + BATCH // 3, n + 1)):
                pid = spread(i)
                caller = 0 if i % 8 == 1 else spread(i - 1)
                batch.append((2, pid, caller, 1 if not caller else 0, 0, 1, i & 0xFFFF, 1))
                batch.append((4, pid, 0, 1000 + i, 2000 + i))
                batch.append((5, pid, 1))
            tables.apply(batch)
            for pid in tables.take_delta(lines=False).paths:
                tables.stack(pid)
        tables.take_delta()
        return n
    if kind == "allocation":
        paths = 1000
        tables.apply([(2, spread(p), 0, 1, 0, 1, 1, 1) for p in range(1, paths + 1)])
        for lo in range(1, n + 1, BATCH):
            hi = min(lo + BATCH, n + 1)
            batch = [
                (3, spread(i % paths + 1), 0, 0, spread(i), 0x10000 + i) for i in range(lo, hi)
            ]
            tables.apply(batch)
        tables.take_delta()
        return n
    if kind == "line key":
        paths = 1000
        tables.apply([(2, p, 0, 1, 0, 1, 1, 1) for p in range(1, paths + 1)])
        per_path = n // paths
        for p in range(1, paths + 1):
            tables.apply([(4, p, spread(o), 1000 + o, 2000 + o) for o in range(1, per_path + 1)])
            if p % 100 == 0:
                tables.take_delta()
        tables.take_delta()
        return per_path * paths
    if kind == "module":
        for lo in range(1, n + 1, BATCH):
            tables.apply([(1, spread(i), 1) for i in range(lo, min(lo + BATCH, n + 1))])
        return n
    if kind == "string (8 chars)":
        _strings(tables, n, 8, "a")
        return n
    length = 4096
    count = n // length
    _strings(tables, count, length, "a" if kind == "char (ASCII)" else "\U0001f600")
    return count * length


def all_limits(tables) -> int:
    """Fill every default limit at once: paths, strings and their characters, modules, the live
    heap and the line table."""
    limits = tables.limits
    length = limits.max_string_table_chars // (limits.max_strings - 2)
    _strings(tables, limits.max_strings - 2, length, "\U0001f600")
    for lo in range(1, limits.max_modules, BATCH):
        tables.apply([(1, spread(i), 1) for i in range(lo, min(lo + BATCH, limits.max_modules))])
    paths = limits.max_paths - 1
    workload("path", paths, tables)
    lines_per_path = 2
    for lo in range(1, limits.max_line_keys // lines_per_path + 1, BATCH):
        hi = min(lo + BATCH, limits.max_line_keys // lines_per_path + 1)
        tables.apply([(4, spread(i % paths + 1), o, 1, 1) for i in range(lo, hi) for o in (1, 2)])
    for lo in range(1, limits.max_live_allocations + 1, BATCH):
        hi = min(lo + BATCH, limits.max_live_allocations + 1)
        tables.apply(
            [(3, spread(i % paths + 1), 0, 0, spread(i), 0x10000 + i) for i in range(lo, hi)]
        )
    tables.take_delta()
    return 1


def capture_stream(n: int) -> bytes:
    """A complete stream that defines ``n`` call paths (chains 8 deep), each with a little CPU.
    Its IDs stay under 50,000,000, which older versions refused (for ``--baseline``)."""
    from rokuprof.bsprof.encoder import encode_entries
    from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
    from rokuprof.bsprof.model import Footer, Header

    header = Header(1, 0, 0, 0, 1.0, 1.0, False, True, START_MS, "mem", "", "1", "Roku", "X", "1")

    def entries():
        yield from ((0, 1, "f"), (1, 1, 1))
        for i in range(1, n + 1):
            pid = 47 * i
            caller = 0 if i % 8 == 1 else pid - 47
            yield (2, pid, caller, 1 if not caller else 0, 0, 1, i & 0xFFFF, 1)
            yield (4, pid, 0, 100, 1000)

    body = encode_entries(entries(), False)
    return build_header(header) + body + END_MARKER + build_footer(Footer(START_MS + 60_000))


def line_alloc_stream(n: int) -> bytes:
    """A complete stream with line data: :data:`LINE_ALLOC_PATHS` call paths and ``n``
    allocations, each at a (path, line offset) pair of its own and freed right after."""
    from rokuprof.bsprof.encoder import encode_entries
    from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
    from rokuprof.bsprof.model import Footer, Header

    header = Header(1, 0, 0, 0, 1.0, 1.0, True, True, START_MS, "mem", "", "1", "Roku", "X", "1")

    def entries():
        yield from ((0, 1, "f"), (1, 1, 1))
        yield from ((2, p, 0, 1, 0, 1, 10, 1) for p in range(1, LINE_ALLOC_PATHS + 1))
        for i in range(n):
            path, offset = i % LINE_ALLOC_PATHS + 1, i // LINE_ALLOC_PATHS + 1
            address = spread(i + 1)
            yield (3, path, 0, offset, address, 32 + i % 64)
            yield (3, path, 1, offset, address, 0)

    body = encode_entries(entries(), True)
    return build_header(header) + body + END_MARKER + build_footer(Footer(START_MS + 60_000))


def live_alloc_stream(n: int) -> bytes:
    """A complete stream of :data:`LINE_ALLOC_PATHS` call paths and ``n`` allocations at
    distinct addresses, none of them freed: ``n`` entries in the live heap at the end."""
    from rokuprof.bsprof.encoder import encode_entries
    from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
    from rokuprof.bsprof.model import Footer, Header

    header = Header(1, 0, 0, 0, 1.0, 1.0, False, True, START_MS, "mem", "", "1", "Roku", "X", "1")

    def entries():
        yield from ((0, 1, "f"), (1, 1, 1))
        yield from ((2, p, 0, 1, 0, 1, 10, 1) for p in range(1, LINE_ALLOC_PATHS + 1))
        for i in range(n):
            yield (3, i % LINE_ALLOC_PATHS + 1, 0, 0, spread(i + 1), 32 + i % 64)

    body = encode_entries(entries(), False)
    return build_header(header) + body + END_MARKER + build_footer(Footer(START_MS + 60_000))


def capture(data: bytes) -> tuple[int, object]:
    """What a capture does with a stream: decode it in 64 KiB reads into the tables and hand a
    delta to the chunk builder every 16 reads (about a second of a fast device)."""
    from rokuprof.profile.reader import ProfileReader
    from rokuprof.sentry.chunk import ChunkBuilder

    reader = ProfileReader()
    builder = ChunkBuilder(reader.tables, start=START_MS / 1000)
    for i, at in enumerate(range(0, len(data), 65536)):
        reader.feed(data[at : at + 65536])
        if i % 16 == 15:
            builder.add(reader.tables.take_delta(lines=False), START_MS / 1000 + i / 16)
    builder.update(START_MS / 1000 + 60)
    if reader.status != "complete":
        raise RuntimeError(f"the stream did not decode: {reader.problem()}")
    return reader.tables.totals().paths, (reader, builder)


def child(kind: str, n: int) -> None:
    """Measure one workload in this (fresh) process and print a JSON line."""
    from rokuprof.profile.tables import ProfileTables

    make = {
        STREAM: capture_stream,
        LINE_ALLOCS: line_alloc_stream,
        LIVE_ALLOCS: live_alloc_stream,
    }.get(kind)
    data = make(n) if make else b""
    gc.collect()
    reset_peak()
    rss0 = status_kib("VmRSS")
    started = time.perf_counter()
    if kind == STREAM:
        items, _kept = capture(data)  # kept alive until measured
    elif kind in (LINE_ALLOCS, LIVE_ALLOCS):
        _, _kept = capture(data)
        items = n
    else:
        tables = ProfileTables()
        items = all_limits(tables) if kind == "all limits" else workload(kind, n, tables)
    seconds = time.perf_counter() - started
    gc.collect()
    rss = status_kib("VmRSS")
    peak = status_kib("VmHWM")
    print(
        json.dumps(
            {
                "kind": kind,
                "items": items,
                "rss": (rss - rss0) * 1024,
                "peak": (peak - rss0) * 1024,
                "process_peak": peak * 1024,
                "seconds": seconds,
            }
        )
    )


# --- parent -----------------------------------------------------------------------------------


def measure(tree: Path, kind: str, n: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(n)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        sys.exit(f"{kind} in {tree} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def core_name(tree: Path) -> str:
    """Which decoder core ``ProfileReader`` uses in ``tree`` under this environment."""
    code = (
        "try:\n    from rokuprof.profile.engine import describe\n"
        "except ImportError:\n    from rokuprof._native import describe\n"
        "print(describe())"
    )
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True, check=False
    )
    return out.stdout.strip() or "unknown (no rokuprof._native.describe)"


def default_limits(tree: Path) -> dict[str, int]:
    code = "import dataclasses, json; from rokuprof.bsprof.model import Limits; "
    code += "print(json.dumps(dataclasses.asdict(Limits())))"
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def worst_case(per: dict[str, float], limits: dict[str, int]) -> list[tuple[str, int, float]]:
    """``(what, count, bytes)`` at the default limits (characters at the astral-plane rate)."""
    fixed = per["string (8 chars)"] - 8 * per["char (ASCII)"]
    path = max(per["path"], per[STREAM])  # a capture also keeps chunk-builder state per path
    return [
        ("call paths", limits["max_paths"], limits["max_paths"] * path),
        (
            "strings (fixed part)",
            limits["max_strings"],
            limits["max_strings"] * fixed,
        ),
        (
            "string characters",
            limits["max_string_table_chars"],
            limits["max_string_table_chars"] * per["char (astral)"],
        ),
        ("modules", limits["max_modules"], limits["max_modules"] * per["module"]),
        (
            "live allocations",
            limits["max_live_allocations"],
            limits["max_live_allocations"] * per[LIVE_ALLOCS],
        ),
        ("line keys", limits["max_line_keys"], limits["max_line_keys"] * per["line key"]),
        (
            "allocation line keys",
            limits["max_line_keys"],
            limits["max_line_keys"] * per[LINE_ALLOCS],
        ),
    ]


def human(nbytes: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes:.0f} B"


INSPECT_PATHS = (100_000, 1_000_000)


def inspect_run(tree: Path, stream: Path) -> tuple[float, float]:
    """(CPU seconds, peak RSS MiB) of ``rokuprof inspect STREAM`` run from ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, "-m", "rokuprof", "inspect", str(stream)]
    with open(os.devnull, "wb") as sink:
        proc = subprocess.Popen(cmd, env=env, cwd=tree, stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
    if proc.returncode != 0:
        sys.exit(f"inspect {stream} in {tree} failed:\n{err}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def inspect_paths(trees: list[tuple[str, Path]], quick: bool) -> int:
    """``rokuprof inspect`` of many call paths against the realistic stream (see the module
    docstring)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import decode  # the realistic stream, built and cached as benchmarks/decode.py does

    cache = decode.CACHE
    cache.mkdir(exist_ok=True)
    realistic = cache / "synthetic-20mb-seed1.bsprof"
    if not realistic.exists():
        realistic.write_bytes(decode.synthetic_stream(20_000_000, 1))
    counts = [n // 10 for n in INSPECT_PATHS] if quick else list(INSPECT_PATHS)
    streams = [("realistic", realistic, 0)]
    for n in counts:
        path = cache / f"paths-{n}.bsprof"
        if not path.exists():
            path.write_bytes(capture_stream(n))
        streams.append((f"{n:,} paths", path, n))
    ok = True
    for name, tree in trees:
        print(f"\n`rokuprof inspect` ({name}: {tree}, core {core_name(tree)})")
        print(
            f"{'stream':18} {'MB':>6} {'CPU s':>7} {'CPU s/MB':>9} {'vs real':>8} "
            f"{'us/path':>8} {'peak MiB':>9}"
        )
        base = None
        per_path = []
        for label, path, n in streams:
            mb = path.stat().st_size / 1e6
            cpu, peak = inspect_run(tree, path)
            rate = cpu / mb
            base = base or rate
            us = cpu / n * 1e6 if n else 0.0
            if n:
                per_path.append((us, peak, rate / base, cpu, n))
            print(
                f"{label:18} {mb:6.1f} {cpu:7.2f} {rate:9.3f} {rate / base:7.1f}x "
                f"{us:8.2f} {peak:9.0f}"
            )
        if name == "this" and not quick:
            (small, _, _, cpu_small, n_small), (_, peak, ratio, cpu_large, n_large) = per_path
            large = (cpu_large - cpu_small) / (n_large - n_small) * 1e6  # the paths added
            for what, good in (
                (f"peak RSS of 1 M paths {peak:.0f} MiB <= 500", peak <= 500),
                (f"CPU per MB of 1 M paths {ratio:.1f}x the realistic stream's <= 5x", ratio <= 5),
                (
                    f"us a path 100 k -> 1 M / us a path at 100 k: {large / small:.2f} <= 1.25",
                    large / small <= 1.25,
                ),
            ):
                print(f"  {'meets' if good else 'MISSES'}: {what}")
                ok = ok and good
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to measure alongside")
    parser.add_argument("--quick", action="store_true", help="counts / 10")
    parser.add_argument("--all-limits", action="store_true", help="fill every limit at once")
    parser.add_argument(
        "--only",
        action="append",
        choices=list(COUNTS),
        metavar="KIND",
        help=f"measure only this kind (repeatable; no worst case): {', '.join(COUNTS)}",
    )
    parser.add_argument(
        "--inspect-paths", action="store_true", help="rokuprof inspect of 100 k and 1 M paths"
    )
    parser.add_argument("--child", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0

    trees = [("this", ROOT)]
    if args.baseline:
        trees.insert(0, ("baseline", args.baseline.resolve()))
    if args.inspect_paths:
        return inspect_paths(trees, args.quick)
    per: dict[str, dict[str, float]] = {name: {} for name, _ in trees}
    for name, tree in trees:
        print(f"{name}: {tree}, decoder core: {core_name(tree)}")
    width = max(map(len, COUNTS))
    print(f"{'bytes per':{width}} {'count':>11}", end="")
    for name, _ in trees:
        print(f" {name + ' RSS':>13} {name + ' peak':>13}", end="")
    print("  this/baseline" if args.baseline else "")
    for kind, count in COUNTS.items():
        if args.only and kind not in args.only:
            continue
        n = count // 10 if args.quick else count
        print(f"{kind:{width}} {n:11,}", end="", flush=True)
        for name, tree in trees:
            r = measure(tree, kind, n)
            per[name][kind] = r["rss"] / r["items"]
            print(f" {r['rss'] / r['items']:13.1f} {r['peak'] / r['items']:13.1f}", end="")
        if args.baseline:
            print(f"  {per['this'][kind] / per['baseline'][kind]:13.2f}", end="")
        print(flush=True)
    if args.only:
        return 0

    for name, tree in trees:
        rows = worst_case(per[name], default_limits(tree))
        print(f"\nworst case per device at the default limits ({name}: {tree}):")
        for what, count, nbytes in rows:
            print(f"  {what:22} {count:>11,}  {human(nbytes):>11}")
        print(f"  {'total':22} {'':>11}  {human(sum(b for _, _, b in rows)):>11}")
        if args.all_limits:
            r = measure(tree, "all limits", 0)
            print(
                f"  measured, the tables with every limit filled at once: RSS +{human(r['rss'])}"
                f" (process peak {human(r['process_peak'])}, {r['seconds']:.0f} s)"
            )
    goal = 400
    path = max(per["this"]["path"], per["this"][STREAM])
    verdict = "meets" if path <= goal else "MISSES"
    print(f"\nper call path {verdict} the {goal} B goal ({path:.0f} B)")
    live = per["this"][LIVE_ALLOCS]
    verdict = "meets" if live <= LIVE_ALLOC_GOAL else "MISSES"
    goal = f"the {LIVE_ALLOC_GOAL} B goal of the native core"
    print(f"per live allocation {verdict} {goal} ({live:.0f} B)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
