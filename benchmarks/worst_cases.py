"""Worst-case streams against the real CLI and daemon: what a small hostile stream costs.

    python benchmarks/worst_cases.py                         # every case, this checkout
    python benchmarks/worst_cases.py --quick                 # smaller cases (a few minutes)
    python benchmarks/worst_cases.py --baseline /tmp/before  # and another checkout, same run
    python benchmarks/worst_cases.py --only deep --engines native --no-daemon
    python benchmarks/worst_cases.py --no-cli --daemon-seconds 30     # the daemon part alone
    python benchmarks/worst_cases.py --current /tmp/head     # measure another tree as "this"

**Streams** (``rokuprof.simulator.worst_cases``), built once by the checkout measured as "this"
(in a child process) and handed as files to every checkout, so a baseline that lacks the module
is measured on the same bytes:

* ``deep chain D``: ``deep_chain(D, seconds=D * 0.02 + 1, wall_us=20_000)``: every path has
  20 ms of self wall time, two samples at 101 Hz (T = 9.9 ms), and the run is long enough for
  all that busy time (D x 20 ms) plus 1 s, so every path of the chain has samples;
* ``busy modules M``: ``busy_modules(M, seconds=10, flushes=10)``: M threads, each busy the
  whole 10 s (1,010 samples each);
* ``many paths P``: ``many_paths(P, seconds=P * 0.02, modules=4)``: P root paths over 4
  threads, 20 ms (two samples) each.

Full run: depth 1k/10k/50k, 100/1,000/3,000 modules, 1 M paths; ``--quick``: depth 1k/10k,
100/1,000 modules, 100 k paths.

**Exports part** (issue 27, rows 8 to 10; ``--only exports`` runs it alone, ``--no-exports``
skips it): one command per stream, with the peak RSS, the wall time and the size of what it
wrote (the page, the ``.speedscope.json``):

* row 8, ``exports: deep chain 50,000``: ``export -f speedscope`` of ``deep chain 50,000`` above;
* row 8, ``exports: long names 500x64KiB``: ``export -f speedscope`` of
  ``long_names(500, 65536, depth=2000)``: 500 function names of 64 KiB on 2,000 frames;
* row 9, ``exports: many paths 1,000,000``: ``report`` and ``export -f speedscope``;
* issue 28: ``export -f cpuprofile`` (the CDP profile per thread, ``cpuprof`` in the table) of
  the deep chain and the many paths;
* row 10, ``exports: distinct chain 10,000``: ``report`` of ``long_names(10000, 24,
  depth=10000)``, a 10,000-deep chain whose functions all have distinct names.

``--quick``: depth 10,000, 100 names on 1,000 frames, 100 k paths, a 3,000-deep distinct chain.

**CLI part**: for every stream, ``inspect``, ``convert``, ``report`` and ``export -f
pprof,speedscope``, each on both engines (``native``; ``pure``: ``ROKUPROF_PURE_PYTHON=1``), as a
child process ``python -m rokuprof ...`` of the checkout (its directory first on ``PYTHONPATH``
and as the working directory). Figures: status (``ok``, ``exit N``, ``timeout``, ``killed at N
MiB``), wall time, peak RSS and the largest file written (for ``convert`` its largest chunk). The
peak is ``ru_maxrss`` from ``wait4``; Linux starts it from the parent's own peak at ``exec``, so
this process never imports rokuprof (streams, simulators: all in children) and stays small (its
peak is printed). Caps per child: ``--time-limit`` seconds (then SIGKILL: ``timeout``), and
``--rss-limit`` MiB, polled every 50 ms (then SIGKILL: ``killed at N MiB``), with
``RLIMIT_AS`` at the RSS limit + 4 GiB as a backstop.

**Busy time part** (issue 27, row 3; ``--only "short paths"``): many call paths shorter
than a period on one thread, ``many_paths(P, seconds=B, modules=1, run_seconds=R)``: 10,000
x 2 ms (20 s busy in a 20 s run), 2,000 x 12 ms (24 s in 24 s), 2,000 x 5 ms (10 s in an 11 s
run). ``convert --json`` of each by each checkout (native engine): exit status, chunks, busy
samples (in chunks, and left over) and the thread's drift, ``(busy samples x T - B) / B``
(the invariant: within one period, T = 1/101 s, of the busy time).

**Daemon part**: a real ``rokuprof daemon`` (no Sentry DSN, chunks kept on disk, 10 s chunks)
captures two devices on 127.0.0.1, both simulated by this checkout in a child process: a
healthy one (the live synthetic app, 2 s runs, 0.5 s apart, for as long as the hostile one
streams) and a hostile one that replays the biggest stream of each kind (``rokuprof.simulator``
replay mode) in one run spread over ``--daemon-seconds``. Meanwhile ``/metrics`` is fetched
every 100 ms from its first answer on: the worst latency and the failed fetches (a fetch gives
up after 5 s), and any metric with ``tick`` in its name (the worst value seen; ``n/a`` when the
daemon has none). Then: the daemon's peak RSS,
whether every healthy run ended ``complete`` in its ``session.json`` and the longest a healthy
run waited for the daemon to connect, the hostile session's status and how long after its
stream ended the daemon had finished it, and the daemon's exit status after SIGTERM. The whole
case stops at ``--time-limit`` (everything is killed) and the daemon at ``--rss-limit``.

**Fleet part** (``benchmarks/fleet.py``): a daemon given ``--fleet-devices`` configured devices
that never answer (1,000, 3,000 and 10,000; ``--quick``: 1,000 and 3,000) for ``--fleet-seconds``:
peak RSS, open files, ``/metrics`` latency, and the time to exit after SIGTERM. ``--only fleet``
runs this part alone; ``--no-fleet`` skips it.

A case that fails prints its status and the run goes on. Exit status 0 unless the script itself
could not run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

SCRIPT = str(Path(__file__).resolve())
ROOT = Path(SCRIPT).parent.parent
MIB = 1 << 20
GIB = 1 << 30
POLL = 0.05  # seconds between RSS checks of a child
METRICS_EVERY = 0.1  # seconds between /metrics fetches
METRICS_TIMEOUT = 5.0
HEALTHY, HOSTILE = "HEALTHY00001", "HOSTILE00001"  # device serials (= directories under out)
HEALTHY_RUN_SECONDS, HEALTHY_RUN_GAP = 2.0, 0.5
COMMANDS = ("inspect", "convert", "report", "export")
ENGINES = ("native", "pure")


# --- the streams ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stream:
    """One worst-case stream: ``function(**kwargs)`` of ``rokuprof.simulator.worst_cases``."""

    name: str
    kind: str  # deep, busy or paths: the daemon part replays the last stream of each kind
    function: str
    kwargs: dict


def deep(depth: int) -> Stream:
    args = {"depth": depth, "seconds": depth * 0.02 + 1, "wall_us": 20_000}
    return Stream(f"deep chain {depth:,}", "deep", "deep_chain", args)


def busy(modules: int) -> Stream:
    args = {"modules": modules, "seconds": 10.0, "flushes": 10}
    return Stream(f"busy modules {modules:,}", "busy", "busy_modules", args)


def many(paths: int) -> Stream:
    args = {"paths": paths, "seconds": paths * 0.02, "modules": 4}
    return Stream(f"many paths {paths:,}", "paths", "many_paths", args)


def streams(quick: bool) -> list[Stream]:
    if quick:
        return [deep(1_000), deep(10_000), busy(100), busy(1_000), many(100_000)]
    return [
        *(deep(d) for d in (1_000, 10_000, 50_000)),
        *(busy(m) for m in (100, 1_000, 3_000)),
        many(1_000_000),
    ]


@dataclass(frozen=True)
class ExportCase:
    """A row of the exports part: a stream and the commands run on it (``export`` means
    ``export -f speedscope``)."""

    stream: Stream
    commands: tuple[str, ...]


def export_cases(quick: bool) -> list[ExportCase]:
    def named(stream: Stream, name: str) -> Stream:
        return Stream(f"exports: {name}", "exports", stream.function, stream.kwargs)

    def names(count: int, depth: int, length: int = 65536) -> Stream:
        args = {"names": count, "length": length, "depth": depth}
        return Stream(f"{count} x {length}", "exports", "long_names", args)

    if quick:
        depth, many_n, long_n, distinct = 10_000, 100_000, (100, 1_000), 3_000
    else:
        depth, many_n, long_n, distinct = 50_000, 1_000_000, (500, 2_000), 10_000
    return [
        ExportCase(named(deep(depth), f"deep chain {depth:,}"), ("export", "cpuprof")),
        ExportCase(named(names(*long_n), f"long names {long_n[0]}x64KiB"), ("export",)),
        ExportCase(named(many(many_n), f"many paths {many_n:,}"), ("report", "export", "cpuprof")),
        ExportCase(
            named(names(distinct, distinct, 24), f"distinct chain {distinct:,}"), ("report",)
        ),
    ]


def exports_part(
    trees: list[tuple[str, Path]], cases: list[ExportCase], opts, caps: Caps, work: Path
) -> None:
    streams_dir = work / "exports"  # build_streams numbers its files from 0
    streams_dir.mkdir()
    files = build_streams(opts.current, [c.stream for c in cases], streams_dir)
    print(
        "\nexports (issue 27 rows 8-10): status, wall seconds, peak RSS (MiB), what it wrote; "
        f"caps {caps.seconds:g} s, {caps.rss / MIB:,.0f} MiB"
    )
    for c in cases:
        print(f"  {c.stream.name:32} {size(files[c.stream.name].stat().st_size):>10}")
    head = f"{'case':32} {'command':8} {'engine':6}"
    for name, _ in trees:
        head += f" | {name + ': ' + 'status':>18} {'s':>7} {'peak MiB':>9} {'written':>10}"
    if len(trees) == 2:
        head += f" | {'base/this s':>11} {'RSS':>8} {'size':>7}"
    print(head)
    notes = []
    for c in cases:
        for command in c.commands:
            for engine in opts.engines:
                label = f"{c.stream.name:32} {command:8} {engine:6}"
                path = files[c.stream.name]
                runs = [(n, run_export(command, path, t, engine, caps, work)) for n, t in trees]
                print(compared(label, runs, notes, sizes=True), flush=True)
    print_notes(notes)


def run_export(command: str, stream: Path, tree: Path, engine: str, caps: Caps, work: Path):
    """``report -o page``, ``export -f speedscope -o file`` or ``export -f cpuprofile -o dir/``
    (``cpuprof``: a file per thread, the largest reported) of ``stream``, measured."""
    out = Path(tempfile.mkdtemp(prefix=f"exports-{command}-", dir=work))
    try:
        if command == "report":
            written, args = out / "report.html", ["report", str(stream)]
        elif command == "cpuprof":
            written, args = out / "files", ["export", str(stream), "-f", "cpuprofile"]
            written.mkdir()
            result = run_rokuprof([*args, "-o", f"{written}/"], tree, engine, caps, out)
            result.largest = largest_file(written)
            return result
        else:
            written, args = out / "x.speedscope.json", ["export", str(stream), "-f", "speedscope"]
        result = run_rokuprof([*args, "-o", str(written)], tree, engine, caps, out)
        result.largest = largest_file(written)
        return result
    finally:
        shutil.rmtree(out, ignore_errors=True)


def build_streams(tree: Path, wanted: list[Stream], work: Path) -> dict[str, Path]:
    """Write every stream to ``work`` with ``tree``'s worst_cases module (in a child process,
    so this one stays small); name -> file."""
    spec = [{"name": s.name, "function": s.function, "kwargs": s.kwargs} for s in wanted]
    argv = [sys.executable, SCRIPT, "--build-streams", str(work), json.dumps(spec)]
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(argv, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"cannot build the streams with {tree}:\n{out.stderr[-3000:]}")
    return {name: Path(path) for name, path in json.loads(out.stdout).items()}


def build_streams_child(work: Path, spec: list[dict]) -> None:
    """(child) Build the streams of ``spec`` into ``work``; print name -> path as JSON."""
    from rokuprof.simulator import worst_cases

    files = {}
    for i, item in enumerate(spec):
        path = work / f"stream-{i}.bsprof"
        path.write_bytes(getattr(worst_cases, item["function"])(**item["kwargs"]))
        files[item["name"]] = str(path)
    print(json.dumps(files))


# --- the busy time part (issue 27, row 3) ----------------------------------------------------


@dataclass(frozen=True)
class ShortPaths:
    """``paths`` call paths of ``wall_ms`` each on one thread, in a run of ``run_seconds``."""

    paths: int
    wall_ms: float
    run_seconds: float

    @property
    def name(self) -> str:
        return f"short paths {self.paths:,} x {self.wall_ms:g} ms"

    @property
    def busy_seconds(self) -> float:
        return self.paths * self.wall_ms / 1000

    def stream(self) -> Stream:
        args = {"paths": self.paths, "seconds": self.busy_seconds, "modules": 1}
        args["run_seconds"] = self.run_seconds
        return Stream(self.name, "short", "many_paths", args)


SHORT_PATHS = (ShortPaths(10_000, 2, 20.0), ShortPaths(2_000, 12, 24.0), ShortPaths(2_000, 5, 11.0))


def busy_part(
    trees: list[tuple[str, Path]], rows: list[ShortPaths], opts, caps: Caps, work: Path
) -> None:
    """``convert --json`` of each short-paths stream by each checkout: how much of the thread's
    busy time its samples hold."""
    files = build_streams(opts.current, [r.stream() for r in rows], work)
    print(
        "\nbusy time (issue 27 row 3): convert, native engine; busy samples in chunks (+ left "
        "over); drift = busy samples x T against the thread's busy time (within T: conserved)"
    )
    head = f"{'stream':28} {'busy s':>7}"
    for name, _ in trees:
        head += f" | {name + ': status':>16} {'chunks':>6} {'busy samples':>14} {'drift':>8}"
    print(head)
    for row in rows:
        line = f"{row.name:28} {row.busy_seconds:7.1f}"
        for _, tree in trees:
            out = Path(tempfile.mkdtemp(prefix="busy-", dir=work))
            try:
                args = ["convert", str(files[row.name]), "--out", str(out / "o"), "--json"]
                r = run_rokuprof(args, tree, "native", caps, out)
                try:
                    summary = json.loads((out / "stdout.txt").read_text())
                except (OSError, ValueError):
                    summary = {}
            finally:
                shutil.rmtree(out, ignore_errors=True)
            busy = summary.get("busy_samples")
            left = summary.get("leftover_samples", 0)
            if busy is None:
                line += f" | {r.status:>16} {'-':>6} {'-':>14} {'-':>8}"
                continue
            drift = ((busy + left) / 101 - row.busy_seconds) / row.busy_seconds
            held = f"{busy:,}" + (f" (+{left})" if left else "")
            line += f" | {r.status:>16} {summary.get('chunks', 0):>6} {held:>14} {drift:>+8.1%}"
        print(line, flush=True)


# --- child processes --------------------------------------------------------------------------


@dataclass(frozen=True)
class Caps:
    seconds: float
    rss: int  # bytes


@dataclass
class Outcome:
    """How a child process ended, and what it cost."""

    status: str  # ok, exit N, signal N, timeout, killed at N MiB
    seconds: float
    peak: int  # bytes (ru_maxrss)
    largest: int | None = None  # bytes of the largest file it wrote
    note: str = ""  # the last line of its standard error when it did not succeed

    @property
    def capped(self) -> bool:
        return self.status == "timeout" or self.status.startswith("killed")


def child_env(tree: Path, engine: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    env.pop("ROKUPROF_SENTRY_DSN", None)
    env.pop("ROKUPROF_PURE_PYTHON", None)
    env |= {"PYTHONPATH": str(tree), "COLUMNS": "200"}
    if engine == "pure":
        env["ROKUPROF_PURE_PYTHON"] = "1"
    return env


def proc_kib(pid: int, name: str) -> int:
    """A ``VmRSS``-style field of ``/proc/PID/status`` in KiB (0 once the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def spawn(argv: list[str], tree: Path, engine: str, caps: Caps, **kw) -> subprocess.Popen:
    """``argv`` as a child in its own session (so that it can be killed with its children),
    with ``RLIMIT_AS`` set as a backstop to the polled RSS limit."""
    proc = subprocess.Popen(
        argv, cwd=tree, env=child_env(tree, engine), start_new_session=True, **kw
    )
    with contextlib.suppress(OSError, ValueError):
        limit = caps.rss + 4 * GIB
        resource.prlimit(proc.pid, resource.RLIMIT_AS, (limit, limit))
    return proc


def kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class Child:
    """A child process held to ``caps`` by a guard thread that polls its RSS every 50 ms and
    kills it when it passes a cap (``why`` says which); reaped with ``wait4`` (never
    ``Popen.poll``), which gives its peak RSS."""

    def __init__(self, argv: list[str], tree: Path, engine: str, caps: Caps, **kw) -> None:
        self.caps = caps
        self.start = time.monotonic()
        self.proc = spawn(argv, tree, engine, caps, **kw)
        self.deadline = self.start + caps.seconds  # killed then ("timeout")
        self.why = ""  # the cap it passed
        self.status = ""  # ok, exit N, signal N, or why, once reaped
        self.peak = 0  # bytes (ru_maxrss), once reaped
        self._done = threading.Event()
        threading.Thread(target=self._guard, daemon=True).start()

    def _guard(self) -> None:
        while not self._done.wait(POLL):
            rss = proc_kib(self.proc.pid, "VmRSS") * 1024
            if rss > self.caps.rss:
                self.kill(f"killed at {rss / MIB:,.0f} MiB")
            elif time.monotonic() > self.deadline:
                self.kill("timeout")

    def kill(self, why: str) -> None:
        """Kill it now (unless it was reaped already); ``why`` becomes its status."""
        if not self._done.is_set():
            self.why = self.why or why
            kill(self.proc)

    def check(self) -> bool:
        """True while it runs."""
        return not self.ended()

    def ended(self) -> bool:
        return bool(self.status) or self._reap(os.WNOHANG)

    def wait(self) -> None:
        if not self.status:
            self._reap(0)

    def _reap(self, flags: int) -> bool:
        pid, status, usage = os.wait4(self.proc.pid, flags)
        if not pid:
            return False
        self._done.set()
        code = os.waitstatus_to_exitcode(status)
        self.proc.returncode = code  # Popen must not wait for it again
        if self.why:
            self.status = self.why
        elif code == 0:
            self.status = "ok"
        else:
            self.status = f"exit {code}" if code > 0 else f"signal {-code}"
        self.peak = usage.ru_maxrss * 1024
        return True


def last_line(path: Path) -> str:
    try:
        lines = [x for x in path.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


def run_rokuprof(args: list[str], tree: Path, engine: str, caps: Caps, logs: Path) -> Outcome:
    """``python -m rokuprof ARGS`` of ``tree``, bounded by ``caps``."""
    err = logs / "stderr.txt"
    with open(logs / "stdout.txt", "wb") as out, open(err, "wb") as errors:
        child = Child(
            [sys.executable, "-m", "rokuprof", *args],
            tree,
            engine,
            caps,
            stdout=out,
            stderr=errors,
            stdin=subprocess.DEVNULL,
        )
    child.wait()
    seconds = time.monotonic() - child.start
    note = "" if child.status == "ok" else last_line(err)
    return Outcome(child.status, seconds, child.peak, note=note)


def largest_file(path: Path) -> int | None:
    if path.is_file():
        return path.stat().st_size
    sizes = [p.stat().st_size for p in path.rglob("*") if p.is_file()] if path.exists() else []
    return max(sizes, default=None)


def command_args(command: str, stream: Path, out: Path) -> tuple[list[str], Path]:
    """The arguments of ``command`` on ``stream``, and where to look for what it wrote."""
    if command == "inspect":
        return ["inspect", str(stream)], out / "none"
    if command == "convert":
        return ["convert", str(stream), "--out", str(out)], out / "chunks"
    if command == "report":
        return ["report", str(stream), "-o", str(out / "report.html")], out / "report.html"
    return ["export", str(stream), "-f", "pprof,speedscope", "-o", f"{out}/"], out


def run_command(command: str, stream: Path, tree: Path, engine: str, caps: Caps, work: Path):
    """One CLI case: the command on the stream, its outputs measured, then deleted."""
    out = Path(tempfile.mkdtemp(prefix=f"{command}-", dir=work))
    try:
        args, written = command_args(command, stream, out)
        result = run_rokuprof(args, tree, engine, caps, out)
        result.largest = largest_file(written)
        return result
    finally:
        shutil.rmtree(out, ignore_errors=True)


def commit_of(tree: Path) -> str:
    """The commit ``tree`` is at (``-dirty``: with changes not committed)."""
    out = subprocess.run(
        ["git", "-C", str(tree), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() or "not a git checkout"


def core_of(tree: Path, engine: str) -> str:
    """The decoder core ``rokuprof --version`` of ``tree`` names under ``engine``."""
    out = subprocess.run(
        [sys.executable, "-m", "rokuprof", "--version"],
        env=child_env(tree, engine),
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    line = next((x for x in out.stdout.splitlines() if "core" in x), "")
    return line.split(":", 1)[-1].strip() or f"unknown (exit {out.returncode})"


# --- printing ---------------------------------------------------------------------------------


def mib(nbytes: float | None) -> str:
    return "-" if nbytes is None else f"{nbytes / MIB:,.0f}"


def size(nbytes: int | None) -> str:
    if nbytes is None:
        return "-"
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", 1024)):
        if nbytes >= scale:
            return f"{nbytes / scale:,.1f} {unit}"
    return f"{nbytes} B"


def ratio(this: float, other: float, capped: bool) -> str:
    """``other / this`` as ``12.3x`` (``>12.3x`` when ``other`` was cut short by a cap)."""
    if not this or not other:
        return "-"
    return f"{'>' if capped else ''}{other / this:,.1f}x"


CLI_CELLS = f"{'status':>18} {'s':>7} {'peak MiB':>9} {'largest':>10}"


def compared(label: str, runs: list[tuple[str, Outcome]], notes: list[str], sizes=False) -> str:
    """One table row: ``label``, each tree's cells, and with two trees the ratios of time and
    peak (and of the largest file, with ``sizes``); each failed run's last line goes to
    ``notes``."""
    row = label
    for name, r in runs:
        row += f" | {cli_cells(r)}"
        if r.note and not r.capped:
            notes.append(f"  {name}, {' '.join(label.split())}: {r.note}")
    if len(runs) == 2:
        (_, this), (_, base) = runs
        row += f" | {ratio(this.seconds, base.seconds, base.capped):>11}"
        row += f" {ratio(this.peak, base.peak, base.capped):>8}"
        if sizes:
            row += f" {ratio(this.largest or 0, base.largest or 0, base.capped):>7}"
    return row


def print_notes(notes: list[str]) -> None:
    if notes:
        print("last error lines of the runs that did not succeed:")
        print("\n".join(notes))


def cli_cells(r: Outcome) -> str:
    return f"{r.status:>18} {r.seconds:7.1f} {mib(r.peak):>9} {size(r.largest):>10}"


# --- the CLI part -----------------------------------------------------------------------------


def cli_part(
    trees: list[tuple[str, Path]], files: dict[str, Path], opts, caps: Caps, work: Path
) -> None:
    print(
        "\nCLI: status, wall seconds, peak RSS (MiB), largest file written (convert: largest "
        f"chunk); caps {caps.seconds:g} s, {caps.rss / MIB:,.0f} MiB"
    )
    head = f"{'stream':20} {'command':8} {'engine':6}"
    for name, _ in trees:
        head += f" | {name + ': ' + 'status':>18} {'s':>7} {'peak MiB':>9} {'largest':>10}"
    if len(trees) == 2:
        head += f" | {'base/this s':>11} {'RSS':>8}"
    print(head)
    notes = []
    for stream, path in files.items():
        for command in opts.commands:
            for engine in opts.engines:
                label = f"{stream:20} {command:8} {engine:6}"
                runs = [(n, run_command(command, path, t, engine, caps, work)) for n, t in trees]
                print(compared(label, runs, notes), flush=True)
    print_notes(notes)


# --- the daemon part --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch_metrics(port: int) -> tuple[float, str | None]:
    """(seconds, body) of one ``GET /metrics`` (body ``None``: failed or timed out)."""
    start = time.monotonic()
    left = lambda: max(0.001, start + METRICS_TIMEOUT - time.monotonic())  # noqa: E731
    parts = []
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=left()) as s:
            s.settimeout(left())
            s.sendall(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            while part := s.recv(65536):
                parts.append(part)
                s.settimeout(left())
    except OSError:
        return time.monotonic() - start, None
    reply = b"".join(parts).decode("utf-8", "replace")
    head, _, body = reply.partition("\r\n\r\n")
    ok = head.startswith("HTTP/1.") and " 200 " in head.split("\r\n", 1)[0] + " "
    return time.monotonic() - start, body if ok else None


def tick_values(body: str) -> dict[str, float]:
    """Every sample whose metric name mentions ``tick``: {name{labels}: value}."""
    found = {}
    for line in body.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        key, _, value = line.rpartition(" ")
        if "tick" in key.split("{", 1)[0]:
            with contextlib.suppress(ValueError):
                found[key] = float(value)
    return found


def write_config(path: Path, out: Path, ports: dict[str, dict], metrics_port: int) -> None:
    """The daemon's TOML config (the format of ``tests/daemon_helpers.write_config_file``,
    written here so that this process never imports rokuprof)."""
    lines = [
        "[capture]",
        f'out = "{out}"',
        "chunk_seconds = 10",
        "[sentry]",
        'dsn = ""',
        'environment = "bench"',
        "[metrics]",
        f'listen = "127.0.0.1:{metrics_port}"',
    ]
    for serial, dev in ports.items():
        lines += [
            "[[devices]]",
            'host = "127.0.0.1"',
            f'name = "{serial}"',
            f"profiler_port = {dev['profiler']}",
            f"ecp_port = {dev['ecp']}",
            f"console_port = {dev['console']}",
        ]
    path.write_text("\n".join(lines) + "\n")


def sessions(out: Path, serial: str) -> list[dict]:
    records = []
    for path in sorted((out / serial).glob("*/session.json")):
        with contextlib.suppress(OSError, ValueError):
            records.append(json.loads(path.read_text()))
    return records


def read_json_line(proc: subprocess.Popen, timeout: float) -> dict | None:
    """The next JSON line the child prints (``None``: it printed none within ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            line = proc.stdout.readline()
            if not line:
                return None
            with contextlib.suppress(ValueError):
                return json.loads(line)
        elif proc.poll() is not None:
            return None
    return None


def last_json_line(proc: subprocess.Popen) -> dict:
    """The last JSON line an ended child printed ({} if none)."""
    for line in reversed(proc.stdout.read().splitlines()):
        with contextlib.suppress(ValueError):
            return json.loads(line)
    return {}


@dataclass
class DaemonResult:
    status: str = "?"  # how the daemon ended: ok (exit 0 on SIGTERM), exit N, timeout, killed
    peak: int = 0
    worst_latency: float = 0.0
    polls: int = 0  # /metrics fetches from the first answer on
    failed_polls: int = 0  # of those, failed or over 5 s
    tick: dict[str, float] = field(default_factory=dict)
    healthy: str = "-"  # complete / sessions (/ runs the device made)
    healthy_wait: float | None = None  # longest a healthy run waited for the daemon
    hostile: str = "-"  # the hostile session's status(es)
    finish: float | None = None  # seconds from the hostile stream's end to its session's end
    note: str = ""


class DaemonCase:
    """One daemon case: the devices (a child of the current checkout), the daemon (a child of
    ``tree``), the polling, the figures."""

    def __init__(self, tree: Path, engine: str, stream: Path, opts, caps: Caps, work: Path):
        self.tree, self.engine, self.stream, self.opts, self.caps = tree, engine, stream, opts, caps
        self.work = Path(tempfile.mkdtemp(prefix="daemon-", dir=work))
        self.out = self.work / "out"
        self.result = DaemonResult()
        self.sims: Child | None = None
        self.daemon: Child | None = None

    def run(self) -> DaemonResult:
        try:
            self._run()
        finally:
            for child in (self.daemon, self.sims):
                if child is not None:
                    child.kill("killed")
                    child.wait()
            if not self.opts.keep:
                shutil.rmtree(self.work, ignore_errors=True)
        return self.result

    def _start_devices(self) -> dict | None:
        """Start the two devices; their ports (``None``: they did not start)."""
        rate = max(1.0, self.stream.stat().st_size / self.opts.daemon_seconds)
        period = HEALTHY_RUN_SECONDS + HEALTHY_RUN_GAP
        runs = max(2, math.ceil(self.opts.daemon_seconds / period))
        argv = [sys.executable, SCRIPT, "--sim-child", str(self.stream), f"{rate:.0f}"]
        argv += [str(runs), f"{self.caps.seconds:g}"]
        # reading a large stream to replay takes a while (about 2.5 MB/s): not in the case's time
        caps = Caps(self.caps.seconds + 180, 4 * GIB)
        with open(self.work / "sims.log", "wb") as log:
            self.sims = Child(
                argv, self.opts.current, "native", caps,
                stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        ports = read_json_line(self.sims.proc, 150)
        if ports is None:
            why = last_line(self.work / "sims.log")
            self.result.note = f"the simulated devices did not start: {why}"
        return ports

    def _run(self) -> None:
        ports = self._start_devices()
        if ports is None:
            self.result.status = "no devices"
            return
        metrics_port = free_port()
        config = self.work / "rokuprof.toml"
        write_config(config, self.out, ports, metrics_port)
        with open(self.work / "daemon.log", "wb") as log:
            self.daemon = Child(
                [sys.executable, "-m", "rokuprof", "daemon", "--config", str(config)],
                self.tree, self.engine, self.caps,
                stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        devices_done = self._poll(metrics_port)
        self._stop()
        self._figures(devices_done)

    def _poll(self, port: int) -> dict | None:
        """Fetch /metrics every 100 ms until the devices are done and every session ended (or
        a cap is hit, or the daemon exits); the devices' final report (``None``: not done)."""
        r = self.result
        devices_done = None
        stream_end = 0.0
        while self.daemon.check():
            tick = time.monotonic()
            seconds, body = fetch_metrics(port)
            if body is not None or r.polls:  # counted from the first answer (the daemon is up)
                r.polls += 1
                r.failed_polls += body is None
                r.worst_latency = max(r.worst_latency, seconds)
            for key, value in tick_values(body or "").items():
                r.tick[key] = max(value, r.tick.get(key, value))
            if devices_done is None and self.sims.ended():
                devices_done = last_json_line(self.sims.proc)
                stream_end = time.monotonic()
            if devices_done is not None:
                records = sessions(self.out, HEALTHY) + sessions(self.out, HOSTILE)
                if records and all(x.get("status") != "streaming" for x in records):
                    r.finish = time.monotonic() - stream_end
                    break
            time.sleep(max(0.0, METRICS_EVERY - (time.monotonic() - tick)))
        return devices_done

    def _stop(self) -> None:
        """SIGTERM; the daemon has until the case's time limit (at least 10 s) to exit."""
        daemon = self.daemon
        if not daemon.ended():
            with contextlib.suppress(ProcessLookupError):
                daemon.proc.send_signal(signal.SIGTERM)
            daemon.deadline = max(daemon.deadline, time.monotonic() + 10)
            daemon.wait()
        self.result.status, self.result.peak = daemon.status, daemon.peak
        if daemon.status != "ok":
            self.result.note = last_line(self.work / "daemon.log")

    def _figures(self, devices_done: dict | None) -> None:
        r = self.result
        healthy = sessions(self.out, HEALTHY)
        complete = sum(1 for x in healthy if x.get("status") == "complete")
        runs = (devices_done or {}).get(HEALTHY, [])
        r.healthy = f"{complete}/{len(healthy)}" + (f" of {len(runs)}" if runs else "")
        waits = [x["connect_delay"] for x in runs if x.get("connect_delay") is not None]
        r.healthy_wait = max(waits, default=None)
        hostile = [x.get("status", "?") for x in sessions(self.out, HOSTILE)]
        r.hostile = ",".join(hostile) or "none"  # "cut": the case ended before the devices
        if devices_done is None:
            r.hostile += ", cut"


def sim_child(stream: Path, rate: float, healthy_runs: int, seconds: float) -> None:
    """(child) The two devices of a daemon case: print their ports as one JSON line, run until
    both are done (at most ``seconds`` after the daemon connected), print their runs."""
    import asyncio

    from rokuprof.simulator import DeviceConfig, ReplayBody, SimulatedDevice

    async def main() -> None:
        body = ReplayBody.from_file(stream)
        healthy = DeviceConfig(
            serial=HEALTHY,
            name="healthy",
            run_seconds=HEALTHY_RUN_SECONDS,
            runs=healthy_runs,
            run_gap=HEALTHY_RUN_GAP,
            seed=3,
            keep_bytes=False,
        )
        hostile = DeviceConfig(
            serial=HOSTILE, name="hostile", runs=1, replay=body, replay_rate=rate, keep_bytes=False
        )
        devices = [SimulatedDevice(healthy), SimulatedDevice(hostile)]
        for dev in devices:
            await dev.start()
        try:
            ports = {
                d.config.serial: {"ecp": d.ecp_port, "profiler": d.profiler_port,
                                  "console": d.console_port}
                for d in devices
            }  # fmt: skip
            print(json.dumps(ports), flush=True)
            deadline = time.monotonic() + seconds
            for dev in devices:
                with contextlib.suppress(TimeoutError):
                    await dev.wait_idle(max(0.1, deadline - time.monotonic()))
        finally:
            for dev in devices:
                await dev.stop()
        runs = {
            d.config.serial: [
                {"status": r.status, "bytes": r.bytes_sent, "connect_delay": r.connect_delay}
                for r in d.runs
            ]
            for d in devices
        }
        print(json.dumps(runs), flush=True)

    asyncio.run(main())


DAEMON_HEAD = (
    f"{'stream':20} {'engine':6} {'tree':8} {'daemon':>16} {'/metrics worst':>14} "
    f"{'failed':>6} {'peak MiB':>9} {'healthy ok':>10} {'wait s':>6} {'hostile':>18} "
    f"{'finish s':>8} {'worst tick':>10}"
)


def tick_text(tick: dict[str, float]) -> str:
    if not tick:
        return "n/a"
    key = max(tick, key=tick.get)
    value = tick[key]
    return f"{value * 1000:,.0f} ms" if "seconds" in key else f"{value:g}"


def daemon_row(stream: str, engine: str, tree: str, r: DaemonResult) -> str:
    wait = "-" if r.healthy_wait is None else f"{r.healthy_wait:.1f}"
    finish = "-" if r.finish is None else f"{r.finish:.1f}"
    return (
        f"{stream:20} {engine:6} {tree:8} {r.status:>16} {r.worst_latency * 1000:11,.0f} ms "
        f"{r.failed_polls:>6} {mib(r.peak):>9} {r.healthy:>10} {wait:>6} {r.hostile[:18]:>18} "
        f"{finish:>8} {tick_text(r.tick):>10}"
    )


def daemon_part(
    trees: list[tuple[str, Path]], files: dict[str, Path], opts, caps: Caps, work: Path
) -> None:
    last = {}  # the biggest stream of each kind (streams() lists them smallest first)
    for stream in streams(opts.quick):
        if stream.name in files:
            last[stream.kind] = stream.name
    print(
        f"\ndaemon: a healthy device and a hostile one streaming the case over "
        f"{opts.daemon_seconds:g} s; /metrics every {METRICS_EVERY * 1000:.0f} ms (worst latency, "
        f"failed fetches); caps {caps.seconds:g} s, {caps.rss / MIB:,.0f} MiB"
    )
    print(DAEMON_HEAD)
    names = set()
    notes = []
    for name in last.values():
        for engine in opts.engines:
            for tree_name, tree in trees:
                r = DaemonCase(tree, engine, files[name], opts, caps, work).run()
                names |= {key.split("{", 1)[0] for key in r.tick}
                print(daemon_row(name, engine, tree_name, r), flush=True)
                if r.note:
                    notes.append(f"  {tree_name}, {name}, {engine}: {r.note}")
    print("healthy ok: healthy sessions complete / sessions (of the runs the device made);")
    print("wait s: longest a healthy run waited for the daemon; finish s: from the end of the")
    print("devices' streams until every session had ended")
    print(f"worst tick: the largest value of {', '.join(sorted(names)) or 'no tick metric'}")
    if notes:
        print("last log lines of the daemons that did not stop cleanly:")
        print("\n".join(notes))


# --- main -------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to measure alongside")
    parser.add_argument(
        "--current", type=Path, default=ROOT, help="the checkout measured as this (default: ours)"
    )
    parser.add_argument("--quick", action="store_true", help="smaller streams")
    parser.add_argument(
        "--only", help='only the streams whose name contains this ("short paths": busy time)'
    )
    parser.add_argument("--commands", default=",".join(COMMANDS), help="CLI commands to run")
    parser.add_argument("--engines", default=",".join(ENGINES), help="native, pure or both")
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per case")
    parser.add_argument("--rss-limit", type=int, default=3072, help="MiB per process")
    parser.add_argument("--daemon-seconds", type=float, help="hostile stream length (20; 8)")
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI part")
    parser.add_argument("--no-daemon", action="store_true", help="skip the daemon part")
    parser.add_argument("--no-exports", action="store_true", help="skip the exports part")
    parser.add_argument("--keep", action="store_true", help="keep the daemon cases' files")
    parser.add_argument("--no-fleet", action="store_true", help="skip the fleet part")
    parser.add_argument("--fleet-devices", help="fleet sizes (1000,3000,10000; 1000,3000)")
    parser.add_argument("--fleet-seconds", type=float, default=30.0, help="fleet daemon run")
    parser.add_argument("--build-streams", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--sim-child", nargs=4, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    opts.commands = [c for c in opts.commands.split(",") if c]
    opts.engines = [e for e in opts.engines.split(",") if e]
    bad = set(opts.commands) - set(COMMANDS) | set(opts.engines) - set(ENGINES)
    if bad:
        parser.error(f"unknown command or engine: {', '.join(sorted(bad))}")
    if opts.fleet_devices is None:
        opts.fleet_devices = "1000,3000" if opts.quick else "1000,3000,10000"
    if opts.daemon_seconds is None:
        opts.daemon_seconds = 8.0 if opts.quick else 20.0
    opts.current = opts.current.resolve()
    return opts


def main() -> int:
    opts = parse_args()
    if opts.build_streams:
        build_streams_child(Path(opts.build_streams[0]), json.loads(opts.build_streams[1]))
        return 0
    if opts.sim_child:
        path, rate, runs, seconds = opts.sim_child
        sim_child(Path(path), float(rate), int(runs), float(seconds))
        return 0

    trees = [("this", opts.current)]
    if opts.baseline:
        trees.append(("baseline", opts.baseline.resolve()))
    caps = Caps(opts.time_limit, opts.rss_limit * MIB)
    fleet_only = opts.only == "fleet"
    wanted = [s for s in streams(opts.quick) if not opts.only or opts.only in s.name]
    wanted = [] if fleet_only else wanted
    short = [] if fleet_only else [r for r in SHORT_PATHS if not opts.only or opts.only in r.name]
    work = Path(tempfile.mkdtemp(prefix="rokuprof-worst-"))
    try:
        files = build_streams(opts.current, wanted, work) if wanted else {}
        print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; work dir {work}")
        for name, tree in trees:
            cores = ", ".join(f"{e}: {core_of(tree, e)}" for e in opts.engines)
            print(f"{name}: {tree} at {commit_of(tree)} ({cores})")
        for s in wanted:
            args = ", ".join(
                f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in s.kwargs.items()
            )
            print(f"  {s.name:20} {size(files[s.name].stat().st_size):>10}  {s.function}({args})")
        if not opts.no_cli and wanted:
            cli_part(trees, files, opts, caps, work)
        if not opts.no_cli and short:
            busy_part(trees, short, opts, caps, work)
        cases = [c for c in export_cases(opts.quick) if not opts.only or opts.only in c.stream.name]
        if cases and not opts.no_exports and not fleet_only:
            exports_part(trees, cases, opts, caps, work)
        if not opts.no_daemon and wanted:
            daemon_part(trees, files, opts, caps, work)
        if not opts.no_fleet and (fleet_only or not opts.only):
            from fleet import fleet_part  # benchmarks/fleet.py (imports this module)

            counts = [int(n) for n in opts.fleet_devices.split(",") if n]
            fleet_part(trees, counts, opts.fleet_seconds, caps.rss, work)
        hwm = proc_kib(os.getpid(), "VmHWM") * 1024
        print(f"\nthis script's own peak RSS (the floor of every child's figure): {mib(hwm)} MiB")
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
