"""Decode throughput: the construct reference parser vs the hand-tuned decoder (+ tables), and
the native core (decoder + tables in C, when built) vs the pure-Python decoder + tables, and
the pure-Python engine vs a plain pure-Python reader keeping the same per-path totals
(``plain_reader.py``; its totals are checked equal to the engine's first; target: >= 1x).

    python benchmarks/decode.py                 # build (once, cached) a >= 20 MB stream and measure
    python benchmarks/decode.py --file X.bsprof # measure on your own file
    python benchmarks/decode.py --only-pure     # only the pure engine against the plain reader

The stream comes from the simulator's synthetic app with line data and memory operations. It is
fed in 64 KiB pieces, as a network read would deliver it. Every figure is measured in the same run,
so the ratios hold on whatever machine runs this. The construct reference is slow (about 0.3 MB/s),
so by default it is timed on the first ``--reference-mb`` megabytes only (its rate does not
depend on the length); ``--reference-mb 0`` times it on the whole stream.

The native core is also measured against a plain C decoder written for the purpose
(``plain_decoder.c`` beside this script, compiled here with the system ``cc -O2``): it decodes
the same body and keeps the same totals (strings, modules, paths, the nine counters) with no
limits, no error detail and no line tables, once without and once with a live-allocation table
(the native core keeps one). Its totals must equal the native core's; the two are timed in
alternating rounds (``--rounds``) and the ratio of the best times is printed. The target
(issue 30): the native decoder + tables within 1.5x of the plain decoder keeping the live table.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import time
from dataclasses import astuple
from pathlib import Path

from rokuprof import _native
from rokuprof.bsprof import reference
from rokuprof.bsprof.decoder import Decoder
from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import Footer, Limits
from rokuprof.profile import engine as engines
from rokuprof.profile.reader import ProfileReader
from rokuprof.simulator.app import AppConfig, SyntheticApp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from plain_reader import PlainReader  # noqa: E402  (the baseline, beside this script)

CACHE = HERE / ".cache"
PLAIN = HERE / "plain_decoder.c"
PLAIN_TARGET = 1.5  # native decoder + tables / plain decoder keeping a live table, at most
PIECE = 64 * 1024
START_MS = 1_795_273_445_000


def synthetic_stream(min_bytes: int, seed: int) -> bytes:
    """A complete stream of at least ``min_bytes`` from a busy synthetic app."""
    app = SyntheticApp(AppConfig(seed=seed, rate=8.0, line_data=True, memory_ops=True))
    header = app.header(START_MS)
    parts = [build_header(header, pad_to=96)]
    size = len(parts[0])
    seconds = 0.0
    while size < min_bytes:
        body = encode_entries(app.advance(1.0), header.line_data)
        parts.append(body)
        size += len(body)
        seconds += 1.0
    parts += [encode_entries(app.finish(), True), END_MARKER]
    parts.append(build_footer(Footer(START_MS + int(seconds * 1000))))
    return b"".join(parts)


def load(args: argparse.Namespace) -> tuple[bytes, str]:
    if args.file:
        return args.file.read_bytes(), str(args.file)
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"synthetic-{args.mb}mb-seed{args.seed}.bsprof"
    if not path.exists():
        print(f"building {args.mb} MB synthetic stream (cached in {path}) ...", flush=True)
        path.write_bytes(synthetic_stream(args.mb * 1_000_000, args.seed))
    return path.read_bytes(), str(path)


def vars_of(stats) -> tuple[int, ...]:
    """A :class:`PathStats`' nine counters, in order."""
    return (
        stats.cpu, stats.wall, stats.calls, stats.alloc_count, stats.alloc_bytes,
        stats.free_count, stats.free_realloc_count, stats.freed_bytes, stats.unknown_frees,
    )  # fmt: skip


def timed(fn, repeat: int) -> float:
    """Best of ``repeat`` wall times (the least disturbed run)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def plain_binary() -> Path | None:
    """``plain_decoder.c`` compiled with ``cc -O2`` (cached by the source's hash)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    digest = hashlib.sha256(PLAIN.read_bytes()).hexdigest()[:12]
    binary = CACHE / f"plain_decoder-{digest}"
    if not binary.exists():
        CACHE.mkdir(exist_ok=True)
        subprocess.run([cc, "-O2", "-o", str(binary), str(PLAIN)], check=True)
    return binary


def plain_run(binary: Path, path: Path, body: int, line: bool, live: bool) -> tuple[float, list]:
    """(seconds, totals) of one plain decode of the body (best of 3 in that process)."""
    out = subprocess.run(
        [str(binary), str(path), str(body), str(int(line)), str(int(live)), "3"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), [int(x) for x in out[1:]]


def versus_plain(data: bytes, path: Path, pieces: list, rounds: int) -> int:
    """The native core (decoder + tables, as a reader feeds it) against the plain decoder,
    alternating; prints MB/s and ratios and checks the totals agree."""
    binary = plain_binary()
    if binary is None:
        print("plain C decoder: no C compiler (cc) here")
        return 0
    header, body = reference.parse_header(data, Limits())
    line = header.line_data
    best = {"native": float("inf"), "plain": float("inf"), "plain + live": float("inf")}
    totals = {}
    for _ in range(rounds):
        t = time.perf_counter()
        r = ProfileReader(engine=engines.native())
        for p in pieces:
            r.feed(p)
        best["native"] = min(best["native"], time.perf_counter() - t)
        totals["native"] = list(astuple(r.tables.totals()))
        for name, live in (("plain", False), ("plain + live", True)):
            seconds, totals[name] = plain_run(binary, path, body, line, live)
            best[name] = min(best[name], seconds)
    print(f"\nnative core vs a plain C decoder (cc -O2, {rounds} alternating rounds, best)")
    print(f"{'':28} {'MB/s':>8} {'native is':>10}")
    for name, seconds in best.items():
        ratio = best["native"] / seconds
        print(f"{name:28} {len(data) / seconds / 1e6:8.1f} {ratio:9.2f}x")
    # the plain decoder without a live table has no live or freed figures: compare the rest
    agree = totals["plain + live"] == totals["native"] and (
        totals["plain"][:10] == totals["native"][:10]
    )
    print(f"totals agree: {agree}")
    ratio = best["native"] / best["plain + live"]
    verdict = "meets" if ratio <= PLAIN_TARGET and agree else "MISSES"
    print(
        f"native decoder + tables {verdict} the {PLAIN_TARGET}x target against the plain decoder "
        f"keeping a live table ({ratio:.2f}x; {best['native'] / best['plain']:.2f}x without one)"
    )
    return 0 if agree else 1


def interleaved(data: bytes, readers: int, rounds: int) -> int:
    """The native core with many streams read in turn, as the daemon reads its devices: each
    reader is fed 16 KiB at a time, round robin, with the core's look-ahead queue off, on for
    every heap size, and as the core chooses (by its heap's size). CPU time, best of alternating
    rounds; the tables of the three must agree."""
    from rokuprof._native.reader import NativeBody

    piece = 16 * 1024
    modes = {"queue off": 1 << 62, "queue on": 0, "as the core chooses": -1}
    best = dict.fromkeys(modes, float("inf"))
    totals = {}
    for _ in range(rounds):
        for name, cells in modes.items():
            NativeBody.queue_from_cells = cells
            try:
                group = [ProfileReader(engine=engines.native()) for _ in range(readers)]
                t = time.process_time()
                for start in range(0, len(data), piece):
                    for r in group:
                        r.feed(data[start : start + piece])
                best[name] = min(best[name], time.process_time() - t)
            finally:
                NativeBody.queue_from_cells = -1
            totals[name] = {tuple(astuple(r.tables.totals())) for r in group}
    print(f"\n{readers} native readers in turn, 16 KiB each ({rounds} alternating rounds, best)")
    print(f"{'':28} {'MB/s':>8} {'vs off':>8}")
    for name, seconds in best.items():
        rate = readers * len(data) / seconds / 1e6
        print(f"{name:28} {rate:8.1f} {best['queue off'] / seconds:7.2f}x")
    agree = len({frozenset(t) for t in totals.values()}) == 1
    print(f"totals agree: {agree}")
    return 0 if agree else 1


def versus_plain_reader(data: bytes, pieces: list, rounds: int) -> int:
    """The pure engine against the plain pure-Python reader, in alternating rounds (best CPU
    time of each: the machine may be shared); their per-path totals are checked equal first."""

    def engine() -> ProfileReader:
        r = ProfileReader(engine=engines.PURE)
        for p in pieces:
            r.feed(p)
        return r

    def plain() -> PlainReader:
        r = PlainReader()
        for p in pieces:
            r.feed(p)
        return r

    totals = {pid: list(vars_of(st)) for pid, st in engine().tables.snapshot().items()}
    if totals != {pid: c for pid, c in plain().paths.items() if any(c)}:
        print("the plain reader's per-path totals differ from the engine's")
        return 1
    best = {"pure engine": float("inf"), "plain reader": float("inf")}
    for _ in range(rounds):
        for name, fn in (("pure engine", engine), ("plain reader", plain)):
            t = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - t)
    print(f"\npure engine vs the plain pure-Python reader ({rounds} alternating rounds, best CPU)")
    for name, seconds in best.items():
        print(f"{name:28} {seconds:7.2f} s {len(data) / seconds / 1e6:7.2f} MB/s")
    ratio = best["plain reader"] / best["pure engine"]
    verdict = "meets" if ratio >= 1 else "MISSES"
    print(f"pure engine {verdict} the plain reader's speed: {ratio:.2f}x (target >= 1x)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, help="measure this .bsprof instead")
    parser.add_argument("--mb", type=int, default=20, help="size of the synthetic stream (MB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    parser.add_argument("--reference-mb", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds vs plain C")
    parser.add_argument(
        "--only-plain", action="store_true", help="only the native core against plain C"
    )
    parser.add_argument(
        "--only-pure", action="store_true", help="only the pure engine against the plain reader"
    )
    parser.add_argument(
        "--interleaved",
        type=int,
        metavar="N",
        help="only N native readers fed in turn (the daemon's pattern), look-ahead queue off/on",
    )
    args = parser.parse_args()

    data, source = load(args)
    pieces = [data[i : i + PIECE] for i in range(0, len(data), PIECE)]
    check = ProfileReader.from_bytes(data)
    entries = check.entry_count
    print(f"stream: {source}")
    print(
        f"        {len(data) / 1e6:.1f} MB, {entries:,} entries, status {check.status}, "
        f"sha256 {hashlib.sha256(data).hexdigest()[:16]}"
    )
    if not check.complete:
        print(f"        warning: {check.problem()}", file=sys.stderr)
    if args.only_pure:
        return versus_plain_reader(data, pieces, args.rounds)
    if args.interleaved:
        if not _native.built():
            print("native core: not built (pip install . with a C compiler)")
            return 0
        return interleaved(data, args.interleaved, args.rounds)
    if args.only_plain:
        if not _native.built():
            print("native core: not built (pip install . with a C compiler)")
            return 0
        return versus_plain(data, Path(source), pieces, args.rounds)

    def decoder_only() -> None:
        d = Decoder()
        for p in pieces:
            d.feed(p)

    def decoder_tables() -> None:
        r = ProfileReader(engine=engines.PURE)
        for p in pieces:
            r.feed(p)

    def native_tables() -> None:
        r = ProfileReader(engine=engines.native())
        for p in pieces:
            r.feed(p)

    def plain_reader() -> PlainReader:
        r = PlainReader()
        for p in pieces:
            r.feed(p)
        return r

    pure = ProfileReader(engine=engines.PURE)
    for p in pieces:
        pure.feed(p)
    plain = plain_reader()
    totals = {pid: list(vars_of(st)) for pid, st in pure.tables.snapshot().items()}
    if totals != {pid: c for pid, c in plain.paths.items() if any(c)}:
        sys.exit("the plain reader's per-path totals differ from the engine's")

    ref_bytes = len(data) if args.reference_mb <= 0 else int(args.reference_mb * 1_000_000)
    ref_data = data[:ref_bytes]
    ref_entries = len(reference.parse(ref_data).entries)

    rows = []
    t = timed(lambda: reference.parse(ref_data), 1)
    rows.append(("construct reference parser", len(ref_data), ref_entries, t))
    t = timed(decoder_only, args.repeat)
    rows.append(("decoder", len(data), entries, t))
    t = timed(decoder_tables, args.repeat)
    rows.append(("decoder + tables", len(data), entries, t))
    t = timed(plain_reader, args.repeat)
    rows.append(("plain pure-Python reader", len(data), entries, t))
    if _native.built():
        t = timed(native_tables, args.repeat)
        rows.append(("native decoder + tables", len(data), entries, t))

    base = rows[0][1] / rows[0][3]
    print()
    print(f"{'':28} {'MB':>7} {'seconds':>8} {'MB/s':>7} {'entries/s':>11} {'vs reference':>13}")
    for name, nbytes, n, seconds in rows:
        rate = nbytes / seconds
        print(
            f"{name:28} {nbytes / 1e6:7.1f} {seconds:8.2f} {rate / 1e6:7.2f} "
            f"{n / seconds:11,.0f} {rate / base:12.1f}x"
        )
    target = 5.0
    achieved = rows[2][1] / rows[2][3] / 1e6
    verdict = "meets" if achieved >= target else "MISSES"
    print(f"\ndecoder + tables {verdict} the {target:.0f} MB/s target ({achieved:.2f} MB/s)")
    plain_rate = rows[3][1] / rows[3][3] / 1e6
    verdict = "meets" if achieved >= plain_rate else "MISSES"
    print(
        f"decoder + tables {verdict} the plain reader's speed: {achieved / plain_rate:.2f}x "
        f"({achieved:.2f} MB/s vs {plain_rate:.2f} MB/s, the same per-path totals; target >= 1x)"
    )
    if not _native.built():
        print("native core: not built (pip install . with a C compiler)")
        return 0
    native = rows[4][1] / rows[4][3] / 1e6
    ratio = native / achieved
    verdict = "meets" if native >= 200 and ratio >= 30 else "MISSES"
    print(
        f"native decoder + tables {verdict} the 200 MB/s and 30x targets "
        f"({native:.1f} MB/s, {ratio:.1f}x the pure-Python decoder + tables)"
    )
    return versus_plain(data, Path(source), pieces, args.rounds)


if __name__ == "__main__":
    sys.exit(main())
