"""One simulated Roku as its own process, for ``benchmarks/soak.py``: killed with ``kill -9`` and
started again on the same ports, it is a device that lost power.

It runs :class:`~rokuprof.simulator.SimulatedDevice` (what ``rokuprof simulate`` runs) in replay
mode (a body generated once, by the soak for all its devices, and streamed at ``--rate`` bytes
per second: cheap, so the soak measures the daemon, not the simulator), relaunching runs
forever, and writes one JSON object a line on stdout:

* ``{"kind": "ready", ...}`` once listening, with its ports;
* ``{"kind": "tick", "active": ..., "start_ms": ..., "status": ..., "sent": ...}`` every
  ``--tick`` seconds: whether an app run is active (waiting for its profiler client or
  streaming) and what it has sent;
* ``{"kind": "end", "start_ms": ..., "status": ..., "sent": ...}`` for each run that ended
  (``start_ms`` is the run's stream header start time, which the daemon's ``session.json``
  records as ``profiler.start_ms``: the key that matches a run to its session).

On stdin it takes one command a line, each answered within one callback of its event loop (so
its figures are consistent: nothing is written to the connection meanwhile):

* ``snap``: ``{"kind": "snap", ...}``: the current run's bytes sent, the bytes of it still in
  this process's write buffer, and the kernel's queues on the profiler connection (unsent here,
  unread by the peer), read from ``/proc/net/tcp``;
* ``die``: the same as ``{"kind": "died", ...}``, flushed, then ``SIGKILL`` to itself.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import pickle
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kill9 import tcp_queues, user_buffer

from rokuprof.simulator import DeviceConfig, ReplayBody, SimulatedDevice
from rokuprof.simulator.replay import app_rate_for
from rokuprof.simulator.runs import STREAMING, RunRecord


def make_body(run_seconds: float, rate: float, seed: int) -> ReplayBody:
    """The stream body every run replays: ``run_seconds`` of the synthetic app at ``rate``."""
    return ReplayBody.generate(run_seconds, seed=seed, rate=app_rate_for(rate))


def emit(row: dict) -> None:
    sys.stdout.write(json.dumps(row) + "\n")
    sys.stdout.flush()


def client_port(run: RunRecord) -> int | None:
    """The port of the client that got the run's stream (the daemon's side of it)."""
    return run.client[1] if run.client else None


def snapshot(dev: SimulatedDevice, kind: str) -> dict:
    """The current run's figures, taken with no await in between."""
    run = dev.current
    if run is None:
        return {"kind": kind, "t": time.time(), "start_ms": None, "status": None, "sent": 0}
    tx = rx = buffer = 0
    if run.status == STREAMING:
        tx, rx = tcp_queues(dev.profiler_port)
        buffer = user_buffer(dev)
    return {
        "kind": kind,
        "t": time.time(),
        "start_ms": run.start_ms,
        "status": run.status,
        "sent": run.bytes_sent,
        "client": client_port(run),
        "buffer": buffer,
        "tx": tx,
        "rx": rx,
    }


class Ended:
    """Writes an ``end`` line once for each run that ended."""

    def __init__(self, dev: SimulatedDevice) -> None:
        self.dev = dev
        self.reported = 0  # dev.runs[:reported] have their line

    def report(self) -> None:
        for run in self.dev.runs[self.reported :]:
            if run.active:
                break
            emit(
                {
                    "kind": "end",
                    "t": time.time(),
                    "start_ms": run.start_ms,
                    "status": run.status,
                    "sent": run.bytes_sent,
                    "client": client_port(run),
                }
            )
            self.reported += 1


async def commands(dev: SimulatedDevice, ended: Ended) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        command = line.strip().decode()
        if command == "snap":
            emit(snapshot(dev, "snap"))
        elif command == "die":
            ended.report()
            emit(snapshot(dev, "died"))
            os.kill(os.getpid(), signal.SIGKILL)
    # stdin closed: the soak is gone, so is this device
    os.kill(os.getpid(), signal.SIGTERM)


async def main(args: argparse.Namespace) -> None:
    if args.body is not None:  # generated once by the soak for every device (it takes seconds)
        body = pickle.loads(args.body.read_bytes())
    else:
        body = make_body(args.run_seconds, args.rate, args.seed)
    config = DeviceConfig(
        serial=args.serial,
        name=f"Soak {args.serial}",
        host="127.0.0.1",
        ecp_port=args.ecp_port,
        profiler_port=args.profiler_port,
        console_port=args.console_port,
        installer_port=args.installer_port,
        runs=None,
        run_gap=args.run_gap,
        seed=args.seed,
        replay=body,
        replay_rate=args.rate,
        keep_bytes=False,  # weeks of runs: only the counts
    )
    dev = SimulatedDevice(config)
    await dev.start()
    emit({"kind": "ready", "serial": args.serial, "profiler": dev.profiler_port})
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    ended = Ended(dev)
    cmd = asyncio.create_task(commands(dev, ended))
    try:
        while not stop.is_set():
            ended.report()
            current = dev.current
            emit(
                {
                    "kind": "tick",
                    "t": time.time(),
                    "active": current is not None,
                    "start_ms": current.start_ms if current else None,
                    "status": current.status if current else None,
                    "sent": current.bytes_sent if current else 0,
                }
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), args.tick)
    finally:
        cmd.cancel()
        await dev.stop()  # the current run ends as on Home: its stream is whole
        ended.report()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serial", required=True)
    for name in ("ecp", "profiler", "console", "installer"):
        parser.add_argument(f"--{name}-port", type=int, required=True)
    parser.add_argument("--rate", type=float, default=50_000.0, help="stream bytes per second")
    parser.add_argument("--run-seconds", type=float, default=10.0)
    parser.add_argument("--run-gap", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tick", type=float, default=0.5)
    parser.add_argument("--body", type=Path, help="the body, pickled by make_body's caller")
    asyncio.run(main(parser.parse_args()))
