"""No device stalls another (issue 18, row 3): the daemon, as a process, captures a healthy
simulated device beside one that streams a worst case (a deep call chain, a thousand busy
modules); ``/metrics`` keeps answering within a second all along, the healthy device's runs
complete, and each device's worst tick is a metric."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import httpx
import pytest
from daemon_helpers import reap, sim, start_daemon, stop_daemon, write_config_file

from rokuprof.simulator import DeviceConfig, ReplayBody, SimulatedDevice
from rokuprof.simulator.worst_cases import busy_modules, deep_chain

pytestmark = pytest.mark.slow

HEALTHY, HOSTILE = "YNHEALTHY001", "YNHOSTILE001"
HEALTHY_RUNS = 3
MAX_LATENCY = 1.0  # seconds: the bound on /metrics beside a worst-case device
MAX_RSS_KIB = 1024 * 1024  # the daemon stays under 1 GiB


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def tick_seconds(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line.startswith("rokuprof_device_worst_tick_seconds{"):
            device = line.split('device="', 1)[1].split('"', 1)[0]
            out[device] = float(line.rsplit(" ", 1)[1])
    return out


@pytest.mark.parametrize(
    "stream",
    [
        pytest.param(lambda: deep_chain(4_000, seconds=20.0, wall_us=20_000), id="deep-chain"),
        pytest.param(lambda: busy_modules(1_000, seconds=20.0), id="busy-modules"),
    ],
)
async def test_a_worst_case_device_stalls_no_one(stream, tmp_path: Path) -> None:
    path = tmp_path / "hostile.bsprof"
    path.write_bytes(stream())
    body = ReplayBody.from_file(path)
    healthy = SimulatedDevice(sim(HEALTHY, run_seconds=2.0, runs=HEALTHY_RUNS, run_gap=1.0))
    hostile = SimulatedDevice(
        DeviceConfig(
            serial=HOSTILE, name="hostile", runs=1, replay=body, replay_rate=len(body) / 12
        )
    )
    out, config, log = tmp_path / "out", tmp_path / "daemon.toml", tmp_path / "daemon.log"
    proc = None
    for dev in (healthy, hostile):
        await dev.start()
    try:
        port = free_port()
        write_config_file(
            config, out, [healthy, hostile], "", chunk_seconds=5, metrics_listen=f"127.0.0.1:{port}"
        )
        proc = await start_daemon(config, log)
        worst, text, answers = 0.0, "", 0
        deadline = time.monotonic() + 90
        async with httpx.AsyncClient(timeout=30) as client:
            while time.monotonic() < deadline:
                began = time.perf_counter()
                try:
                    text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
                except httpx.TransportError:  # not listening yet
                    await asyncio.sleep(0.1)
                    continue
                worst = max(worst, time.perf_counter() - began)
                answers += 1
                done = [d for d in (healthy, hostile) if d.runs and not d.runs[-1].active]
                if len(healthy.runs) == HEALTHY_RUNS and len(done) == 2 and len(records(out)) == 4:
                    break
                await asyncio.sleep(0.1)
        rss = peak_rss_kib(proc.pid)
        await stop_daemon(proc, log)
    finally:
        await reap(proc)
        for dev in (healthy, hostile):
            await dev.stop()
    assert answers > 50
    assert worst < MAX_LATENCY, f"/metrics took {worst:.2f} s beside the worst case"
    statuses = {(d, r["status"]) for d, r in records(out)}
    assert [s for d, s in statuses if d == HEALTHY] == ["complete"]
    assert [r["status"] for d, r in records(out) if d == HEALTHY] == ["complete"] * HEALTHY_RUNS
    hostile_record = next(r for d, r in records(out) if d == HOSTILE)
    assert hostile_record["status"] == "complete"
    assert hostile_record["chunk_report"]["rejected_chunks"] == 0
    assert hostile_record["chunk_report"]["chunks"] > 0
    ticks = tick_seconds(text)
    assert set(ticks) == {HEALTHY, HOSTILE} and ticks[HOSTILE] > 0
    assert rss < MAX_RSS_KIB


def records(out: Path) -> list[tuple[str, dict]]:
    return [
        (p.parent.parent.name, json.loads(p.read_text()))
        for p in sorted(out.glob("*/*/session.json"))
        if json.loads(p.read_text())["status"] != "streaming"
    ]
