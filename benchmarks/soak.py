"""Soak: the daemon left alone for ``--minutes`` with everything going wrong at once, and every
byte and chunk accounted for.

What runs, all on 127.0.0.1:

* ``rokuprof daemon`` from ``--tree`` (default: this checkout) as a process; ``kill -9`` at random
  times and started again a second later, as systemd would. Before each kill it is frozen
  (SIGSTOP) and every device says what it has sent and what the kernel still holds
  (``benchmarks/kill9.py``'s accounting): that is what was in flight at the kill.
* ``--devices`` simulated Rokus, each its own process (``benchmarks/soak_device.py``), relaunching
  runs forever (replayed at ``--rate`` bytes per second each); one is ``kill -9``-ed now and
  then and started again on the same ports. Before it dies it says what it sent and what was
  still in its own write buffer (lost with it).
* A loopback Sentry (``benchmarks/soak_sentry.py``) cycling through 500, 429 with
  ``Retry-After``, hang (no answer until the client gives up), connection closed mid-answer, and
  200, counting every chunk id it accepted and each second 200 for one (a duplicate). It
  accepts while the disk is full (a delivered marker cannot be written then) and for the last
  tenth, then through the drain.
* A tmpfs as ``out`` (``--tmpfs-mib``), with retention at its edge: ``[retention] max_bytes`` plus
  ``[capture] min_free_bytes`` about the tmpfs's size, ``chunk_seconds = 1`` (many small files).
  From 45 % to 65 % of the soak a filler file takes every free byte; then it is deleted.

After ``--minutes`` the devices stop (their runs end whole), Sentry accepts everything, and once
every chunk on disk was accepted (at most ``--drain`` seconds) the daemon gets SIGTERM. It prints
bytes sent against bytes archived (per run, matched to its session by the stream's start
time), chunks on disk against chunks accepted and duplicates, sessions left unfinished, the
daemon's RSS per minute, the longest capture stall (no byte archived while a device had a run
waiting or streaming) and the time from space returning to capture resuming, then the wanted
figures as PASS/MISS lines (the exit status is 0 whatever they say; 2 when it cannot run).

Needs Linux and root (it mounts the tmpfs, and unmounts it at the end, on Ctrl-C too)::

    python benchmarks/soak.py                      # 10 minutes, 4 devices, 48 MiB tmpfs
    python benchmarks/soak.py --quick              # 2 minutes, 32 MiB tmpfs
    python benchmarks/soak.py --tree /tmp/before   # the daemon of another checkout
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import pickle
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from soak_device import make_body  # noqa: E402
from soak_disk import MIB, OutScanner, fill, free_bytes, mount_tmpfs, unmount, usage  # noqa: E402
from soak_procs import (  # noqa: E402
    CHILDREN,
    Daemon,
    Device,
    kill_daemon,
    proc_cpu_ticks,
    proc_rss_kib,
    socket_ports,
)
from soak_report import report  # noqa: E402
from soak_sentry import CyclingSentry  # noqa: E402

CYCLE = ("500", "429", "hang", "close", "accept")


# -- the plan ----------------------------------------------------------------------------------


@dataclass
class Plan:
    """When what happens, in seconds from the start (from ``--seed``)."""

    seconds: float
    phase: float
    fill_at: float
    free_at: float
    daemon_kills: list[float]
    device_kills: list[tuple[float, int]]

    def sentry_mode(self, t: float) -> str:
        d = self.seconds
        if t < 0.1 * d or self.fill_at <= t < self.free_at or t >= 0.9 * d:
            return "accept"  # while the disk is full Sentry accepts: markers cannot be written
        if self.fill_at - self.phase <= t < self.fill_at:
            return "500"  # a backlog waits when the disk fills
        return CYCLE[int((t - 0.1 * d) // self.phase) % len(CYCLE)]


def spread(rng: random.Random, n: int, start: float, end: float) -> list[float]:
    """``n`` random times, one in each of ``n`` equal parts of [start, end)."""
    step = (end - start) / n
    return [round(start + step * (i + rng.uniform(0.15, 0.85)), 1) for i in range(n)]


def make_plan(seconds: float, devices: int, rng: random.Random) -> Plan:
    kills = spread(rng, max(2, round(seconds / 100)), 0.08 * seconds, 0.9 * seconds)
    device_times = spread(rng, max(1, round(seconds / 150)), 0.1 * seconds, 0.9 * seconds)
    return Plan(
        seconds=seconds,
        phase=max(6.0, seconds / 15),
        fill_at=0.45 * seconds,
        free_at=0.65 * seconds,
        daemon_kills=kills,
        device_kills=[(t, rng.randrange(devices)) for t in device_times],
    )


# -- the soak ----------------------------------------------------------------------------------


def write_config(path: Path, out: Path, devices: list[Device], dsn: str, args) -> None:
    lines = [
        "[capture]",
        f'out = "{out}"',
        f"chunk_seconds = {args.chunk_seconds:g}",
        f'min_free_bytes = "{args.min_free_mib}MiB"',
        "[sentry]",
        f'dsn = "{dsn}"',
        'environment = "soak"',
        "[retention]",
        f'max_bytes = "{args.retention_mib}MiB"',
        "[metrics]",
        'listen = ""',
    ]
    for dev in devices:
        lines += ["[[devices]]", 'host = "127.0.0.1"', f'name = "{dev.serial}"']
        lines += [f"{name}_port = {port}" for name, port in dev.ports.items()]
    path.write_text("\n".join(lines) + "\n")


async def soak(args: argparse.Namespace, work: Path, mnt: Path) -> dict:
    main = asyncio.current_task()
    for sig in (signal.SIGINT, signal.SIGTERM):  # stop: every finally below runs
        asyncio.get_running_loop().add_signal_handler(sig, main.cancel)
    rng = random.Random(args.seed)
    plan = make_plan(args.minutes * 60, args.devices, rng)
    out, filler = mnt / "out", mnt / "filler"
    out.mkdir()
    result: dict = {"plan": plan.__dict__, "kills": [], "device_kills": [], "events": []}
    samples: list[tuple[float, int, bool, int]] = []  # (t, archived, a device active, free)
    rss: list[tuple[float, int, int, int]] = []  # (t, KiB, pid, CPU ticks)
    scanner = OutScanner(out)
    client_ports: set[int] = set()  # the daemon's ports: a run whose client was not one of
    # them streamed to someone else (a shared machine's stray client), not to the daemon
    body = await asyncio.to_thread(make_body, args.run_seconds, args.rate, args.seed)
    args.body = work / "body.pickle"
    args.body.write_bytes(pickle.dumps(body))
    devices = [Device(f"SOAK{i}", 40 + i, args, work) for i in range(args.devices)]
    async with CyclingSentry(retry_after=args.retry_after) as sentry:
        config = work / "rokuprof.toml"
        write_config(config, out, devices, sentry.dsn, args)
        daemon = Daemon(args.tree, config, work / "daemon.log")
        tasks: list[asyncio.Task] = []
        try:
            for dev in devices:
                await dev.start()
            daemon.t0 = t0 = time.monotonic()
            await daemon.start()
            supervisor = asyncio.create_task(daemon.supervise())

            def now() -> float:
                return time.monotonic() - t0

            def event(text: str) -> None:
                result["events"].append((round(now(), 1), text))
                print(f"{now():7.1f} s  {text}", flush=True)

            async def at(t: float) -> None:
                await asyncio.sleep(max(0.0, t - now()))

            async def watch_disk() -> None:
                while True:
                    proc = daemon.proc
                    if proc is not None and proc.returncode is None:
                        client_ports.update(await asyncio.to_thread(socket_ports, proc.pid))
                    await asyncio.to_thread(scanner.scan)
                    active = any(d.active for d in devices)
                    samples.append((now(), scanner.archived(), active, free_bytes(mnt)))
                    await asyncio.sleep(0.5)

            async def watch_rss() -> None:
                while True:
                    proc = daemon.proc
                    if proc is not None and proc.returncode is None:
                        pid = proc.pid
                        rss.append((now(), proc_rss_kib(pid), pid, proc_cpu_ticks(pid)))
                    await asyncio.sleep(1.0)

            async def run_sentry() -> None:
                while True:
                    mode = plan.sentry_mode(now())
                    if mode != sentry.mode:
                        sentry.mode = mode
                        event(f"Sentry: {mode}")
                    await asyncio.sleep(0.25)

            async def run_disk() -> None:
                await at(plan.fill_at)
                size = await asyncio.to_thread(fill, filler)
                event(f"disk filled: a {size / MIB:.1f} MiB filler, {free_bytes(mnt)} B free")
                await at(plan.free_at)
                filler.unlink()
                event(f"space returned: {free_bytes(mnt) / MIB:.1f} MiB free")

            lock = asyncio.Lock()

            async def run_daemon_kills() -> None:
                for t in plan.daemon_kills:
                    await at(t)
                    async with lock:
                        kill = await kill_daemon(daemon, devices, round(now(), 1))
                    if kill is not None:
                        result["kills"].append(kill.__dict__)
                        event(f"kill -9 daemon (frozen {kill.frozen})")

            async def run_device_kills() -> None:
                for t, i in plan.device_kills:
                    await at(t)
                    dev = devices[i]
                    async with lock:
                        row = await dev.kill()
                    result["device_kills"].append({"t": round(now(), 1), "row": row})
                    event(f"kill -9 device {dev.serial}")
                    await asyncio.sleep(2.0)
                    await dev.start()
                    event(f"device {dev.serial} started again")

            tasks = [
                asyncio.create_task(c)
                for c in (
                    watch_disk(),
                    watch_rss(),
                    run_sentry(),
                    run_disk(),
                    run_daemon_kills(),
                    run_device_kills(),
                )
            ]
            await at(plan.seconds)
            for task in tasks[2:]:
                task.cancel()
            sentry.mode = "accept"
            event("soak over: devices stop, Sentry accepts, the daemon drains")
            with contextlib.suppress(FileNotFoundError):
                filler.unlink()
            await asyncio.gather(*(dev.stop() for dev in devices))
            deadline = time.monotonic() + args.drain
            await asyncio.sleep(3.0)  # the runs' last chunks are written
            while time.monotonic() < deadline:
                if scanner.on_disk <= set(sentry.accepted) and daemon.proc.returncode is None:
                    break
                await asyncio.sleep(1.0)
            event(f"drained: {len(scanner.on_disk - set(sentry.accepted))} chunk(s) not accepted")
            daemon.stopping = True
            daemon.proc.terminate()
            try:
                await asyncio.wait_for(supervisor, 60)
            except TimeoutError:
                event("the daemon did not exit within 60 s of SIGTERM: killed")
                daemon.proc.kill()
                await supervisor
            tasks[0].cancel()
            tasks[1].cancel()
            await asyncio.to_thread(scanner.scan)
            result["usage"] = await asyncio.to_thread(usage, out)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for dev in devices:
                await dev.stop()
            daemon.stopping = True
            if daemon.proc is not None and daemon.proc.returncode is None:
                daemon.proc.kill()
                await daemon.proc.wait()
        result.update(
            t0=t0,
            ticks_per_second=os.sysconf("SC_CLK_TCK"),
            samples=samples,
            rss=rss,
            daemon_exits=daemon.exits,
            sentry={
                "answers": dict(sentry.answers),
                "accepted": dict(sentry.accepted),
                "closed_mid": sum(sentry.closed_mid.values()),
                "unreadable": sentry.unreadable,
                "hangs_given_up": sentry.hangs_given_up,
            },
        )
    result["client_ports"] = sorted(client_ports)
    result["ends"] = [row for dev in devices for row in dev.ends]
    result["deaths"] = [row for dev in devices for row in dev.deaths]
    result["sessions"] = [
        s.__dict__ | {"chunk_files": len(s.chunk_files)} for s in scanner.sessions.values()
    ]
    result["chunks_seen"] = sorted(scanner.chunks)
    result["chunks_on_disk"] = sorted(scanner.on_disk)
    result["daemon_log_tail"] = (work / "daemon.log").read_text(errors="replace")[-4000:]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--quick", action="store_true", help="2 minutes on a 32 MiB tmpfs")
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout the daemon runs from")
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--rate", type=float, help="stream bytes per second per device")
    parser.add_argument("--run-seconds", type=float, default=10.0, help="length of one run")
    parser.add_argument("--chunk-seconds", type=float, default=1.0)
    parser.add_argument("--tmpfs-mib", type=int)
    parser.add_argument("--retention-mib", type=int, help="[retention] max_bytes")
    parser.add_argument("--min-free-mib", type=int, default=4, help="[capture] min_free_bytes")
    parser.add_argument("--retry-after", type=float, default=3.0, help="Sentry's 429 Retry-After")
    parser.add_argument("--drain", type=float, default=90.0, help="seconds to deliver the rest")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--work", type=Path, help="keep logs and the config here")
    parser.add_argument("--json", type=Path, help="write the raw figures here")
    args = parser.parse_args(argv)
    if args.quick:
        args.minutes = 2.0
    big = args.minutes >= 5
    args.tmpfs_mib = args.tmpfs_mib or (48 if big else 32)
    args.retention_mib = args.retention_mib or (40 if big else 26)
    args.rate = args.rate or (60_000.0 if big else 200_000.0)
    args.tree = args.tree.resolve()
    if sys.platform != "linux" or os.geteuid() != 0 or not shutil.which("mount"):
        print("needs Linux and root (it mounts a tmpfs)", file=sys.stderr)
        return 2
    if not (args.tree / "rokuprof" / "__init__.py").exists():
        print(f"--tree {args.tree}: no rokuprof package there", file=sys.stderr)
        return 2
    for sig in (signal.SIGINT, signal.SIGTERM):  # before the loop runs: clean up as on Ctrl-C
        signal.signal(sig, signal.default_int_handler)
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        mnt = Path(tmp) / "mnt"
        mount_tmpfs(mnt, args.tmpfs_mib)
        try:
            print(
                f"soak: {args.minutes:g} min, daemon from {args.tree}, {args.devices} devices at "
                f"{args.rate / 1000:g} kB/s, tmpfs {args.tmpfs_mib} MiB, retention "
                f"{args.retention_mib} MiB, min free {args.min_free_mib} MiB, chunks of "
                f"{args.chunk_seconds:g} s",
                flush=True,
            )
            result = asyncio.run(soak(args, work, mnt))
        except (KeyboardInterrupt, asyncio.CancelledError):
            print("interrupted: every process it started is killed", flush=True)
            result = None
        finally:
            for pid in list(CHILDREN):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            print(f"tmpfs: {unmount(mnt)}", flush=True)
    if result is None:
        return 130
    result["args"] = {k: str(v) for k, v in vars(args).items()}
    for line in report(result, args):
        print(line)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
