"""``rokuprof discover`` and ``rokuprof control`` against simulated devices on 127.0.0.1."""

from __future__ import annotations

import asyncio
import functools
import json
import socket

from typer.testing import CliRunner

from rokuprof.cli import app
from rokuprof.simulator import DeviceConfig, SimulatedDevice

RUNNER = CliRunner()


async def rokuprof(*args: str) -> tuple[int, str, str]:
    """Run the CLI in a worker thread (it calls ``asyncio.run``) while the devices run here."""
    invoke = functools.partial(RUNNER.invoke, app, list(args), env={"COLUMNS": "200"})
    result = await asyncio.wait_for(asyncio.to_thread(invoke), 15)
    return result.exit_code, result.stdout, result.stderr


def targets(*devices: SimulatedDevice) -> list[str]:
    args = ["--bind", "127.0.0.1:0"]
    for dev in devices:
        args += ["--target", f"127.0.0.1:{dev.ssdp_port}"]
    return args


async def test_discover_lists_two_devices_with_their_details() -> None:
    one = DeviceConfig(serial="YN00AA000001", name="Living Room", auto_launch=False)
    two = DeviceConfig(
        serial="YN00AA000002",
        name="Bedroom",
        auto_launch=False,
        developer_enabled=False,
        software_version="12.5.0",
        ecp_mode="limited",
    )
    async with SimulatedDevice(one) as a, SimulatedDevice(two) as b:
        code, out, err = await rokuprof("discover", "--json", "--timeout", "0.8", *targets(a, b))
        assert code == 0, err
        rows = {row["serial"]: row for row in json.loads(out)}
        assert set(rows) == {"YN00AA000001", "YN00AA000002"}
        first, second = rows["YN00AA000001"], rows["YN00AA000002"]
        assert (first["name"], first["address"], first["ecp_port"]) == (
            "Living Room",
            "127.0.0.1",
            a.ecp_port,
        )
        assert first["model"] == "Roku Ultra 4800X"
        assert first["software"] == "14.1.4 build 4123"
        assert (first["developer_mode"], first["ecp_mode"]) == (True, "enabled")
        assert (second["developer_mode"], second["ecp_mode"]) == (False, "limited")
        assert second["software"].startswith("12.5.0")

        code, out, err = await rokuprof("discover", "--timeout", "0.8", *targets(a, b))
        assert code == 0, err
        assert "Living Room" in out and "Bedroom" in out
        assert "ECP is limited" in out and "Network access" in out and "'Permissive'" in out
        assert "developer mode is off" in out


async def test_discover_reports_disabled_ecp_with_the_setting_to_change() -> None:
    async with SimulatedDevice(DeviceConfig(auto_launch=False, ecp_mode="disabled")) as dev:
        code, out, err = await rokuprof("discover", "--json", "--timeout", "0.5", *targets(dev))
    assert code == 0, err
    [row] = json.loads(out)
    assert row["serial"] == "YN00AA000001"  # from the USN when device-info is refused
    assert "403" in row["error"] and "Control by mobile apps" in row["error"]


async def test_discover_with_nothing_answering() -> None:
    code, out, err = await rokuprof(
        "discover", "--timeout", "0.3", "--bind", "127.0.0.1:0", "--target", "127.0.0.1:9"
    )
    assert (code, out) == (0, "")
    assert "No Roku answered" in err


async def test_control_status_pause_resume_round_trip() -> None:
    cfg = DeviceConfig(auto_launch=False, run_seconds=30)
    async with SimulatedDevice(cfg) as dev:
        port = ["--console-port", str(dev.console_port)]
        code, out, _ = await rokuprof("control", "127.0.0.1", "status", *port)
        assert (code, out.strip()) == (
            0,
            "No profiling session (no app with bsprof_enable=1 is running)",
        )
        await dev.launch()
        code, out, _ = await rokuprof("control", "127.0.0.1", "status", *port)
        assert out.strip() == "profiler running: cpu, mem, lines; data_dest=network"
        code, out, _ = await rokuprof("control", "127.0.0.1", "pause", *port)
        assert (code, out.strip()) == (0, "bsprof paused")
        code, out, _ = await rokuprof("control", "127.0.0.1", "status", *port, "--json")
        assert json.loads(out)["status"]["state"] == "paused"
        code, out, _ = await rokuprof("control", "127.0.0.1", "resume", *port)
        assert (code, out.strip()) == (0, "bsprof resumed")
        assert dev.profiling_status().startswith("status: running")
        code, out, _ = await rokuprof("control", "127.0.0.1", "chanperf", *port, "--json")
        assert json.loads(out)["chanperf"]["mem_kib"] > 0
        await dev.home()


async def test_control_errors() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    code, _, err = await rokuprof("control", "127.0.0.1", "status", "--console-port", str(port))
    assert code == 1 and "cannot connect to the console at 127.0.0.1" in err
    code, _, err = await rokuprof("control", "127.0.0.1", "reboot")
    assert code == 2 and "'reboot' is not one of 'status', 'pause', 'resume', 'chanperf'" in err
