"""HTML report speed: building the page, time to interactive and every interaction in Chromium.

    python benchmarks/report.py                  # every sample and a generated 40 MB stream
                                                 # (cached in benchmarks/.cache)
    python benchmarks/report.py --quick          # smoke run: the samples, 2 loads, 2 repetitions
    python benchmarks/report.py --file X.bsprof  # your own file(s) instead
    python benchmarks/report.py --screenshot     # also redraw docs/report.png (full sample)
    python benchmarks/report.py --file X.bsprof --baseline /tmp/before  # and an earlier checkout
    python benchmarks/report.py --diff A.bsprof B.bsprof  # also the A/B page (rokuprof diff --html)

Per input, in Python (best of ``--build-repeat``): decoding alone (``ProfileReader``, the
baseline), then what ``rokuprof report`` does: decode and lay out the run (``input_from_bytes``),
build the model, render the page; the total against decoding, and the page's size. Then in
headless Chromium (benchmarks/report_bench.mjs, launched and served as tests/viewers/report.mjs
does: 127.0.0.1, every other request blocked): over ``--loads`` fresh loads, navigation start to
the page's ready mark (its first view drawn), against a blank page and the smallest input in the
same browser; and ``--reps`` times each interaction (every tab with its view out of date, a tab
drawn already, every metric, zooming a flame frame and back, a search and its clearing, dragging a
time range on the timeline and clearing it, and where the page has them the stack chart's wheel
zoom and bottom-up's rows), timed inside the page from the input event to the end
of the next frame, against a click with no handler (the floor). The last lines judge issue 22's
targets: the 40 MB-class capture interactive in under 1 s, every interaction under 100 ms (by
median; the worst single time is printed beside it), and the earlier one of a page under 10 MB.
With ``--baseline DIR`` (an earlier checkout, e.g. ``git archive REV rokuprof | tar -x -C DIR``),
each input's page is also built by that tree's rokuprof (a subprocess) and measured in the same
browser run, as "<input> @base"; the targets judge this tree's pages only. With ``--diff A B``,
the A/B page of the two captures is measured beside the inputs, as "diff A → B" (its layout and
model stages cover both captures and the comparison; its tabs are the page's A/B views).

Exit status: 0 every target met, 1 one missed (or a page did not load cleanly), 2 node, Chromium
or playwright-core missing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode import CACHE, synthetic_stream

from rokuprof.export import input_from_bytes
from rokuprof.export.report import build_model, render_html
from rokuprof.profile.reader import ProfileReader

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "benchmarks" / "report_bench.mjs"
SHOTS_SCRIPT = ROOT / "tests" / "viewers" / "report.mjs"
CHROMIUM = Path(os.environ.get("ROKUPROF_CHROMIUM", "/usr/bin/chromium"))
MAX_BYTES = 10_000_000
MAX_READY_MS = 1000.0
MAX_INTERACTION_MS = 100.0
LARGE_BYTES = 30_000_000  # a "40 MB-class" capture
FLOOR = "no-op click (floor)"
BLANK = (
    '<!doctype html><meta charset="utf-8"><title>blank</title>'
    "<script>requestAnimationFrame(() => { window.__reportReady = true; "
    'performance.mark("rokuprof-report-ready"); });</script>'
)


@dataclass
class Input:
    label: str
    path: Path
    size: int = 0
    page: Path | None = None
    build: dict[str, float] = field(default_factory=dict)
    page_bytes: int = 0
    ready: list[float] = field(default_factory=list)
    times: dict[str, list[float]] = field(default_factory=dict)
    baseline: bool = False
    against: Path | None = None  # an A/B page: capture A (``path`` is B)


def missing_tools() -> str | None:
    """What the browser part needs and this machine lacks, in one line (None: all there)."""
    if shutil.which("node") is None:
        return "node is not installed (apt-get install nodejs)"
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set ROKUPROF_CHROMIUM)"
    if not (ROOT / "node_modules" / "playwright-core").is_dir():
        return "npm playwright-core is not installed (npm ci in the repository)"
    return None


def best(fn, repeat: int):
    """The value of ``fn()`` and its best wall time of ``repeat`` runs."""
    value, least = None, float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        least = min(least, time.perf_counter() - t)
    return value, least


def build(inp: Input, repeat: int, page: Path) -> None:
    """Time each stage of making the page and write the page for the browser."""
    if inp.against is not None:
        build_diff(inp, repeat, page)
        return
    data = inp.path.read_bytes()
    inp.size = len(data)
    _, inp.build["decode"] = best(lambda: ProfileReader.from_bytes(data), repeat)
    ex, inp.build["layout"] = best(lambda: input_from_bytes(data), repeat)
    model, inp.build["model"] = best(lambda: build_model(ex), repeat)
    html, inp.build["page"] = best(lambda: render_html(model).encode(), repeat)
    inp.page_bytes = len(html)
    inp.page = page
    page.write_bytes(html)


def build_diff(inp: Input, repeat: int, page: Path) -> None:
    """As :func:`build`, for the A/B page of ``inp.against`` (A) and ``inp.path`` (B): what
    ``rokuprof diff A B --html`` does."""
    from rokuprof.export.diff import compare
    from rokuprof.export.report.diff_model import diff_model

    data_a, data = inp.against.read_bytes(), inp.path.read_bytes()
    inp.size = len(data_a) + len(data)
    _, inp.build["decode"] = best(
        lambda: [ProfileReader.from_bytes(d) for d in (data_a, data)], repeat
    )
    (a, b), inp.build["layout"] = best(
        lambda: [input_from_bytes(d) for d in (data_a, data)], repeat
    )

    def model() -> dict:
        out = build_model(b)
        labels = (inp.against.name, inp.path.name)
        out["diff"] = diff_model(out, a, b, compare(a, b), labels)
        return out

    m, inp.build["model"] = best(model, repeat)
    html, inp.build["page"] = best(lambda: render_html(m).encode(), repeat)
    inp.page_bytes = len(html)
    inp.page = page
    page.write_bytes(html)


# Run by the baseline tree's Python: the same stages, its best times as JSON.
BASELINE_BUILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from rokuprof.export import input_from_bytes
from rokuprof.export.report import build_model, render_html
from rokuprof.profile.reader import ProfileReader
data = open(sys.argv[2], "rb").read()
out = {}
def best(key, fn):
    least = float("inf")
    for _ in range(int(sys.argv[4])):
        t = time.perf_counter()
        value = fn()
        least = min(least, time.perf_counter() - t)
    out[key] = least
    return value
best("decode", lambda: ProfileReader.from_bytes(data))
ex = best("layout", lambda: input_from_bytes(data))
model = best("model", lambda: build_model(ex))
html = best("page", lambda: render_html(model).encode())
open(sys.argv[3], "wb").write(html)
print(json.dumps(out))
"""


def build_baseline(inp: Input, tree: Path, repeat: int, page: Path) -> None:
    """As :func:`build`, by the rokuprof in ``tree`` (a subprocess, so the trees do not mix)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            BASELINE_BUILD,
            str(tree),
            str(inp.path.resolve()),
            str(page),
            str(repeat),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tree,
    )
    if proc.returncode != 0:
        raise SystemExit(f"the baseline tree {tree} could not build the page:\n{proc.stderr}")
    inp.build = json.loads(proc.stdout)
    inp.size = inp.path.stat().st_size
    inp.page, inp.page_bytes = page, page.stat().st_size


def run_driver(plan: dict) -> dict:
    proc = subprocess.run(
        ["node", str(DRIVER)],
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        timeout=1000,
        check=False,
    )
    if proc.returncode == 2:
        print(f"benchmarks/report.py: {proc.stderr.strip()}", file=sys.stderr)
        raise SystemExit(2)
    if proc.returncode != 0:
        raise SystemExit(f"benchmarks/report_bench.mjs failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def label_width(inputs: list[Input]) -> int:
    return max(18, *(len(i.label) + 2 for i in inputs))


def ratio(a: float, b: float) -> str:
    return f"{a / b:5.1f}x" if b > 0 else "    -"


def ms(seconds: float) -> str:
    x = seconds * 1000
    return f"{x:,.1f}" if x < 10 else f"{x:,.0f}"


def print_build(inputs: list[Input], repeat: int) -> None:
    print(
        f"\nBuilding the page in Python, ms (best of {repeat}; decoding alone is the baseline; "
        f"rokuprof report does decode+layout, model, page)"
    )
    w = label_width(inputs)
    print(
        f"{'input':<{w}}{'stream MB':>10}{'decode':>9}{'decode+layout':>15}{'model':>8}"
        f"{'page':>8}{'total':>9}{'vs decode':>10}{'page MB':>9}{'vs stream':>10}"
    )
    for i in inputs:
        b = i.build
        total = b["layout"] + b["model"] + b["page"]
        print(
            f"{i.label:<{w}}{i.size / 1e6:10.2f}{ms(b['decode']):>9}{ms(b['layout']):>15}"
            f"{ms(b['model']):>8}{ms(b['page']):>8}{ms(total):>9}{ratio(total, b['decode']):>10}"
            f"{i.page_bytes / 1e6:9.2f}{ratio(i.page_bytes, i.size):>10}"
        )


def print_ready(inputs: list[Input], blank: list[float], loads: int) -> None:
    print(
        f"\nTime to interactive in headless Chromium (navigation start to the first view drawn, "
        f"{loads} fresh loads)"
    )
    w = label_width(inputs)
    print(f"{'input':<{w}}{'median ms':>10}{'max ms':>8}{'vs blank':>10}{'vs smallest':>12}")
    b = median(blank)
    print(f"{'blank page':<{w}}{b:10.0f}{max(blank):8.0f}{ratio(b, b):>10}")
    smallest = median(min(inputs, key=lambda i: i.size).ready)
    for i in inputs:
        m = median(i.ready)
        print(
            f"{i.label:<{w}}{m:10.0f}{max(i.ready):8.0f}{ratio(m, b):>10}{ratio(m, smallest):>12}"
        )


def print_interactions(inputs: list[Input], reps: int) -> None:
    labels: list[str] = []
    for i in inputs:
        labels += [k for k in i.times if k not in labels]
    largest = max(inputs, key=lambda i: i.size)
    print(
        f"\nInteractions in headless Chromium (ms from the input event to the end of the next "
        f"frame, median/max of {reps}; last column: {largest.label}'s median over its floor)"
    )
    width = max(11, *(len(i.label) + 2 for i in inputs))
    print(f"{'interaction':<30}" + "".join(f"{i.label:>{width}}" for i in inputs) + "  vs floor")
    floor = median(largest.times.get(FLOOR, []))
    for label in labels:
        cells = []
        for i in inputs:
            xs = i.times.get(label)
            cells.append(f"{median(xs):.0f}/{max(xs):.0f}" if xs else "-")
        own = largest.times.get(label)
        vs = ratio(median(own), floor) if own else "    -"
        print(f"{label:<30}" + "".join(f"{c:>{width}}" for c in cells) + f"  {vs:>8}")


def verdicts(inputs: list[Input], quick: bool) -> bool:
    """Print the targets' lines; True when every target measured is met."""
    ok = True
    inputs = [i for i in inputs if not i.baseline]
    print("\nTargets (issue 22; this machine's load shows in every figure):")
    large = [i for i in inputs if i.size >= LARGE_BYTES]
    if large:
        for i in large:
            m = median(i.ready)
            good = m < MAX_READY_MS
            ok &= good
            print(
                f"  {'PASS' if good else 'OVER'}  interactive in under 1 s ({i.label}, "
                f"{i.size / 1e6:.0f} MB): {m:.0f} ms median, {max(i.ready):.0f} ms worst "
                f"of {len(i.ready)}"
            )
    else:
        why = "--quick" if quick else "no input of 30 MB or more"
        print(f"  ----  interactive in under 1 s (40 MB-class): not measured ({why})")
    rows = [
        (median(xs), max(xs), label, i.label)
        for i in inputs
        for label, xs in i.times.items()
        if label != FLOOR
    ]
    if rows:
        worst_median = max(rows)
        worst_single = max(rows, key=lambda r: r[1])
        over = sorted(r for r in rows if r[0] >= MAX_INTERACTION_MS)
        good = not over
        ok &= good
        print(
            f"  {'PASS' if good else 'OVER'}  every interaction under 100 ms (median): the "
            f"slowest {worst_median[0]:.0f} ms ({worst_median[2]}, {worst_median[3]})"
            + (f"; {len(over)} over" if over else "")
        )
        singles = [x for i in inputs for k, xs in i.times.items() if k != FLOOR for x in xs]
        slow = sum(x >= MAX_INTERACTION_MS for x in singles)
        print(
            f"        worst single time {worst_single[1]:.0f} ms ({worst_single[2]}, "
            f"{worst_single[3]}); {slow} of {len(singles)} single times at 100 ms or more"
        )
    biggest = max(inputs, key=lambda i: i.page_bytes)
    good = biggest.page_bytes < MAX_BYTES
    ok &= good
    print(
        f"  {'PASS' if good else 'OVER'}  every page under 10 MB: the largest "
        f"{biggest.page_bytes / 1e6:.1f} MB ({biggest.label})"
    )
    return ok


def screenshot(work: Path) -> None:
    """docs/report.png: the full sample's flame graph, as the tests see it."""
    data = (ROOT / "samples" / "cafe-tv-full.bsprof").read_bytes()
    page = work / "cafe-tv-full.html"
    page.write_bytes(render_html(build_model(input_from_bytes(data))).encode())
    shots = work / "shots"
    shots.mkdir()
    proc = subprocess.run(
        ["node", str(SHOTS_SCRIPT), "--shots", str(shots), str(page)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"report.mjs failed: {proc.stderr}")
    target = ROOT / "docs" / "report.png"
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(shots / "cafe-tv-full-flame.png", target)
    print(f"wrote {target.relative_to(ROOT)} ({target.stat().st_size:,} bytes)")


def choose_inputs(args: argparse.Namespace) -> list[Input]:
    diff = []
    if args.diff:
        a, b = args.diff
        diff.append(Input(f"diff {a.name} → {b.name}", b, against=a))
    if args.file:
        return [Input(f.stem, f) for f in args.file] + diff
    inputs = []
    if not args.no_sample:
        for f in sorted((ROOT / "samples").glob("*.bsprof"), key=lambda p: p.stat().st_size):
            inputs.append(Input(f.stem.removeprefix("cafe-tv-"), f))
    if args.mb:
        CACHE.mkdir(exist_ok=True)
        path = CACHE / f"synthetic-{args.mb}mb-seed{args.seed}.bsprof"
        if not path.exists():
            print(f"building a {args.mb} MB synthetic stream (cached in {path}) ...", flush=True)
            path.write_bytes(synthetic_stream(args.mb * 1_000_000, args.seed))
        inputs.append(Input(f"generated {args.mb} MB", path))
    return inputs + diff


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, action="append", help="measure this .bsprof")
    parser.add_argument("--quick", action="store_true", help="smoke run: samples, few repetitions")
    parser.add_argument("--mb", type=int, help="generated stream size, 0: none (default 40)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--loads", "--repeat", type=int, help="browser loads per input (5)")
    parser.add_argument("--reps", type=int, help="repetitions of each interaction (5)")
    parser.add_argument("--build-repeat", type=int, help="Python builds per input, best kept (2)")
    parser.add_argument("--no-sample", action="store_true", help="skip the samples")
    parser.add_argument("--baseline", type=Path, help="an earlier checkout to measure as well")
    parser.add_argument("--screenshot", action="store_true", help="also redraw docs/report.png")
    parser.add_argument(
        "--diff", type=Path, nargs=2, metavar=("A", "B"), help="also the A/B page of A and B"
    )
    args = parser.parse_args()
    quick = args.quick
    args.mb = args.mb if args.mb is not None else (0 if quick else 40)
    loads = args.loads or (2 if quick else 5)
    reps = args.reps if args.reps is not None else (2 if quick else 5)
    build_repeat = args.build_repeat or (1 if quick else 2)
    if problem := missing_tools():
        print(f"benchmarks/report.py: {problem}", file=sys.stderr)
        return 2
    inputs = choose_inputs(args)
    if not inputs:
        parser.error("nothing to measure (no samples, --mb 0 and no --file)")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"rokuprof report benchmark: {os.cpu_count()} cores, load average {load} at the start "
        f"(other work on the machine slows every figure)"
    )
    with tempfile.TemporaryDirectory(prefix="rokuprof-report-bench-") as tmp:
        work = Path(tmp)
        for n, inp in enumerate(inputs):
            build(inp, build_repeat, work / f"{n}-{inp.path.stem}.html")
        if args.baseline:
            tree = args.baseline.resolve()
            for n, inp in enumerate([i for i in inputs if i.against is None]):
                base = Input(f"{inp.label} @base", inp.path, baseline=True)
                build_baseline(base, tree, build_repeat, work / f"{n}-{inp.path.stem}-base.html")
                inputs.insert(inputs.index(inp) + 1, base)
        print_build(inputs, build_repeat)
        blank = work / "blank.html"
        blank.write_text(BLANK)
        plan = {
            "loads": loads,
            "reps": reps,
            "files": [{"path": str(blank), "interact": False}]
            + [{"path": str(i.page), "interact": True} for i in inputs],
        }
        result = run_driver(plan)
        problems = []
        for inp, r in zip([None, *inputs], result["results"], strict=True):
            problems += [f"{inp.label if inp else 'blank'}: {p}" for p in r["problems"]]
            if None in r["readyMs"]:
                problems.append(f"{inp.label if inp else 'blank'}: no ready mark")
            if inp is not None:
                inp.ready = [x for x in r["readyMs"] if x is not None] or [float("nan")]
                inp.times = r["interactions"] or {}
        blank_ready = [x for x in result["results"][0]["readyMs"] if x is not None] or [0.0]
        print(f"\nChromium {result['chromium']}, headless, 1440x900")
        print_ready(inputs, blank_ready, loads)
        print_interactions(inputs, reps)
        ok = verdicts(inputs, quick)
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"load average {load} at the end")
        if problems:
            print("\npages that did not load cleanly (figures above are doubtful):")
            for p in problems[:20]:
                print(f"  {p}")
            ok = False
        if args.screenshot:
            screenshot(work)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
