"""Hostile peers on the Roku ports (tests/hostile_servers.py, all on 127.0.0.1): every reply is
bounded in bytes and in total time, ends with a clear error naming the device, the endpoint and
the limit, and costs little memory; a hostile device next to a normal one costs the normal one
nothing.

Memory bounds are stated per test: in-process cases measure the peak of Python allocations
with tracemalloc during the request; the daemon case reads the peak RSS (VmHWM) of a real
``rokuprof daemon`` process.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from daemon_helpers import (
    Running,
    daemon_config,
    reap,
    record,
    sessions,
    sim,
    start_daemon,
    stop_daemon,
    write_config_file,
)
from hostile_servers import (
    ENTITY_BOMB,
    ChallengeFlood,
    EcpPeer,
    SsdpFlood,
    TricklingConsole,
    TricklingStreamHead,
    measured,
    timed,
    trickle_delays,
)
from waiting import until

from rokuprof.device.console import ConsoleClient
from rokuprof.device.control import control
from rokuprof.device.ecp import EcpClient, parse_active_app, parse_device_info
from rokuprof.device.errors import DeviceError, DeviceTimeout, ProtocolError
from rokuprof.device.installer import InstallerClient
from rokuprof.device.ssdp import discover
from rokuprof.device.stream import ProfilerStream
from rokuprof.simulator import SimulatedDevice

MIB = 1 << 20
#: Peak of Python allocations while one hostile request runs (the reply cap is 1 MiB; reading
#: it takes a few copies at most). Before the fix, the 300 MB case peaked at 700 MiB of RSS.
REQUEST_PEAK = 8 * MIB


async def device_info(port: int, timeout: float = 5.0):
    async with EcpClient("127.0.0.1", port, timeout) as ecp:
        return await ecp.device_info()


async def sideload(port: int, timeout: float = 10.0):
    async with InstallerClient("127.0.0.1", "pw", port=port, timeout=timeout) as installer:
        return await installer.sideload(b"PK\x05\x06" + bytes(18))


# -- Installer (port 80) -------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1 << 30, None], ids=["1-GiB", "unsized"])
async def test_installer_challenge_with_an_endless_body_is_abandoned_at_the_page_cap(
    size: int | None,
) -> None:
    # Before: httpx read the 401 challenge's body whole (2,357 MiB for 1 GiB); here the peer
    # stops at 32 MiB and holds, so the old client sat at 32 MiB until its 10 s deadline.
    async with ChallengeFlood(size) as peer:
        elapsed, error, peak = await measured(sideload(peer.port))
        await until(lambda: peer.gone, 5)
    assert isinstance(error, ProtocolError)
    assert str(error) == (
        f"installer 127.0.0.1:{peer.port} /plugin_install: answer (401) larger than 1 MiB; gave up"
    )
    assert "\n" not in str(error)
    assert elapsed < 3
    assert peak < REQUEST_PEAK, f"peak {peak / MIB:.1f} MiB"
    assert peer.connections == 1 and peer.gone[0] < 8 * MIB


# -- ECP -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["endless", "chunked"])
async def test_ecp_endless_body_is_abandoned_at_the_cap(mode: str) -> None:
    async with EcpPeer(mode) as peer:
        elapsed, error, peak = await measured(device_info(peer.port))
    assert isinstance(error, ProtocolError)
    assert str(error) == (
        f"ECP 127.0.0.1:{peer.port} /query/device-info: reply larger than 1 MiB; gave up"
    )
    assert elapsed < 3
    assert peak < REQUEST_PEAK, f"peak {peak / MIB:.1f} MiB"


async def test_ecp_300_mb_body_is_refused_by_its_announced_length() -> None:
    async with EcpPeer("sized", size=300_000_000) as peer:
        elapsed, error, peak = await measured(device_info(peer.port))
        sent = peer.sent
    assert isinstance(error, ProtocolError)
    assert f"ECP 127.0.0.1:{peer.port} /query/device-info" in str(error)
    assert "announced as 300,000,000 bytes, larger than 1 MiB; gave up" in str(error)
    assert elapsed < 3 and peak < REQUEST_PEAK
    assert sent < 16 * MIB  # the peer was cut off long before 300 MB


async def test_a_lower_cap_holds_with_and_without_an_announced_length() -> None:
    async with (
        EcpPeer("sized", size=5 * MIB) as peer,
        EcpClient("127.0.0.1", peer.port, 5, max_reply_bytes=64 * 1024) as ecp,
    ):
        with pytest.raises(ProtocolError, match="announced as 5,242,880 bytes, larger than 64 KiB"):
            await ecp.active_app()
    async with (
        EcpPeer("endless") as peer,
        EcpClient("127.0.0.1", peer.port, 5, max_reply_bytes=64 * 1024) as ecp,
    ):
        with pytest.raises(ProtocolError, match="/query/active-app: reply larger than 64 KiB"):
            await ecp.active_app()


@pytest.mark.parametrize("delay", [0.4, None], ids=["every-0.4s", "every-0.4-2s"])
async def test_ecp_trickle_ends_at_the_total_deadline(delay: float | None) -> None:
    delays = (lambda: delay) if delay else trickle_delays()
    async with EcpPeer("trickle", delay=delays) as peer:
        elapsed, error, peak = await measured(device_info(peer.port, timeout=2))
    assert isinstance(error, DeviceTimeout)
    assert str(error) == (
        f"ECP 127.0.0.1:{peer.port} /query/device-info: no complete reply within 2 s; gave up"
    )
    assert 1.9 < elapsed < 3
    assert peak < REQUEST_PEAK


async def test_ecp_entity_bomb_is_refused_before_parsing() -> None:
    async with EcpPeer("body", body=ENTITY_BOMB) as peer:
        elapsed, error, peak = await measured(device_info(peer.port))
    assert isinstance(error, ProtocolError)
    assert f"ECP 127.0.0.1:{peer.port} /query/device-info: reply contains a <!DOCTYPE>" in str(
        error
    )
    assert elapsed < 2 and peak < REQUEST_PEAK


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (ENTITY_BOMB, "<!DOCTYPE"),
        (b'<?xml version="1.0"?><!doctype device-info><device-info/>', "<!DOCTYPE"),
        (b"<!DOCTYPE device-info SYSTEM 'file:///etc/passwd'>\n<device-info/>", "<!DOCTYPE"),
        (b"<device-info><!ENTITY a 'b'></device-info>", "<!ENTITY"),
        # Read as UTF-8 whatever it says: UTF-16 is not XML to us, so its DOCTYPE is never parsed.
        (ENTITY_BOMB.decode().encode("utf-16"), "not valid XML"),
    ],
    ids=["bomb", "lower-case", "external", "entity", "utf-16"],
)
def test_document_type_declarations_are_refused(data: bytes, message: str) -> None:
    for parse in (parse_device_info, parse_active_app):
        with pytest.raises(ProtocolError, match=message):
            parse(data)


def test_a_declared_encoding_does_not_change_how_the_reply_is_read() -> None:
    ebcdic = '<?xml version="1.0" encoding="cp037"?><device-info><model-name>Ä</model-name>'
    info = parse_device_info((ebcdic + "</device-info>").encode())
    assert info.model_name == "Ä"  # read as UTF-8, not as EBCDIC


# -- the debug console ---------------------------------------------------------------------------


@pytest.mark.parametrize("delay", [0.4, None], ids=["every-0.4s", "every-0.4-2s"])
async def test_console_trickle_ends_within_the_timeout(delay: float | None) -> None:
    delays = (lambda: delay) if delay else trickle_delays()
    async with TricklingConsole(delays) as peer:
        elapsed, error, peak = await measured(control("127.0.0.1", "status", peer.port, timeout=2))
    assert isinstance(error, DeviceError), error
    assert str(error).startswith(f"the console at 127.0.0.1:{peer.port}: ")
    if delay == 0.4:  # never quiet long enough to end a reply: the deadline ends it
        assert "within 2 s; gave up" in str(error)
    assert elapsed < 2.8  # the deadline, plus a bounded close
    assert peak < REQUEST_PEAK


async def test_console_trickle_ends_each_command_at_its_deadline() -> None:
    async with TricklingConsole(lambda: 0.1) as peer:
        client = ConsoleClient("127.0.0.1", peer.port, timeout=1.0, quiet=0.5)
        elapsed, error = await timed(client.connect())
        assert isinstance(error, DeviceTimeout) and elapsed < 1.5
        assert "greeting not complete within 1 s" in str(error)


async def test_console_flood_is_refused_at_the_cap() -> None:
    async with TricklingConsole(flood=True) as peer:
        elapsed, error, peak = await measured(control("127.0.0.1", "status", peer.port, timeout=10))
    assert isinstance(error, ProtocolError)
    assert str(error) == (
        f"the console at 127.0.0.1:{peer.port}: greeting: reply larger than 1 MiB without a "
        "prompt; gave up"
    )
    assert elapsed < 5 and peak < REQUEST_PEAK


async def test_control_cli_against_a_trickling_console_gives_one_line_in_time() -> None:
    async with TricklingConsole(lambda: 0.4) as peer:
        start = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "rokuprof",
            "control",
            "127.0.0.1",
            "status",
            "--console-port",
            str(peer.port),
            "--timeout",
            "2",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        elapsed = time.monotonic() - start
    text = err.decode()
    assert proc.returncode == 1 and out == b""
    assert text == (
        f"error: the console at 127.0.0.1:{peer.port}: no complete reply to 'bsprof-status' "
        "within 2 s; gave up\n"
    )
    assert elapsed < 4  # the 2 s deadline, plus the interpreter's start on a busy machine


# -- the profiler stream's HTTP head -------------------------------------------------------------


async def test_stream_head_trickle_ends_at_the_head_deadline() -> None:
    async with TricklingStreamHead(lambda: 0.3) as peer:
        stream = await ProfilerStream.open("127.0.0.1", peer.port, head_timeout=1.5)
        async with stream:
            elapsed, error = await timed(stream.read(idle_timeout=5))
    assert isinstance(error, DeviceTimeout)
    assert str(error) == (
        f"the profiler port 127.0.0.1:{peer.port}: HTTP response head not complete within "
        "1.5 s of its first byte; gave up"
    )
    assert 1.3 < elapsed < 2.5


# -- SSDP ----------------------------------------------------------------------------------------


async def test_one_responder_with_many_usns_is_one_device() -> None:
    async with SsdpFlood(400) as flood:
        elapsed, found, peak = await measured(
            discover(1.0, targets=[("127.0.0.1", flood.port)], bind=("127.0.0.1", 0))
        )
    assert flood.replies >= 400  # it did answer many times
    assert [(d.address, d.serial) for d in found] == [("127.0.0.1", "YN0000000001")]
    assert elapsed < 2 and peak < 4 * MIB


async def test_daemon_discovery_adds_one_device_for_one_flooding_responder(tmp_path: Path) -> None:
    async with SsdpFlood(200) as flood:
        discovery = {"enabled": True, "interval_seconds": 0.2}
        config = daemon_config(tmp_path / "out", [], None, discovery=discovery)
        async with Running(
            config,
            discovery_targets=(("127.0.0.1", flood.port),),
            discovery_bind=("127.0.0.1", 0),
            discovery_timeout=0.3,
        ) as run:
            await until(lambda: run.daemon.discovery_rounds >= 3, 10)
            assert [s.label for s in run.daemon.slots.values()] == ["YN0000000001"]
            assert await run.finish() == 0


# -- a hostile ECP next to a normal device, through `rokuprof daemon` ------------------------------

#: Peak RSS of the whole daemon process while one device's ECP sends an endless body. Without
#: bounds it grew ~290 MiB/s (4 GB in 10 s); a daemon with two devices needs well under this.
DAEMON_RSS = 200 * MIB


def vm_hwm(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


async def test_endless_ecp_costs_the_daemon_little_and_the_other_device_nothing(
    tmp_path: Path,
) -> None:
    out, config, log = tmp_path / "out", tmp_path / "rokuprof.toml", tmp_path / "daemon.log"
    normal = SimulatedDevice(sim("NORMAL01", seed=11, run_seconds=2.0))
    beside = SimulatedDevice(sim("BESIDE01", seed=12, run_seconds=2.0))
    async with EcpPeer("endless") as peer, normal, beside:
        # BESIDE01 streams normally, but its ECP port is the hostile peer.
        hostile = SimpleNamespace(
            config=beside.config,
            profiler_port=beside.profiler_port,
            ecp_port=peer.port,
            console_port=beside.console_port,
        )
        write_config_file(config, out, [normal, hostile], "", chunk_seconds=1)
        proc = await start_daemon(config, log)
        peak = 0
        try:

            def done() -> bool:
                nonlocal peak
                peak = max(peak, vm_hwm(proc.pid))
                found = sessions(out)
                return len(found) == 2 and all(record(s)["status"] != "streaming" for s in found)

            await until(done, 30, step=0.1)
            assert peer.connections >= 1  # the daemon did ask the hostile ECP
            peak = max(peak, vm_hwm(proc.pid))
            await stop_daemon(proc, log)
        finally:
            await reap(proc)
        sent = {normal.sent_bytes(0), beside.sent_bytes(0)}
    archives = {(s / "capture.bsprof").read_bytes() for s in sessions(out)}
    assert archives == sent  # both captures byte-perfect
    assert all(record(s)["status"] == "complete" for s in sessions(out))
    text = log.read_text()
    assert f"ECP 127.0.0.1:{peer.port} /query/device-info: reply larger than 1 MiB" in text
    assert "Traceback" not in text
    assert (out / "NORMAL01").is_dir()  # the normal device's ECP answered: named by serial
    assert peak < DAEMON_RSS, f"peak RSS {peak / MIB:.0f} MiB"
