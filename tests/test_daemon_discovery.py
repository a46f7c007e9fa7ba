"""SSDP discovery inside the daemon (loopback unicast), a capture loop that fails restarting
with backoff, and `rokuprof daemon` refusing a bad config."""

from __future__ import annotations

from pathlib import Path

import pytest
from daemon_helpers import Running, daemon_config, sim, until
from typer.testing import CliRunner

import rokuprof.daemon.devices as devices
from rokuprof.capture.loop import CaptureConfig, DeviceCapture
from rokuprof.cli import app
from rokuprof.daemon.devices import DeviceSlot
from rokuprof.simulator import SimulatedDevice


async def test_discovered_devices_get_one_capture_loop_each(tmp_path: Path) -> None:
    async with SimulatedDevice(sim("DISC01")) as dev:
        cfg = daemon_config(
            tmp_path / "out", [], None, discovery={"enabled": True, "interval_seconds": 0.2}
        )
        async with Running(
            cfg,
            discovery_targets=(("127.0.0.1", dev.ssdp_port),),
            discovery_bind=("127.0.0.1", 0),
            discovery_timeout=0.2,
        ) as run:
            await until(lambda: len(run.daemon.slots) == 1, 5)
            (slot,) = run.daemon.slots.values()
            assert slot.label == "DISC01" and slot.source == "discovery"
            assert slot.config.host == "127.0.0.1" and slot.config.ecp_port == dev.ecp_port
            await until(lambda: run.daemon.discovery_rounds >= 3, 5)  # answered again and again
            assert len(run.daemon.slots) == 1
            assert await run.finish() == 0


class BuggyCapture(DeviceCapture):
    calls = 0

    async def run(self):
        BuggyCapture.calls += 1
        raise RuntimeError("bug in the capture loop")


async def test_a_failing_capture_loop_is_restarted_with_backoff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(devices, "DeviceCapture", BuggyCapture)
    config = CaptureConfig(host="127.0.0.1", out=tmp_path, use_ecp=False)
    slot = DeviceSlot("buggy", config, backoff_base=0.01, backoff_cap=0.05)
    slot.start()
    await until(lambda: BuggyCapture.calls >= 3, 5)
    slot.request_stop()
    await until(lambda: slot.task.done(), 2)
    assert slot.counters.restarts >= 2
    assert "bug in the capture loop" in slot.counters.last_error


def test_daemon_command_rejects_a_bad_config(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[devices]]\nhost = "a"\nprofiler_port = 0\n')
    result = CliRunner().invoke(app, ["daemon", "--config", str(bad)])
    assert result.exit_code == 2
    assert "devices[0].profiler_port: must be a port number 1-65535, got 0" in result.output
