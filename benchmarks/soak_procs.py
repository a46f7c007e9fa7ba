"""The soak's processes (``benchmarks/soak.py``): each simulated device (``soak_device.py``)
and the daemon as children it can freeze, ``kill -9`` and start again, and what ``/proc`` says
about them (RSS, CPU time, the daemon's sockets).
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
import time
from dataclasses import dataclass, field
from pathlib import Path

from kill9 import frozen_in, stopped

ROOT = Path(__file__).resolve().parent.parent
CHILDREN: set[int] = set()  # pids to kill whatever happens


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def child_env(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    env.pop("ROKUPROF_SENTRY_DSN", None)
    env["PYTHONPATH"] = str(tree)
    return env


class Device:
    """One ``soak_device.py`` process, restarted on the same ports after a kill."""

    def __init__(self, serial: str, seed: int, args: argparse.Namespace, logs: Path) -> None:
        self.serial, self.seed, self.args, self.logs = serial, seed, args, logs
        ecp, profiler, console, installer = free_ports(4)
        self.ports = {"ecp": ecp, "profiler": profiler, "console": console}
        self.installer = installer
        self.proc: asyncio.subprocess.Process | None = None
        self.ends: list[dict] = []  # its runs' "end" lines
        self.deaths: list[dict] = []  # its "died" lines
        self.tick: dict = {}
        self.starts = 0
        self._answer: asyncio.Queue = asyncio.Queue()
        self._reader: asyncio.Task | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    @property
    def active(self) -> bool:
        """An app run is waiting for its profiler client or streaming (as last told)."""
        return self.alive and bool(self.tick.get("active"))

    async def start(self) -> None:
        cmd = [sys.executable, str(ROOT / "benchmarks" / "soak_device.py")]
        cmd += ["--serial", self.serial, "--seed", str(self.seed)]
        cmd += [f"--{name}-port={port}" for name, port in self.ports.items()]
        cmd += [f"--installer-port={self.installer}", f"--rate={self.args.rate:g}"]
        cmd += [f"--run-seconds={self.args.run_seconds:g}", f"--body={self.args.body}"]
        for attempt in range(20):  # the old process's ports may take a moment to be free
            with (self.logs / f"{self.serial}.log").open("ab") as err:
                self.proc = await asyncio.create_subprocess_exec(
                    *cmd,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=err,
                    env=child_env(ROOT),
                    start_new_session=True,
                )
            CHILDREN.add(self.proc.pid)
            line = await asyncio.wait_for(self.proc.stdout.readline(), 60)
            if line and json.loads(line).get("kind") == "ready":
                break
            await self.proc.wait()
            await asyncio.sleep(0.5 + attempt * 0.2)
        else:
            raise RuntimeError(f"device {self.serial} does not start (see its log)")
        self.starts += 1
        self.tick = {}
        self._reader = asyncio.create_task(self._read(self.proc))

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        while line := await proc.stdout.readline():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # not one of its lines (a warning printed to stdout)
            row["serial"] = self.serial
            kind = row["kind"]
            if kind == "tick":
                self.tick = row
            elif kind == "end":
                self.ends.append(row)
            elif kind == "died":
                self.deaths.append(row)
                await self._answer.put(row)
            elif kind == "snap":
                await self._answer.put(row)

    async def ask(self, command: str, timeout: float = 5.0) -> dict | None:
        if not self.alive:
            return None
        while not self._answer.empty():
            self._answer.get_nowait()
        self.proc.stdin.write(command.encode() + b"\n")
        with contextlib.suppress(ConnectionError):
            await self.proc.stdin.drain()
        try:
            return await asyncio.wait_for(self._answer.get(), timeout)
        except TimeoutError:
            return None

    async def kill(self) -> dict | None:
        """``kill -9`` (the device sends it to itself, right after its figures)."""
        row = await self.ask("die")
        if self.alive:
            self.proc.kill()
        await self.proc.wait()
        if self._reader is not None:
            await self._reader  # its last lines
        CHILDREN.discard(self.proc.pid)
        return row

    async def stop(self) -> None:
        if self.alive:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 5)
        if self.proc is not None:
            CHILDREN.discard(self.proc.pid)


class Daemon:
    """``rokuprof daemon`` from ``tree``; restarted a second after it ends, until stopped."""

    def __init__(self, tree: Path, config: Path, log: Path) -> None:
        self.tree, self.config, self.log = tree, config, log
        self.proc: asyncio.subprocess.Process | None = None
        self.exits: list[dict] = []  # when and how each process ended
        self.stopping = False
        self.killing = False
        self.t0 = time.monotonic()

    async def start(self) -> None:
        with self.log.open("ab") as err:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "rokuprof",
                "daemon",
                "--config",
                str(self.config),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=err,
                env=child_env(self.tree),
                cwd=self.tree,
                start_new_session=True,
            )
        CHILDREN.add(self.proc.pid)

    async def supervise(self) -> None:
        while True:
            proc = self.proc
            code = await proc.wait()
            CHILDREN.discard(proc.pid)
            self.exits.append(
                {"t": round(time.monotonic() - self.t0, 1), "code": code, "killed": self.killing}
            )
            self.killing = False
            if self.stopping:
                return
            await asyncio.sleep(1.0)  # systemd's RestartSec is 100 ms; a second is kinder here
            await self.start()


@dataclass
class Kill:
    t: float
    frozen: str
    snaps: list[dict] = field(default_factory=list)


async def kill_daemon(daemon: Daemon, devices: list[Device], t: float) -> Kill | None:
    """Freeze the daemon, take every device's figures, ``kill -9``."""
    proc = daemon.proc
    if proc is None or proc.returncode is not None:
        return None
    try:
        proc.send_signal(signal.SIGSTOP)
    except ProcessLookupError:
        return None
    deadline = time.monotonic() + 5
    while not stopped(proc.pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.005)
    kill = Kill(t, frozen_in(proc.pid))
    for dev in devices:
        row = await dev.ask("snap")
        if row is not None:
            kill.snaps.append(row)
    daemon.killing = True
    proc.kill()
    return kill


def socket_ports(pid: int) -> set[int]:
    """Local ports of the TCP sockets process ``pid`` holds (its clients' ports, for the
    daemon: which device runs it was the client of)."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(int(link[8:-1]))
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                parts = line.split()
                if int(parts[9]) in inodes:
                    ports.add(int(parts[1].rsplit(":", 1)[1], 16))
    return ports


def proc_rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def proc_cpu_ticks(pid: int) -> int:
    """User plus system CPU time of ``pid`` so far, in clock ticks."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])
