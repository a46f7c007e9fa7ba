"""Hostile peers against the real CLI: what a broken or malicious device on a Roku port costs.

Each case starts a hostile peer from tests/hostile_servers.py in this process (127.0.0.1 only)
and runs a real ``rokuprof`` subprocess against it, reading its peak RSS (VmHWM) from /proc:

* ``ecp-endless`` / ``ecp-300mb``: ECP answers device-info with a body that never ends, or with
  300 MB; ``watch`` and ``daemon`` run for ``--seconds`` (peak RSS; the run is cut if RSS passes
  ``--rss-limit`` to protect the machine).
* ``console-trickle``: the console sends one byte every 0.4 s; seconds until
  ``control --timeout 2`` gives up (cut at ``--give-up``).
* ``ecp-trickle``: SSDP points at an ECP that trickles; seconds until ``discover`` finishes.
* ``ssdp-flood``: one responder answers each M-SEARCH with many USNs; devices listed by one
  3 s ``discover``.
* ``installer-401``: the Application Installer answers every request with a Digest challenge
  whose body announces 1 GiB (and sends 128 MiB of it, then holds); peak RSS of ``pull``.
* ``rokuignore-stars``: ``profile`` of an app whose ``.rokuignore`` has
  ``*a*a*a*a*a*a*a*a*a*a*a*a*b`` beside a file named with 60 ``a``; seconds until it has
  packaged the app and given up on the installer (a closed port).
* ``toml-nested``: ``config check`` of ``a = [[[...`` 50,000 deep; its exit status and seconds.

Baseline, measured in the same run: ``watch`` against a port where nothing answers (its RSS is
what any capture costs). ``--tree`` runs another checkout too (e.g. the code before a change),
so its figures print next to this tree's with the ratio.

    python benchmarks/hostile_peers.py --tree /tmp/before
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hostile_servers import ChallengeFlood, EcpPeer, SsdpFlood, TricklingConsole  # noqa: E402

MIB = 1 << 20


def free_port() -> int:
    """A loopback port with nothing listening (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class Run:
    """One rokuprof subprocess from ``tree``: time to exit, peak RSS, last stderr line."""

    def __init__(
        self,
        tree: Path,
        args: list[str],
        seconds: float,
        rss_limit: int,
        env: dict[str, str] | None = None,
    ) -> None:
        self.tree, self.args, self.seconds, self.rss_limit = tree, args, seconds, rss_limit
        self.extra_env = env or {}
        self.returncode: int | None = None
        self.elapsed = 0.0
        self.peak = 0  # bytes
        self.cut = ""  # why the run was ended by us, if it was
        self.stdout = b""
        self.last_error = ""

    async def go(self) -> Run:
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
        env["PYTHONPATH"] = str(self.tree)
        env.pop("ROKUPROF_SENTRY_DSN", None)
        env.update(self.extra_env)
        start = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "rokuprof",
            *self.args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=tempfile.gettempdir(),
        )
        io = asyncio.ensure_future(proc.communicate())
        while not io.done():
            self.peak = max(self.peak, proc_kib(proc.pid, "VmHWM") * 1024)
            over_time = time.monotonic() - start > self.seconds
            if proc_kib(proc.pid, "VmRSS") * 1024 > self.rss_limit or over_time:
                self.cut = "RSS limit" if not over_time else "time"
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM if over_time else signal.SIGKILL)
                try:
                    await asyncio.wait_for(asyncio.shield(io), 10)
                except TimeoutError:
                    proc.kill()
                break
            await asyncio.sleep(0.1)
        self.stdout, err = await io
        self.returncode = proc.returncode
        self.elapsed = time.monotonic() - start
        lines = [x for x in err.decode(errors="replace").splitlines() if x.strip()]
        self.last_error = lines[-1][:160] if lines else ""
        return self


def watch_args(ecp_port: int, seconds: float, out: str) -> list[str]:
    closed = str(free_port())
    return [
        "watch",
        "127.0.0.1",
        "--ecp-port",
        str(ecp_port),
        "--profiler-port",
        closed,
        "--console-port",
        closed,
        "--duration",
        f"{seconds:g}",
        "--view",
        "plain",
        "--out",
        out,
    ]


def daemon_args(ecp_port: int, workdir: Path) -> list[str]:
    closed = free_port()
    config = workdir / "rokuprof.toml"
    config.write_text(
        f'[capture]\nout = "{workdir / "out"}"\n[sentry]\ndsn = ""\n[metrics]\nlisten = ""\n'
        f'[[devices]]\nhost = "127.0.0.1"\nname = "hostile"\nprofiler_port = {closed}\n'
        f"ecp_port = {ecp_port}\nconsole_port = {closed}\n"
    )
    return ["daemon", "--config", str(config)]


async def case_ecp(mode: str, command: str, tree: Path, opts) -> Run:
    async with EcpPeer(mode) as peer:
        with tempfile.TemporaryDirectory() as tmp:
            if command == "watch":
                args = watch_args(peer.port, opts.seconds, tmp)
            else:
                args = daemon_args(peer.port, Path(tmp))
            return await Run(tree, args, opts.seconds + 5, opts.rss_limit * MIB).go()


async def case_baseline(tree: Path, opts) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        args = watch_args(free_port(), opts.seconds, tmp)
        return await Run(tree, args, opts.seconds + 5, opts.rss_limit * MIB).go()


async def case_console_trickle(tree: Path, opts) -> Run:
    async with TricklingConsole(delay=lambda: 0.4) as peer:  # never quiet for 0.5 s
        args = ["control", "127.0.0.1", "status", "--console-port", str(peer.port)]
        return await Run(tree, [*args, "--timeout", "2"], opts.give_up, opts.rss_limit * MIB).go()


async def case_ecp_trickle(tree: Path, opts) -> Run:
    async with EcpPeer("trickle") as peer, SsdpFlood(1, ecp_port=peer.port) as ssdp:
        args = ["discover", "--json", "--timeout", "1", "--bind", "127.0.0.1:0"]
        args += ["--target", f"127.0.0.1:{ssdp.port}"]
        return await Run(tree, args, opts.give_up, opts.rss_limit * MIB).go()


async def case_ssdp(tree: Path, opts) -> Run:
    async with SsdpFlood(600) as flood:
        args = ["discover", "--json", "--timeout", "3", "--bind", "127.0.0.1:0"]
        args += ["--target", f"127.0.0.1:{flood.port}"]
        return await Run(tree, args, opts.give_up, opts.rss_limit * MIB).go()


async def case_installer(tree: Path, opts) -> Run:
    async with ChallengeFlood(1 << 30, limit=128 * MIB) as peer:
        with tempfile.TemporaryDirectory() as tmp:
            args = ["pull", "127.0.0.1", "--installer-port", str(peer.port), "--out", tmp]
            env = {"ROKU_DEV_PASSWORD": "pw"}
            return await Run(tree, args, opts.give_up, opts.rss_limit * MIB, env).go()


async def case_rokuignore(tree: Path, opts) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "app"
        (app / "source").mkdir(parents=True)
        (app / "manifest").write_text("title=Stars\nmajor_version=1\nminor_version=0\n")
        (app / "source" / "main.brs").write_text("sub Main()\nend sub\n")
        (app / ".rokuignore").write_text("*a" * 12 + "*b\n")
        (app / ("a" * 60)).write_text("kept\n")
        closed = str(free_port())
        args = ["profile", str(app), "--device", "127.0.0.1", "--installer-port", closed]
        args += ["--ecp-port", closed, "--duration", "1", "--out", str(Path(tmp) / "out")]
        env = {"ROKU_DEV_PASSWORD": "pw"}
        return await Run(tree, args, opts.give_up, opts.rss_limit * MIB, env).go()


async def case_toml(tree: Path, opts) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "deep.toml"
        config.write_text("a = " + "[" * 50_000 + "\n")
        return await Run(
            tree, ["config", "check", str(config)], opts.give_up, opts.rss_limit * MIB
        ).go()


def status(run: Run) -> str:
    return f"exit {run.returncode} in {run.elapsed:.1f} s"


def mib(run: Run) -> str:
    cut = f" (cut: {run.cut})" if run.cut == "RSS limit" else ""
    return f"{run.peak / MIB:,.0f} MiB{cut}"


def secs(run: Run) -> str:
    cut = " (still waiting: cut)" if run.cut else ""
    return f"{run.elapsed:.1f} s{cut}"


def devices(run: Run) -> str:
    try:
        return f"{len(json.loads(run.stdout))} device(s) in {run.elapsed:.1f} s"
    except ValueError:
        return f"unreadable output ({run.last_error})"


CASES: dict[str, tuple[Callable, Callable[[Run], str], Callable[[Run], float]]] = {
    "baseline: watch, nothing answers": (case_baseline, mib, lambda r: r.peak),
    "ecp-endless: watch": (lambda t, o: case_ecp("endless", "watch", t, o), mib, lambda r: r.peak),
    "ecp-endless: daemon": (
        lambda t, o: case_ecp("endless", "daemon", t, o),
        mib,
        lambda r: r.peak,
    ),
    "ecp-300mb: watch": (lambda t, o: case_ecp("sized", "watch", t, o), mib, lambda r: r.peak),
    "ecp-300mb: daemon": (lambda t, o: case_ecp("sized", "daemon", t, o), mib, lambda r: r.peak),
    "console-trickle: control --timeout 2": (case_console_trickle, secs, lambda r: r.elapsed),
    "ecp-trickle: discover --timeout 1": (case_ecp_trickle, secs, lambda r: r.elapsed),
    "installer-401: pull": (case_installer, mib, lambda r: r.peak),
    "rokuignore-stars: profile (packaging)": (case_rokuignore, secs, lambda r: r.elapsed),
    "toml-nested: config check": (case_toml, status, lambda r: r.elapsed),
    "ssdp-flood: discover --timeout 3": (
        case_ssdp,
        devices,
        lambda r: float(len(json.loads(r.stdout or b"[]"))),
    ),
}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, help="another checkout to measure too (before)")
    parser.add_argument("--seconds", type=float, default=10.0, help="watch/daemon run time")
    parser.add_argument("--give-up", type=float, default=60.0, help="cut waits after this long")
    parser.add_argument("--rss-limit", type=int, default=6144, help="MiB; kill a run above it")
    parser.add_argument("--only", help="run the cases whose name contains this")
    parser.add_argument("--no-this", action="store_true", help="measure only --tree")
    opts = parser.parse_args()
    trees = [] if opts.no_this else [("this tree", ROOT)]
    trees += [("--tree", opts.tree.resolve())] if opts.tree else []
    print(f"{'case':40} " + " | ".join(f"{name:>32}" for name, _ in trees) + "   ratio")
    for name, (case, show, value) in CASES.items():
        if opts.only and opts.only not in name:
            continue
        runs = [await case(tree, opts) for _, tree in trees]
        row = f"{name:40} " + " | ".join(f"{show(r):>32}" for r in runs)
        if len(runs) == 2:
            mine, other = value(runs[0]), value(runs[1])
            row += f"   {other / mine:,.1f}x" if mine else "   -"
        print(row, flush=True)
        for (label, _), run in zip(trees, runs, strict=True):
            if run.last_error and "error" in run.last_error.lower():
                print(f"    {label}: {run.last_error}")


if __name__ == "__main__":
    asyncio.run(main())
