"""HTML report cost: its size and how soon it is interactive in headless Chromium.

    python benchmarks/report.py                      # samples/cafe-tv-long.bsprof and a generated
                                                     # 40 MB stream (cached in benchmarks/.cache)
    python benchmarks/report.py --file X.bsprof      # your own file
    python benchmarks/report.py --screenshot         # also redraw docs/report.png (full sample)

Per input it prints: decoding alone (``ProfileReader``, the baseline) and decoding plus laying out
the timeline and building the page (what ``rokuprof report`` does), with their ratio; the page's
size against the stream's; then, over ``--repeat`` loads in headless Chromium (tests/viewers/
report.mjs: served from 127.0.0.1, every other request blocked), the time from navigation start
until the page is interactive (``window.__reportReady``: the first view drawn), the median and
the worst, against the same browser's load of a blank page in the same run. The issue's limits:
under 10 MB and under 3 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode import CACHE, synthetic_stream

from rokuprof.export import input_from_bytes
from rokuprof.export.report import build_model, render_html
from rokuprof.profile.reader import ProfileReader

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "viewers" / "report.mjs"
MAX_BYTES = 10_000_000
MAX_READY_S = 3.0
BLANK = (
    '<!doctype html><meta charset="utf-8"><title>blank</title>'
    "<script>requestAnimationFrame(() => { window.__reportReady = true; "
    'performance.mark("rokuprof-report-ready"); });</script>'
)


def timed(fn):
    t = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t


def browser_ready_ms(
    paths: list[Path], repeat: int, shots: Path | None = None
) -> list[list[float]]:
    """Per file, the ready times (ms since navigation start) of ``repeat`` fresh loads."""
    args = ["node", str(SCRIPT)]
    if shots is not None:
        args += ["--shots", str(shots)]
    proc = subprocess.run(
        [*args, *(str(p) for p in paths for _ in range(repeat))],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"report.mjs failed: {proc.stderr}")
    results = json.loads(proc.stdout)["results"]
    for r in results:
        bad = r["console"] + r["pageErrors"] + r["blockedRequests"]
        if bad or r["readyMs"] is None:
            raise SystemExit(f"{r['file']}: the page did not load cleanly: {bad}")
    return [
        [r["readyMs"] for r in results[i * repeat : (i + 1) * repeat]] for i in range(len(paths))
    ]


def measure(data: bytes, label: str, repeat: int, work: Path) -> tuple[int, float]:
    print(f"\n== {label}: {len(data) / 1e6:.1f} MB")
    base = min(timed(lambda: ProfileReader.from_bytes(data))[1] for _ in range(2))
    html, build = None, float("inf")
    for _ in range(2):
        html, t = timed(lambda: render_html(build_model(input_from_bytes(data))).encode())
        build = min(build, t)
    assert html is not None
    page = work / f"{Path(label).name.removesuffix('.bsprof')}.html"
    page.write_bytes(html)
    blank = work / "blank.html"
    blank.write_text(BLANK)
    ready, blank_ready = browser_ready_ms([page, blank], repeat)
    median, worst = statistics.median(ready), max(ready)
    blank_median = statistics.median(blank_ready)
    print(f"{'decode only (baseline)':<34}{base:8.2f} s   1.00x")
    print(f"{'decode + timeline + page':<34}{build:8.2f} s   {build / base:5.2f}x")
    print(
        f"{'report size':<34}{len(html):>12,} B   {len(html) / len(data):5.2f}x the stream   "
        f"{'OK' if len(html) < MAX_BYTES else 'OVER'} (limit {MAX_BYTES / 1e6:.0f} MB)"
    )
    print(
        f"{'interactive in Chromium':<34}{median:8.0f} ms median, {worst:.0f} ms worst of "
        f"{repeat}   {'OK' if worst < MAX_READY_S * 1000 else 'OVER'} (limit {MAX_READY_S:.0f} s)"
    )
    print(
        f"{'blank page, same browser':<34}{blank_median:8.0f} ms median   "
        f"report/blank {median / max(blank_median, 1e-3):5.1f}x"
    )
    return len(html), worst


def screenshot(work: Path) -> None:
    """docs/report.png: the full sample's flame graph, as the tests see it."""
    data = (ROOT / "samples" / "cafe-tv-full.bsprof").read_bytes()
    page = work / "cafe-tv-full.html"
    page.write_bytes(render_html(build_model(input_from_bytes(data))).encode())
    shots = work / "shots"
    shots.mkdir()
    browser_ready_ms([page], 1, shots=shots)
    target = ROOT / "docs" / "report.png"
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(shots / "cafe-tv-full-flame.png", target)
    print(f"wrote {target.relative_to(ROOT)} ({target.stat().st_size:,} bytes)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, action="append", help="measure this .bsprof")
    parser.add_argument("--mb", type=int, default=40, help="generated stream size (0: none)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5, help="browser loads per input")
    parser.add_argument("--no-sample", action="store_true", help="skip samples/cafe-tv-long")
    parser.add_argument("--screenshot", action="store_true", help="also redraw docs/report.png")
    args = parser.parse_args()
    inputs: list[tuple[str, Path]] = [(str(f), f) for f in args.file or []]
    if not args.file and not args.no_sample:
        inputs.append(("samples/cafe-tv-long.bsprof", ROOT / "samples" / "cafe-tv-long.bsprof"))
    if args.mb and not args.file:
        CACHE.mkdir(exist_ok=True)
        path = CACHE / f"synthetic-{args.mb}mb-seed{args.seed}.bsprof"
        if not path.exists():
            print(f"building {args.mb} MB synthetic stream (cached in {path}) ...", flush=True)
            path.write_bytes(synthetic_stream(args.mb * 1_000_000, args.seed))
        inputs.append((f"generated {args.mb} MB stream", path))
    failed = False
    with tempfile.TemporaryDirectory(prefix="rokuprof-report-bench-") as tmp:
        work = Path(tmp)
        for label, path in inputs:
            size, worst = measure(path.read_bytes(), label, args.repeat, work)
            failed |= size >= MAX_BYTES or worst >= MAX_READY_S * 1000
        if args.screenshot:
            screenshot(work)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
