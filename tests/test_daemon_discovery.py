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


async def test_a_crowd_of_responders_is_tried_a_few_at_a_time_and_penalized(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One search answered from 60 loopback addresses, each naming itself (its ECP refuses):
    only 4 are captured on trial (an eighth of max_devices, 32), never all 32; once their
    ECP has not answered for confirm_seconds (by the injected clock) those 4 are stopped and
    dropped, and 4 others are tried (the crowd keeps answering), not the same addresses again."""
    caplog.set_level(logging.INFO, logger="rokuprof.daemon")
    clock = ScriptedClock()
    discovery = {
        "enabled": True,
        "interval_seconds": 0.05,
        "max_devices": 32,
        "confirm_seconds": 30,
        "expire_seconds": 300,
    }
    config = daemon_config(tmp_path / "out", [], None, discovery=discovery)
    crowd = SsdpCrowd(60)
    async with crowd, discovering(config, (("127.0.0.1", crowd.port),), clock) as run:
        daemon = run.daemon
        await until(lambda: daemon.discovery_rounds >= 3, 10)
        first = dict(daemon.slots)
        assert len(first) == 4 and len(daemon.discovered) == 4 == daemon.discovered.on_trial
        assert all(slot.source == "discovery" for slot in first.values())
        assert {slot.config.host for slot in first.values()} <= set(crowd.addresses)
        assert daemon.discovered.penalized >= 3 * 56  # every round, every other responder
        assert daemon.discovered.ignored == 0  # the cap of 32 is never reached

        await until(lambda: all(s.state is DeviceState.UNREACHABLE for s in first.values()), 10)
        clock.advance(29.999)
        rounds = daemon.discovery_rounds
        await until(lambda: daemon.discovery_rounds >= rounds + 2, 10)
        assert daemon.slots == first and daemon.discovered.expired == 0
        clock.advance(0.001)  # on trial for exactly confirm_seconds
        await until(lambda: daemon.discovery_rounds >= rounds + 4, 10)
        assert daemon.discovered.expired == 4 == daemon.discovered.unconfirmed
        assert all(slot.task.done() for slot in first.values())
        assert len(daemon.slots) == 4  # the crowd answered again: 4 others on trial
        hosts = {slot.config.host for slot in daemon.slots.values()}
        assert not hosts & {slot.config.host for slot in first.values()}  # penalized
        dropped = [r for r in caplog.records if "no longer captured" in r.getMessage()]
        assert len(dropped) == 1
        assert "4 device(s) whose ECP never answered within 30 s" in dropped[0].getMessage()
        assert await run.finish() == 0


async def test_spoofed_replies_do_not_crowd_out_a_device_that_answers(tmp_path: Path) -> None:
    """A flood of SSDP replies from 30 addresses whose ECP never answers, and one simulated
    Roku: the flood holds at most 4 of the 16 slots (those on trial) at any time, and the Roku
    is captured within a few confirm periods and kept while the flood goes on (at 0e83a1a the
    flood held every slot, and each one freed went to the flood again)."""
    clock = ScriptedClock()
    discovery = {
        "enabled": True,
        "interval_seconds": 0.05,
        "max_devices": 16,
        "confirm_seconds": 5,
        "expire_seconds": 120,
    }
    config = daemon_config(tmp_path / "out", [], None, discovery=discovery)
    crowd = SsdpCrowd(30)
    roku = SimulatedDevice(sim("REAL0001", auto_launch=False))
    async with crowd, roku as dev:
        targets = (("127.0.0.1", crowd.port), ("127.0.0.1", dev.ssdp_port))
        async with discovering(config, targets, clock) as run:
            daemon = run.daemon

            def real() -> list[DeviceSlot]:
                return [s for s in daemon.slots.values() if s.config.host == "127.0.0.1"]

            def flood() -> list[DeviceSlot]:
                return [s for s in daemon.slots.values() if s.config.host != "127.0.0.1"]

            def settled() -> bool:  # every capture loop has tried ECP once
                return all(s.state is not DeviceState.STARTING for s in daemon.slots.values())

            for _ in range(30):
                rounds = daemon.discovery_rounds
                await until(lambda r=rounds: daemon.discovery_rounds >= r + 2 and settled(), 10)
                assert len(flood()) <= 4 and daemon.discovered.on_trial <= 4
                if real() and real()[0].state is DeviceState.REFUSED:  # its ECP answered
                    break
                clock.advance(5)
            [slot] = real()
            assert slot.state is DeviceState.REFUSED
            for _ in range(3):  # an hour of the flood: the Roku keeps its slot
                clock.advance(1200)
                rounds = daemon.discovery_rounds
                await until(lambda r=rounds: daemon.discovery_rounds >= r + 2 and settled(), 10)
                assert real() == [slot] and not slot.task.done() and len(flood()) <= 4
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
