"""The simulated device's profiler stream: real sockets on 127.0.0.1, short fast runs."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from waiting import until

from rokuprof.bsprof.grammar import END_MARKER, build_footer
from rokuprof.bsprof.model import MAGIC, Footer
from rokuprof.profile.reader import ProfileReader
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.probe import http, open_stream, read_stream
from rokuprof.simulator.runs import COMPLETE, EXITED

HOST = "127.0.0.1"


def config(**kw) -> DeviceConfig:
    base = dict(run_seconds=1.0, runs=1, speed=20.0, run_gap=0.05, seed=3)
    return DeviceConfig(**(base | kw))


async def refused(port: int) -> bool:
    try:
        async with asyncio.timeout(2):
            _, writer = await asyncio.open_connection(HOST, port)
    except ConnectionRefusedError:
        return True
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()
    return False


async def close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


async def test_refused_before_launch_and_full_run_decodes():
    async with SimulatedDevice(config(auto_launch=False)) as dev:
        assert dev.profiler_port > 0
        assert await refused(dev.profiler_port)
        record = await dev.launch()
        assert record.status == "waiting"
        await asyncio.sleep(0.05)  # the app waits for its client: nothing runs meanwhile
        body = await read_stream(HOST, dev.profiler_port)
        reader = ProfileReader.from_bytes(body)
        assert reader.complete, reader.problem()
        assert body == dev.sent_bytes(0)
        run = await dev.wait_run_end(0, 2)
        assert run.status == COMPLETE and run.exit_reason == "run-length"
        assert run.connect_delay is not None and run.connect_delay >= 0.04
        assert run.bytes_sent == len(body) and run.entries == reader.entry_count > 100
        assert reader.header.start_ms == run.start_ms
        assert reader.footer.end_ms == run.start_ms + 1000
        assert body.endswith(END_MARKER + build_footer(Footer(run.end_ms)))
        assert await refused(dev.profiler_port)


async def test_header_arrives_at_once_then_bursts():
    async with SimulatedDevice(config(run_seconds=2.0, speed=4.0)) as dev:
        await dev.wait_listening(2)
        reader, writer, status = await open_stream(HOST, dev.profiler_port)
        try:
            assert status == 200
            async with asyncio.timeout(0.2):  # well before the first burst is due
                first = await reader.read(65536)
            assert first.startswith(MAGIC)
            header_len = len(first)
            chunks = [first]
            async with asyncio.timeout(5):
                while data := await reader.read(65536):
                    chunks.append(data)
        finally:
            await close(writer)
        body = b"".join(chunks)
        assert body == dev.sent_bytes(0)
        assert ProfileReader.from_bytes(body[:header_len]).header is not None
        assert len(chunks) > 10  # irregular bursts, not one blob


async def test_runs_repeat_on_the_same_port_refused_between():
    async with SimulatedDevice(config(runs=2, run_gap=0.3)) as dev:
        port = dev.profiler_port
        first = await read_stream(HOST, port)
        await dev.wait_run_end(0, 2)
        assert await refused(port)
        await dev.wait_listening(2)
        assert dev.profiler_port == port
        second = await read_stream(HOST, port)
        await dev.wait_idle(3)
        assert [r.status for r in dev.runs] == [COMPLETE, COMPLETE]
        for i, body in enumerate((first, second)):
            assert ProfileReader.from_bytes(body).complete
            assert body == dev.sent_bytes(i)
        assert first[:8] == second[:8] == MAGIC
        assert await refused(port)


async def test_same_seed_same_content():
    bodies = []
    for _ in range(2):
        async with SimulatedDevice(config(clock=lambda: 1_700_000_000.0)) as dev:
            bodies.append(await read_stream(HOST, dev.profiler_port))
    assert bodies[0] == bodies[1]
    async with SimulatedDevice(config(seed=4, clock=lambda: 1_700_000_000.0)) as dev:
        assert await read_stream(HOST, dev.profiler_port) != bodies[0]


async def test_second_client_refused_with_503():
    async with SimulatedDevice(config(run_seconds=1.0, speed=5.0)) as dev:
        await dev.wait_listening(2)
        reader, writer, status = await open_stream(HOST, dev.profiler_port)
        try:
            assert status == 200
            status2, _, _ = await http(HOST, dev.profiler_port, "GET", "/bsprof/channel.bsprof")
            assert status2 == 503
            assert dev.runs[0].refused == 1
            async with asyncio.timeout(5):
                body = await reader.read()
        finally:
            await close(writer)
        assert ProfileReader.from_bytes(body).complete


async def test_wrong_path_gets_404_and_app_keeps_waiting():
    async with SimulatedDevice(config()) as dev:
        await dev.wait_listening(2)
        status, _, _ = await http(HOST, dev.profiler_port, "GET", "/other")
        assert status == 404
        assert dev.current is not None and dev.current.status == "waiting"
        assert ProfileReader.from_bytes(await read_stream(HOST, dev.profiler_port)).complete


async def test_home_ends_the_run_early_with_end_marker_and_footer():
    async with SimulatedDevice(config(run_seconds=30.0, speed=1.0)) as dev:
        await dev.wait_listening(2)
        reader, writer, _ = await open_stream(HOST, dev.profiler_port)
        try:
            await until(lambda: dev.runs[0].entries > 0, 5)  # the app runs and records
            status, _, _ = await http(HOST, dev.ecp_port, "POST", "/keypress/Home")
            assert status == 200
            async with asyncio.timeout(3):
                body = await reader.read()
        finally:
            await close(writer)
        run = dev.runs[0]
        assert run.status == COMPLETE and run.exit_reason == "home"
        assert run.app_seconds < 5
        parsed = ProfileReader.from_bytes(body)
        assert parsed.complete, parsed.problem()
        assert body == dev.sent_bytes(0)
        assert await refused(dev.profiler_port)


async def test_home_before_connect_exits_without_stream():
    async with SimulatedDevice(config(runs=None)) as dev:
        await dev.wait_listening(2)
        assert await dev.home()
        assert dev.runs[0].status == EXITED and dev.runs[0].bytes_sent == 0
        await dev.wait_listening(2)  # the next automatic run
        assert len(dev.runs) == 2


@pytest.mark.parametrize("lines,memory", [(False, True), (True, False), (False, False)])
async def test_profiler_options_pass_through(lines, memory):
    async with SimulatedDevice(config(line_data=lines, memory_ops=memory)) as dev:
        parsed = ProfileReader.from_bytes(await read_stream(HOST, dev.profiler_port))
    assert parsed.complete
    assert parsed.header.line_data is lines and parsed.header.memory_ops is memory


async def test_crash_loses_pending_cpu_but_keeps_memory_data():
    """Same seed: a crash at 1.5 s keeps the memory operations up to then, not the CPU
    counted since the last flush (flushes every second)."""
    totals = {}
    for crash in (None, 1.5):
        cfg = config(run_seconds=1.5, crash_after=crash, speed=40.0)
        async with SimulatedDevice(cfg) as dev:
            body = await read_stream(HOST, dev.profiler_port)
            run = await dev.wait_run_end(0, 3)
        parsed = ProfileReader.from_bytes(body)
        assert parsed.complete and run.status == COMPLETE
        assert run.exit_reason == ("crash" if crash else "run-length")
        totals[crash] = parsed.tables.totals()
    full, crashed = totals[None], totals[1.5]
    assert crashed.alloc_count == full.alloc_count and crashed.free_count == full.free_count
    assert 0 < crashed.wall < full.wall * 0.8


async def test_stopping_the_device_ends_the_stream_normally():
    dev = SimulatedDevice(config(run_seconds=30.0, speed=1.0))
    await dev.start()
    reader, writer, _ = await open_stream(HOST, dev.profiler_port)
    try:
        async with asyncio.timeout(2):
            first = await reader.read(65536)
        await dev.stop()
        async with asyncio.timeout(2):
            rest = await reader.read()
    finally:
        await close(writer)
    assert ProfileReader.from_bytes(first + rest).complete
    assert dev.runs[0].exit_reason == "stop" and dev.runs[0].status == COMPLETE
    assert await refused(dev.profiler_port) and await refused(dev.ecp_port)
