"""SSDP discovery inside the daemon (loopback unicast): one loop per device, at most
``max_devices``, unreachable ones dropped (time from an injected clock); a capture loop that
fails restarting with backoff, and `rokuprof daemon` refusing a bad config."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from daemon_helpers import Running, daemon_config, sim
from hostile_servers import SsdpCrowd
from scripted_clock import ScriptedClock
from typer.testing import CliRunner
from waiting import until

import rokuprof.daemon.devices as devices
from rokuprof.capture.loop import CaptureConfig, DeviceCapture
from rokuprof.capture.status import DeviceState
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


def discovering(config, targets, clock: ScriptedClock) -> Running:
    return Running(
        config,
        discovery_targets=targets,
        discovery_bind=("127.0.0.1", 0),
        discovery_timeout=0.2,
        clock=clock,
    )


async def test_a_crowd_of_responders_is_capped_and_the_unreachable_expire(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One search answered from 60 loopback addresses, each naming itself (its ECP refuses):
    exactly max_devices (8) are captured, the cap is said once; once they have been unreachable
    for expire_seconds (by the injected clock) those 8 are stopped and dropped, and 8 are
    captured again (the crowd keeps answering), the cap said again."""
    caplog.set_level(logging.INFO, logger="rokuprof.daemon")
    clock = ScriptedClock()
    discovery = {
        "enabled": True,
        "interval_seconds": 0.05,
        "max_devices": 8,
        "expire_seconds": 300,
    }
    config = daemon_config(tmp_path / "out", [], None, discovery=discovery)
    crowd = SsdpCrowd(60)
    async with crowd, discovering(config, (("127.0.0.1", crowd.port),), clock) as run:
        daemon = run.daemon
        await until(lambda: daemon.discovery_rounds >= 3, 10)
        first = dict(daemon.slots)
        assert len(first) == 8 and len(daemon.discovered) == 8
        assert all(slot.source == "discovery" for slot in first.values())
        assert {slot.config.host for slot in first.values()} <= set(crowd.addresses)
        assert daemon.discovered.ignored >= 3 * 52  # every round, every other responder
        cap_said = [r for r in caplog.records if "max_devices" in r.getMessage()]
        assert len(cap_said) == 1 and cap_said[0].levelno == logging.WARNING
        assert "8 devices found by SSDP are captured" in cap_said[0].getMessage()

        await until(lambda: all(s.state is DeviceState.UNREACHABLE for s in first.values()), 10)
        clock.advance(299.999)
        rounds = daemon.discovery_rounds
        await until(lambda: daemon.discovery_rounds >= rounds + 2, 10)
        assert daemon.slots == first and daemon.discovered.expired == 0
        clock.advance(0.001)  # unreachable for exactly expire_seconds
        await until(lambda: daemon.discovery_rounds >= rounds + 4, 10)
        assert daemon.discovered.expired == 8
        assert all(slot.task.done() for slot in first.values())
        assert len(daemon.slots) == 8  # the crowd answered again: 8 new capture loops
        assert not set(daemon.slots.values()) & set(first.values())
        dropped = [r for r in caplog.records if "no longer captured" in r.getMessage()]
        assert len(dropped) == 1 and "8 device(s) unreachable for 300 s" in dropped[0].getMessage()
        cap_said = [r for r in caplog.records if "max_devices" in r.getMessage()]
        assert len(cap_said) == 2
        assert await run.finish() == 0


async def test_a_device_that_answers_is_never_dropped(tmp_path: Path) -> None:
    clock = ScriptedClock()
    discovery = {"enabled": True, "interval_seconds": 0.05, "expire_seconds": 60}
    config = daemon_config(tmp_path / "out", [], None, discovery=discovery)
    device = SimulatedDevice(sim("ALIVE01", auto_launch=False))
    async with device as dev, discovering(config, (("127.0.0.1", dev.ssdp_port),), clock) as run:
        daemon = run.daemon
        await until(lambda: len(daemon.slots) == 1, 10)
        (slot,) = daemon.slots.values()
        await until(lambda: slot.state is DeviceState.REFUSED, 10)  # ECP answers
        clock.advance(3600)
        rounds = daemon.discovery_rounds
        await until(lambda: daemon.discovery_rounds >= rounds + 3, 10)
        assert list(daemon.slots.values()) == [slot] and not slot.task.done()
        assert daemon.discovered.expired == 0
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
