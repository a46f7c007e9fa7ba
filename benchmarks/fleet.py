"""The fleet row of ``benchmarks/worst_cases.py``: a real ``rokuprof daemon`` given N configured
devices that never answer, for each checkout measured.

    python benchmarks/worst_cases.py --only fleet --baseline /tmp/before
    python benchmarks/worst_cases.py --only fleet --fleet-devices 1000,3000,10000
    python benchmarks/fleet.py --devices 3000 --seconds 30 --baseline /tmp/before  # the same

Every device is ``127.0.0.1`` on a port nothing listens on (profiler, ECP and console: bound and
closed, below the ephemeral range so that a connect never meets itself): the case the issue
measured ("3,000 devices whose ports nothing answers"). The daemon runs ``--seconds`` (30) with
its defaults (no Sentry); ``/metrics`` is fetched every second from its first answer on (a fetch
gives up after 10 s and counts as failed); then SIGTERM. Figures per checkout: peak RSS
(``ru_maxrss``), the most files it held open, ``/metrics`` worst and median latency and failed
fetches, and how it ended after SIGTERM (exit status and seconds; ``no exit`` when it was still
running 60 s later and was killed). The daemon is held to the ``--rss-limit`` (``killed at N
MiB``) and to ``--seconds`` plus 90 s.

Like worst_cases.py, this process never imports rokuprof (each checkout runs as a child).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from worst_cases import MIB, ROOT, Caps, Child, commit_of, mib, proc_kib

FIRST_PORT = 20000  # below the ephemeral range (32768 on Linux)
SCRAPE_TIMEOUT = 10.0
STOP_WAIT = 60.0  # seconds after SIGTERM before the daemon is killed
DEFAULT_DEVICES = (1000, 3000, 10000)


@dataclass
class FleetResult:
    status: str = ""  # how the daemon ended: exit N, no exit, killed at N MiB, ...
    peak: int = 0  # bytes
    fds: int = 0
    latencies: list[float] = field(default_factory=list)  # answered fetches
    failed: int = 0
    answered_at: float | None = None  # seconds from the start to the first answer
    exit_seconds: float | None = None  # from SIGTERM to the end

    @property
    def worst(self) -> float | None:
        return max(self.latencies, default=None)

    @property
    def median(self) -> float | None:
        return statistics.median(self.latencies) if self.latencies else None


def refused_ports(count: int) -> list[int]:
    """``count`` ports of 127.0.0.1 that nothing listens on now."""
    ports: list[int] = []
    port = FIRST_PORT
    while len(ports) < count and port < 32768:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                ports.append(port)
            except OSError:
                pass
        port += 1
    if len(ports) < count:
        sys.exit(f"only {len(ports)} free ports below 32768")
    return ports


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(path: Path, out: Path, metrics_port: int, ports: list[int]) -> None:
    lines = ["[capture]", f'out = "{out}"', "[metrics]", f'listen = "127.0.0.1:{metrics_port}"']
    for i, port in enumerate(ports):
        lines += ["[[devices]]", 'host = "127.0.0.1"', f'name = "tv{i:05d}"']
        lines += [f"{key} = {port}" for key in ("profiler_port", "ecp_port", "console_port")]
    path.write_text("\n".join(lines) + "\n")


def fetch(port: int) -> float | None:
    """Seconds one ``/metrics`` took (``None``: failed or timed out)."""
    start = time.monotonic()
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/metrics", timeout=SCRAPE_TIMEOUT
        ) as reply:
            reply.read()
    except OSError:
        return None
    return time.monotonic() - start


def open_files(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def fleet_case(tree: Path, devices: int, seconds: float, rss_limit: int, work: Path) -> FleetResult:
    """One daemon of ``tree`` with ``devices`` silent devices (see the module docstring)."""
    case = Path(tempfile.mkdtemp(prefix=f"fleet-{devices}-", dir=work))
    metrics = free_port()
    config = case / "fleet.toml"
    write_config(config, case / "out", metrics, refused_ports(devices))
    caps = Caps(seconds + STOP_WAIT + 30, rss_limit)
    result = FleetResult()
    with open(case / "daemon.log", "wb") as log:
        child = Child(
            [sys.executable, "-m", "rokuprof", "daemon", "--config", str(config)],
            tree,
            "native",
            caps,
            stdout=subprocess.DEVNULL,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
    start = time.monotonic()
    while time.monotonic() - start < seconds and child.check():
        latency = fetch(metrics)
        if latency is not None and result.answered_at is None:
            result.answered_at = time.monotonic() - start
        if latency is not None:
            result.latencies.append(latency)
        elif result.answered_at is not None:
            result.failed += 1
        result.fds = max(result.fds, open_files(child.proc.pid))
        time.sleep(max(0.0, 1.0 - (latency or 0.0)))
    if child.check():
        os.kill(child.proc.pid, signal.SIGTERM)
        stopped = time.monotonic()
        while child.check() and time.monotonic() - stopped < STOP_WAIT:
            time.sleep(0.05)
        if child.check():
            child.kill("no exit")
        else:
            result.exit_seconds = time.monotonic() - stopped
    child.wait()
    shutil.rmtree(case, ignore_errors=True)
    result.status, result.peak = child.status, child.peak
    if result.status == "ok":
        result.status = "exit 0"
    return result


HEAD = (
    f"{'devices':>8} {'tree':8} {'peak MiB':>9} {'max fds':>8} {'1st answer s':>12} "
    f"{'/metrics worst':>14} {'median':>8} {'failed':>6} {'after SIGTERM':>18}"
)


def seconds_text(value: float | None, unit: str = "s") -> str:
    return "-" if value is None else f"{value:,.2f} {unit}"


def row(devices: int, tree: str, r: FleetResult) -> str:
    end = f"{r.status}, {seconds_text(r.exit_seconds)}" if r.exit_seconds is not None else r.status
    first = "never" if r.answered_at is None else seconds_text(r.answered_at)
    return (
        f"{devices:>8,} {tree:8} {mib(r.peak):>9} {r.fds:>8} {first:>12} "
        f"{seconds_text(r.worst):>14} {seconds_text(r.median):>8} {r.failed:>6} {end:>18}"
    )


def fleet_part(trees: list[tuple[str, Path]], counts: list[int], seconds: float, rss_limit: int,
               work: Path) -> None:  # fmt: skip
    """The fleet row: every count of devices, on every tree."""
    print(
        f"\nfleet: N configured devices on 127.0.0.1 ports nothing listens on, the daemon run "
        f"{seconds:g} s, /metrics every second (a fetch fails after {SCRAPE_TIMEOUT:g} s), then "
        f"SIGTERM ({STOP_WAIT:g} s to exit); caps {rss_limit / MIB:,.0f} MiB"
    )
    print(HEAD)
    for devices in counts:
        results = {}
        for name, tree in trees:
            results[name] = fleet_case(tree, devices, seconds, rss_limit, work)
            print(row(devices, name, results[name]), flush=True)
        if len(results) == 2:
            this, base = results.values()
            print(
                f"{'':>8} {'base/this':8} {_ratio(base.peak, this.peak):>9} "
                f"{_ratio(base.fds, this.fds):>8} {'':>12} {_ratio(base.worst, this.worst):>14}"
            )
    print("1st answer s: from the daemon's start to its first /metrics answer; worst, median and")
    print("failed count the fetches from then on")


def _ratio(base: float | None, this: float | None) -> str:
    if not base or not this:
        return "-"
    return f"{base / this:,.1f}x"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default=",".join(str(n) for n in DEFAULT_DEVICES))
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--baseline", type=Path, help="another checkout to measure alongside")
    parser.add_argument("--current", type=Path, default=ROOT)
    parser.add_argument("--rss-limit", type=int, default=3072, help="MiB")
    opts = parser.parse_args()
    trees = [("this", opts.current.resolve())]
    if opts.baseline:
        trees.append(("baseline", opts.baseline.resolve()))
    for name, tree in trees:
        print(f"{name}: {tree} at {commit_of(tree)}")
    work = Path(tempfile.mkdtemp(prefix="rokuprof-fleet-"))
    counts = [int(n) for n in opts.devices.split(",") if n]
    try:
        fleet_part(trees, counts, opts.seconds, opts.rss_limit * MIB, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"this script's own peak RSS: {mib(proc_kib(os.getpid(), 'VmHWM') * 1024)} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
