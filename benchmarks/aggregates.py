"""The aggregate outputs against decoding alone: ``export -f pprof``, ``export -f folded``,
``diff A B --json`` and the gate (``diff --fail-over``), each as a process, in CPU seconds, beside
``inspect --json`` of the same inputs measured in the same run (the baseline).

    python benchmarks/aggregates.py                    # a generated 40 MB stream (cached)
    python benchmarks/aggregates.py --mb 8             # a smaller one, for iteration
    python benchmarks/aggregates.py --before /tmp/old  # also a tree of an older rokuprof
    python benchmarks/aggregates.py --hours 8.9        # the same bytes as a run of 8.9 hours

``--before DIR`` is a checkout of another version (``git archive <commit> rokuprof | tar -x -C
DIR``, its native core built there): its commands run alternately with this tree's, each with
its own ``inspect`` baseline, and the outputs of the two are compared (pprof after gunzip, the
folded text, ``diff --json``). ``diff`` and the gate compare the stream with a second one made
with the next seed. ``--hours H`` moves the streams' footers to H hours after their start: the
same entries spread over a long run, as a long capture of an app that is mostly idle (the
timeline outputs cost more the longer the run; the tables do not). The targets: pprof at most
2x one ``inspect --json``; ``diff`` (and the gate) at most 3x two; CPU is the process's user +
system time (``os.wait4``).
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode import CACHE, START_MS, synthetic_stream

from rokuprof.bsprof.grammar import build_footer
from rokuprof.bsprof.model import Footer
from rokuprof.profile.reader import ProfileReader

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"export -f pprof": 2.0, "export -f folded": 2.0, "diff A B": 3.0, "gate": 3.0}


def cpu_of(tree: Path, args: list[str], out: Path | None = None) -> tuple[float, bytes]:
    """Run ``python -m rokuprof ARGS`` on ``tree``: (CPU seconds, standard output)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryFile() as stdout:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rokuprof", *args],
            env=env,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            cwd=tree,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1, 3):  # ok, regression found, incomplete input
            raise SystemExit(f"{args} on {tree}: exit status {proc.returncode}")
        stdout.seek(0)
        return usage.ru_utime + usage.ru_stime, stdout.read()


def measure(tree: Path, a: Path, b: Path, work: Path) -> tuple[dict[str, float], dict[str, bytes]]:
    """CPU seconds per command on ``tree``, and the outputs to compare."""
    cpu: dict[str, float] = {}
    outputs: dict[str, bytes] = {}
    cpu["inspect A"], _ = cpu_of(tree, ["inspect", str(a), "--json"])
    cpu["inspect B"], _ = cpu_of(tree, ["inspect", str(b), "--json"])
    pprof = work / "out.pb.gz"
    cpu["export -f pprof"], _ = cpu_of(tree, ["export", str(a), "-f", "pprof", "-o", str(pprof)])
    outputs["pprof"] = gzip.decompress(pprof.read_bytes())
    folded = work / "out.folded"
    cpu["export -f folded"], _ = cpu_of(tree, ["export", str(a), "-f", "folded", "-o", str(folded)])
    outputs["folded"] = folded.read_bytes()
    cpu["diff A B"], outputs["diff --json"] = cpu_of(tree, ["diff", str(a), str(b), "--json"])
    cpu["gate"], outputs["gate"] = cpu_of(tree, ["diff", str(a), str(b), "--fail-over", "5"])
    return cpu, outputs


def ratios(cpu: dict[str, float]) -> dict[str, float]:
    one, two = cpu["inspect A"], cpu["inspect A"] + cpu["inspect B"]
    return {
        "export -f pprof": cpu["export -f pprof"] / one,
        "export -f folded": cpu["export -f folded"] / one,
        "diff A B": cpu["diff A B"] / two,
        "gate": cpu["gate"] / two,
    }


def stream(mb: int, seed: int, hours: float | None) -> Path:
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"synthetic-{mb}mb-seed{seed}.bsprof"
    if not path.exists():
        print(f"building {mb} MB synthetic stream (cached in {path}) ...", flush=True)
        path.write_bytes(synthetic_stream(mb * 1_000_000, seed))
    if hours is None:
        return path
    long = CACHE / f"synthetic-{mb}mb-seed{seed}-{hours:g}h.bsprof"
    if not long.exists():
        data = path.read_bytes()
        footer = ProfileReader.from_bytes(data).footer
        assert footer is not None
        old = build_footer(footer)
        assert data.endswith(old)
        new = build_footer(Footer(START_MS + round(hours * 3_600_000)))
        long.write_bytes(data[: -len(old)] + new)
    return long


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=40, help="generated stream size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, help="runs per tree (best kept)")
    parser.add_argument("--hours", type=float, help="the run's length (its footer), in hours")
    parser.add_argument("--before", type=Path, help="a tree of another rokuprof to compare")
    args = parser.parse_args()
    a, b = stream(args.mb, args.seed, args.hours), stream(args.mb, args.seed + 1, args.hours)
    print(f"A {a.name} ({a.stat().st_size / 1e6:.1f} MB), B {b.name}")
    trees = {"this tree": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    best: dict[str, dict[str, float]] = {}
    outputs: dict[str, dict[str, bytes]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for label, tree in trees.items():  # alternating, so both see the same machine
                cpu, outputs[label] = measure(tree, a, b, Path(tmp))
                old = best.setdefault(label, cpu)
                for k, v in cpu.items():
                    old[k] = min(old[k], v)
    failed = False
    for label in trees:
        cpu = best[label]
        print(
            f"\n== {label}: inspect --json A {cpu['inspect A']:.2f} CPU-s, B {cpu['inspect B']:.2f}"
        )
        for name, ratio in ratios(cpu).items():
            base = "one inspect" if name.startswith("export") else "two inspects"
            verdict = "ok" if ratio <= TARGETS[name] else "OVER"
            if label == "this tree" and ratio > TARGETS[name]:
                failed = True
            print(
                f"{name:<18}{cpu[name]:7.2f} CPU-s  {ratio:5.2f}x {base:<13}"
                f"(target <= {TARGETS[name]:g}x) {verdict}"
            )
    if args.before:
        same = {k: outputs["this tree"][k] == outputs["before"][k] for k in outputs["before"]}
        print("\noutputs the same as before: " + ", ".join(f"{k} {v}" for k, v in same.items()))
        failed |= not all(same.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
