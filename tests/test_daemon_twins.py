"""Two live devices reporting one serial number (simulators on 127.0.0.2 and 127.0.0.3, both
loopback): separate session directories, distinct metric labels, one warning."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import httpx
import pytest
from daemon_helpers import Running, record, sessions, sim
from waiting import until

from rokuprof.daemon.config import build_config
from rokuprof.simulator import SimulatedDevice

SERIAL = "YN00TWIN0001"
HOSTS = ("127.0.0.2", "127.0.0.3")


def twins_config(out: Path, devices: list[SimulatedDevice]):
    entries = [
        {
            "host": dev.config.host,
            "profiler_port": dev.profiler_port,
            "ecp_port": dev.ecp_port,
            "console_port": dev.console_port,
        }
        for dev in devices
    ]
    data = {
        "capture": {"out": str(out), "chunk_seconds": 1.0},
        "devices": entries,
        "metrics": {"listen": "127.0.0.1:0"},
    }
    return build_config(data, env={})


def series(text: str) -> list[str]:
    """Every sample line's name and labels (what must never repeat)."""
    return [line.rsplit(" ", 1)[0] for line in text.splitlines() if line and line[0] != "#"]


async def test_two_devices_with_one_serial_never_share_a_directory_or_a_label(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="rokuprof.daemon")
    out = tmp_path / "out"
    a = SimulatedDevice(sim(SERIAL, host=HOSTS[0], seed=1))
    b = SimulatedDevice(sim(SERIAL, host=HOSTS[1], seed=2))
    async with a, b, Running(twins_config(out, [a, b])) as run:
        daemon = run.daemon
        await until(lambda: len(sessions(out)) == 2, 15)
        await until(lambda: all(record(s)["status"] == "complete" for s in sessions(out)), 15)
        port = daemon.metrics.port
        # session.json says complete a moment before the daemon counts the session: scrape
        # once it has counted both (the assertions below say what the scrape must hold)
        slots = list(daemon.slots.values())
        await until(lambda: all(s.counters.sessions.get("complete") == 1 for s in slots), 15)
        async with httpx.AsyncClient(timeout=2.0) as client:
            text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
        assert text.count('status="complete"} 1') >= 2
        names = {slot.config.host: slot.name for slot in daemon.slots.values()}
        assert await run.finish() == 0

    # the first to say its serial keeps it; the other one is <serial>-<host>
    first = next(host for host, name in names.items() if name == SERIAL)
    other = HOSTS[1] if first == HOSTS[0] else HOSTS[0]
    assert names == {first: SERIAL, other: f"{SERIAL}-{other}"}
    by_dir = {s.parent.name: record(s)["device"] for s in sessions(out)}
    assert by_dir.keys() == {SERIAL, f"{SERIAL}-{other}"}
    assert by_dir[SERIAL]["host"] == first and by_dir[f"{SERIAL}-{other}"]["host"] == other
    assert by_dir[SERIAL]["serial"] == by_dir[f"{SERIAL}-{other}"]["serial"] == SERIAL

    lines = series(text)
    assert len(lines) == len(set(lines))  # no series twice
    info = re.findall(r'rokuprof_device_info\{device="([^"]+)",name="[^"]+",host="([^"]+)"', text)
    assert sorted(info) == sorted([(SERIAL, first), (f"{SERIAL}-{other}", other)])
    for device in (SERIAL, f"{SERIAL}-{other}"):
        assert f'rokuprof_sessions_total{{device="{device}",status="complete"}} 1' in text

    ports = {dev.config.host: dev.profiler_port for dev in (a, b)}
    said = [r.getMessage() for r in caplog.records]
    assert [m for m in said if "two devices report serial" in m] == [
        f"two devices report serial {SERIAL}: the one at {first}:{ports[first]} keeps it, the one"
        f" at {other}:{ports[other]} is named {SERIAL}-{other} (its directory, metrics and logs)"
    ]
