"""Cost of reading a sideloaded app's source into the simulator's model: linear in the source,
whatever its names.

Generates apps of N and 8·N functions (short names), of N functions whose names are 200
characters long, and a component XML that opens 20·N inline scripts and CDATA sections and
closes none, builds each one's model (:func:`rokuprof.simulator.app_from_source.build_model`,
scanner included) ``--reps`` times, and prints the median seconds per megabyte of source of each
beside the first (the baseline, measured in the same run): ratios near 1 mean the cost follows
the bytes, not the number of functions or the length of their names. Exits 1 when a ratio passes
``--max-ratio`` (3)::

    python benchmarks/app_source.py
    python benchmarks/app_source.py --functions 2000 --reps 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rokuprof.simulator.app_from_source import build_model


def app(functions: int, name_length: int) -> dict[str, str]:
    """A main scope and a scene component, each with ``functions`` functions calling the next
    ones inside loops, with strings and comments."""

    def name(i: int) -> str:
        return f"f{i}_" + "n" * max(0, name_length - len(str(i)) - 2)

    body = []
    for i in range(functions):
        body += [
            f"function {name(i)}(a as Integer) as Integer ' number {i}",
            '    label = "it\'s ""quoted"" sub fake(" + a.toStr()',
            "    for j = 1 to 3",
            f"        x = {name((i + 1) % functions)}(j) + {{count: j}}",
            "    end for",
            f'    if a = "OK" then {name((i + 7) % functions)}(1)',
            "    return x",
            "end function",
        ]
    text = "\n".join(body) + "\n"
    xml = (
        '<component name="Home" extends="Scene">\n'
        '<script type="text/brightscript" uri="pkg:/components/Home.brs"/>\n</component>\n'
    )
    entry = f"sub Main()\n    {name(0)}(1)\nend sub\nsub init()\n    {name(0)}(2)\nend sub\n"
    return {
        "pkg:/source/main.brs": entry + text,
        "pkg:/components/Home.xml": xml,
        "pkg:/components/Home.brs": entry + text,
    }


def hostile_xml(tags: int) -> dict[str, str]:
    """A component whose XML opens ``tags`` inline scripts and CDATA sections and closes none
    (each must be read once, not to the end of the file again)."""
    xml = '<component name="Odd" extends="Scene">\n' + "<script><![CDATA[\n x = 1\n" * tags
    return {"pkg:/components/Odd.xml": xml}


def seconds_per_mb(sources: dict[str, str], reps: int) -> float:
    size = sum(len(t.encode()) for t in sources.values()) / 1e6
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        build_model("bench", sources)
        times.append(time.perf_counter() - start)
    return statistics.median(times) / size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", type=int, default=300)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--max-ratio", type=float, default=3.0)
    args = parser.parse_args()
    n = args.functions
    cases = [
        (f"{n} functions, short names (baseline)", app(n, 8)),
        (f"{8 * n} functions, short names", app(8 * n, 8)),
        (f"{n} functions, 200-character names", app(n, 200)),
        (f"{20 * n} unclosed <script> and CDATA tags", hostile_xml(20 * n)),
    ]
    base = None
    worst = 0.0
    print(f"{'case':44} {'MB':>6} {'s/MB':>8} {'ratio':>6}")
    for label, sources in cases:
        cost = seconds_per_mb(sources, args.reps)
        base = base or cost
        worst = max(worst, cost / base)
        mb = sum(len(t.encode()) for t in sources.values()) / 1e6
        print(f"{label:44} {mb:6.2f} {cost:8.3f} {cost / base:6.2f}")
    return 1 if worst > args.max_ratio else 0


if __name__ == "__main__":
    sys.exit(main())
