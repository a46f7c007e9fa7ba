"""``rokuprof simulate`` as a user runs it: a subprocess that prints its ports, serves streams
and exits when its runs are done (or on Ctrl-C)."""

from __future__ import annotations

import asyncio
import json
import signal
import xml.etree.ElementTree as ET

from daemon_helpers import start_simulator as start

from rokuprof.profile.reader import ProfileReader
from rokuprof.simulator import DeviceConfig
from rokuprof.simulator.fleet import fleet_configs
from rokuprof.simulator.probe import http, read_stream


async def json_lines(proc: asyncio.subprocess.Process, count: int) -> list[dict]:
    rows = []
    async with asyncio.timeout(15):
        while len(rows) < count:
            line = await proc.stdout.readline()
            assert line, (await proc.stderr.read()).decode()
            rows.append(json.loads(line))
    return rows


async def test_simulate_prints_ports_serves_runs_and_exits():
    proc = await start(
        "--devices", "2", "--run-seconds", "0.3", "--runs", "1", "--speed", "5", "--json"
    )
    try:
        devices = await json_lines(proc, 2)
        assert [d["serial"] for d in devices] == ["YN00AA000001", "YN00AA000002"]
        assert len({d["profiler"] for d in devices}) == 2
        for d in devices:
            status, _, body = await http(d["host"], d["ecp"], "GET", "/query/device-info")
            assert status == 200 and d["serial"].encode() in body
            stream = await read_stream(d["host"], d["profiler"])
            assert ProfileReader.from_bytes(stream).complete
        runs = await json_lines(proc, 2)
        assert {r["serial"] for r in runs} == {d["serial"] for d in devices}
        assert all(r["status"] == "complete" and r["bytes"] > 0 for r in runs)
        async with asyncio.timeout(10):
            assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_simulate_table_and_ctrl_c():
    proc = await start("--run-seconds", "5")
    try:
        async with asyncio.timeout(15):
            header = (await proc.stdout.readline()).decode().split()
            row = (await proc.stdout.readline()).decode().split()
            footer = (await proc.stdout.readline()).decode()
        assert header == ["serial", "ecp", "profiler", "console", "ssdp", "name"]
        assert row[0] == "YN00AA000001" and all(p.isdigit() for p in row[1:5])
        assert "Ctrl-C" in footer
        proc.send_signal(signal.SIGINT)
        async with asyncio.timeout(10):
            assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def test_base_port_layout():
    configs = fleet_configs(3, DeviceConfig(seed=9), base_port=40000)
    assert [(c.ecp_port, c.profiler_port, c.console_port, c.ssdp_port) for c in configs] == [
        (40000, 40001, 40002, 40003),
        (40010, 40011, 40012, 40013),
        (40020, 40021, 40022, 40023),
    ]
    assert [c.serial for c in configs] == ["YN00AA000001", "YN00AA000002", "YN00AA000003"]
    assert len({c.seed for c in configs}) == 3
    assert all(c.profiler_port == 0 for c in fleet_configs(2))


async def test_simulate_without_auto_launch_waits_for_a_launch_and_plays_a_slower_build():
    """--no-auto-launch stays up with nothing running (it used to return at once, idle) until
    ECP launches a run; --slower plays another build of the app."""
    proc = await start(
        "--no-auto-launch",
        "--run-seconds",
        "0.3",
        "--speed",
        "5",
        "--slower",
        "renderTile=50",
        "--json",
    )
    try:
        [d] = await json_lines(proc, 1)
        _, _, body = await http(d["host"], d["ecp"], "GET", "/query/active-app")
        assert ET.fromstring(body).find("app").text == "Roku"  # idle on the home screen
        assert proc.returncode is None  # and still serving
        status, _, _ = await http(d["host"], d["ecp"], "POST", "/launch/dev")
        assert status == 200
        stream = await read_stream(d["host"], d["profiler"])
        tables = ProfileReader.from_bytes(stream).tables
        walls = {}
        for pid in tables.paths:
            name = tables.string(tables.stack(pid)[0].function_id)
            walls[name] = walls.get(name, 0) + tables.stats(pid).wall
        assert max(walls, key=walls.get) == "renderTile"
    finally:
        proc.send_signal(signal.SIGINT)
        await asyncio.wait_for(proc.wait(), 10)


async def test_simulate_refuses_a_malformed_slower():
    proc = await start("--slower", "renderTile", "--duration", "1")
    _, err = await asyncio.wait_for(proc.communicate(), 15)
    assert proc.returncode == 2 and "expected FUNCTION=FACTOR" in err.decode()


async def test_simulate_refuses_a_malformed_heavier_and_an_out_of_range_clock_noise():
    proc = await start("--heavier", "renderTile=0", "--duration", "1")
    _, err = await asyncio.wait_for(proc.communicate(), 15)
    assert proc.returncode == 2 and "expected FUNCTION=FACTOR" in err.decode()
    assert "--heavier" in err.decode()
    proc = await start("--clock-noise", "1.5", "--duration", "1")
    _, err = await asyncio.wait_for(proc.communicate(), 15)
    assert proc.returncode == 2 and "--clock-noise" in err.decode()
