"""Start-up cost of the ``rokuprof`` program: what a user pays before anything happens.

Runs, as separate processes, ``python -c "import typer"`` (the baseline: the CLI framework
alone), ``rokuprof --help``, ``rokuprof --version`` and ``rokuprof COMMAND --help`` for every
command, ``--reps`` times each, interleaved so a busy machine slows all of them alike, and
prints per row (after one uncounted run of each, which caches the bytecode as an install
does) the median CPU time (user + system of the child process, from
``getrusage(RUSAGE_CHILDREN)``), its ratio to the baseline and the number of modules the
process imported. The target: ``rokuprof --help`` at most ``--target`` (2.5) times the
baseline's CPU, and ``rokuprof inspect --json`` of a generated 3 KB capture at most
``--inspect-target`` (3) times; the script exits 1 when one is missed, 0 otherwise.

``--baseline DIR`` also runs every row on an earlier tree (``git archive REV rokuprof | tar -x
-C DIR``, its native core copied in), in the same run, and prints its figures beside::

    python benchmarks/startup.py
    python benchmarks/startup.py --reps 5 --baseline /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rokuprof.cli import COMMAND_MODULES  # noqa: E402 - this tree's commands

#: Prints how many modules the process imported once the CLI has answered ARGS.
COUNT = """\
import json, sys
sys.argv = ['rokuprof', *json.loads(sys.argv[1])]
from rokuprof.cli import main
try:
    main()
except SystemExit:
    pass
print(len(sys.modules), file=sys.__stderr__)
"""


def rows() -> list[tuple[str, list[str]]]:
    """(label, rokuprof arguments) of every row after the baseline."""
    found = [("rokuprof --help", ["--help"]), ("rokuprof --version", ["--version"])]
    found += [(f"rokuprof {name} --help", [name, "--help"]) for name in COMMAND_MODULES]
    return found


def cpu_of(command: list[str], tree: Path) -> float:
    """User + system CPU seconds of one run of ``command`` on ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        command,
        env=tree_env(tree),
        cwd=tree,  # `-m` and `-c` put the working directory first on the path
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def modules_of(args: list[str], tree: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", COUNT, json.dumps(args)],
        env=tree_env(tree),
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return int(done.stderr.strip().splitlines()[-1])


def tree_env(tree: Path) -> dict[str, str]:
    """Run on ``tree``, with its bytecode cached as an installed package's is (pip compiles it;
    a tree run with PYTHONDONTWRITEBYTECODE would compile every module on every start)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "NO_COLOR": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7, help="runs of each row (median taken)")
    parser.add_argument("--target", type=float, default=2.5, help="most `--help` may cost")
    parser.add_argument(
        "--inspect-target", type=float, default=3.0, help="most `inspect` of 3 KB may cost"
    )
    parser.add_argument("--baseline", type=Path, help="an earlier tree, run beside this one")
    opts = parser.parse_args()
    if opts.reps < 1:
        parser.error("--reps must be at least 1")
    trees = {"this": ROOT}
    if opts.baseline is not None:
        if not (opts.baseline / "rokuprof" / "__init__.py").is_file():
            parser.error(f"--baseline {opts.baseline}: no rokuprof package in it")
        trees["baseline"] = opts.baseline.resolve()
    baseline_cmd = [sys.executable, "-c", "import typer"]
    table = [("python -c 'import typer'", baseline_cmd, [])]
    table += [(label, [sys.executable, "-m", "rokuprof", *args], args) for label, args in rows()]
    small = small_capture(Path(tempfile.mkdtemp(prefix="rokuprof-startup-")))
    inspect_args = ["inspect", str(small), "--json"]
    inspect_label = f"rokuprof inspect ({small.stat().st_size / 1024:.0f} KB)"
    table += [(inspect_label, [sys.executable, "-m", "rokuprof", *inspect_args], inspect_args)]

    for path in trees.values():  # a first run of each row writes its bytecode: not counted
        for _label, command, _args in table:
            cpu_of(command, path)
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(opts.reps):  # interleaved: load on the machine falls on every row alike
        for tree, path in trees.items():
            for label, command, _args in table:
                times.setdefault((tree, label), []).append(cpu_of(command, path))

    header = f"{'':28}" + "".join(f"{t + ' CPU':>14}{'ratio':>8}{'modules':>9}" for t in trees)
    print(f"start-up CPU (user+sys), median of {opts.reps}; ratio against `import typer`")
    print(header)
    ratios: dict[tuple[str, str], float] = {}
    for label, _command, args in table:
        line = f"{label:28}"
        for tree, path in trees.items():
            median = statistics.median(times[(tree, label)])
            base = statistics.median(times[(tree, table[0][0])])
            ratios[(tree, label)] = ratio = median / base if base > 0 else float("inf")
            count = modules_of(args, path) if args else _typer_modules(path)
            line += f"{median * 1000:>12.0f}ms{ratio:>7.2f}x{count:>9}"
        print(line)
    help_ratio = ratios[("this", "rokuprof --help")]
    inspect_ratio = ratios[("this", inspect_label)]
    print(
        f"{inspect_label}: {inspect_ratio:.2f}x import typer (target at most "
        f"{opts.inspect_target:g}x)"
    )
    if "baseline" in trees:
        print(f"  baseline tree: {ratios[('baseline', inspect_label)]:.2f}x import typer")
    worst = max((r, label) for (tree, label), r in ratios.items() if tree == "this")
    print(f"rokuprof --help: {help_ratio:.2f}x import typer (target at most {opts.target:g}x)")
    print(f"costliest row: {worst[1]} at {worst[0]:.2f}x")
    if "baseline" in trees:
        before = ratios[("baseline", "rokuprof --help")]
        print(f"rokuprof --help against the baseline tree: {before / help_ratio:.2f}x less CPU")
    shutil.rmtree(small.parent)
    return 0 if help_ratio <= opts.target and inspect_ratio <= opts.inspect_target else 1


def small_capture(directory: Path) -> Path:
    """A capture of about 3 KB (100 call paths, one thread), the size a quick look reads."""
    from rokuprof.bsprof.grammar import build_stream
    from rokuprof.bsprof.model import CPU, MODULE, PATH, STRING, Footer, Header

    header = Header(1, 0, 0, 0, 1.0, 1.0, False, False, 1_700_000_000_000, "small", "", "1",
                    "Roku", "3930X", "12.0")  # fmt: skip
    entries: list = [(STRING, 1, "main"), (STRING, 2, "pkg:/source/main.brs"), (MODULE, 1, 1)]
    for i in range(1, 101):
        entries += [(STRING, 2 + i, f"function_{i}"), (PATH, i, i - 1 if i > 1 else 0, 1, 0, 2,
                    i, 2 + i), (CPU, i, 0, 10 * i, 100 * i), (CPU, i, 0, 5, 50)]  # fmt: skip
    path = directory / "small.bsprof"
    path.write_bytes(build_stream(header, entries, Footer(1_700_000_001_000)))
    return path


def _typer_modules(tree: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import sys, typer; print(len(sys.modules))"],
        env=tree_env(tree),
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return int(done.stdout.strip())


if __name__ == "__main__":
    sys.exit(main())
