"""The simulated device's app tracing (Roku OS 15.1+) over real sockets: the enable command, the
``/perfetto-session`` WebSocket (a real ``websockets`` client), one client at a time, and the
trace bytes of each run, read back with rokuprof's own trace reader."""

from __future__ import annotations

import asyncio
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedError, InvalidStatus
from websockets.protocol import State

from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.probe import read_stream
from rokuprof.trace.framing import PacketSplitter
from rokuprof.trace.reader import read_trace
from rokuprof.trace.summary import trace_report

HOST = "127.0.0.1"
WALL = 1_762_473_265.350  # the device's wall clock, fixed: the enable answer's timestamps


def device(**kw) -> SimulatedDevice:
    base = dict(host=HOST, auto_launch=False, run_seconds=3.0, speed=4.0, seed=3)
    return SimulatedDevice(DeviceConfig(**(base | kw)))


async def enable(dev: SimulatedDevice, channel: str = "dev") -> httpx.Response:
    async with httpx.AsyncClient(timeout=5) as client:
        return await client.post(f"http://{HOST}:{dev.ecp_port}/perfetto/enable/{channel}")


def trace_socket(dev: SimulatedDevice) -> connect:
    return connect(
        f"ws://{HOST}:{dev.ecp_port}/perfetto-session",
        open_timeout=5,
        close_timeout=2,
        ping_interval=None,
        max_size=1 << 20,
    )


async def until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll ``predicate`` (the app clock moves without telling anyone) for ``timeout`` s."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def receive(ws: ClientConnection, quiet: float = 0.6, limit: float = 15.0) -> list[bytes]:
    """Messages until none came for ``quiet`` seconds (at most ``limit`` seconds in all)."""
    out: list[bytes] = []
    async with asyncio.timeout(limit):
        while True:
            try:
                message = await asyncio.wait_for(ws.recv(), quiet)
            except TimeoutError:
                return out
            assert isinstance(message, bytes)
            out.append(message)


async def run_once(dev: SimulatedDevice) -> bytes:
    """Launch the dev app, take its whole ``.bsprof`` stream (the app runs once its profiler
    client is there) and wait for its end."""
    run = await dev.launch()
    stream = await read_stream(HOST, dev.profiler_port, timeout=15)
    await dev.wait_run_end(run.index, 10)
    return stream


async def test_enable_lists_every_channel_enabled_with_the_device_clock() -> None:
    async with device(clock=lambda: WALL) as dev:
        first = await enable(dev)
        again = await enable(dev, "12")
        await enable(dev)  # no duplicates
        bad = await enable(dev, "a%20b")
        assert dev.tracing.enabled == ["dev", "12"]
    assert first.status_code == 200 and first.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(first.content)
    assert root.tag == "perfetto-enable"
    assert [c.text for c in root.find("enabled-channels")] == ["dev"]
    assert root.findtext("timestamp") == root.findtext("timestamp-end") == "1762473265350"
    assert root.findtext("status") == "OK" and root.find("error") is None
    assert [c.text for c in ET.fromstring(again.content).find("enabled-channels")] == ["dev", "12"]
    assert bad.status_code == 404


async def test_firmware_without_app_tracing_answers_404_to_both() -> None:
    async with device(app_tracing=False) as dev:
        assert (await enable(dev)).status_code == 404
        with pytest.raises(InvalidStatus) as refused:
            async with trace_socket(dev):
                pass
        assert refused.value.response.status_code == 404
        await run_once(dev)
        assert dev.runs[0].trace is None and dev.tracing.enabled == []


async def test_a_second_client_is_refused_with_409_while_the_first_is_connected() -> None:
    async with device() as dev:
        await enable(dev)
        async with trace_socket(dev) as first:
            with pytest.raises(InvalidStatus) as refused:
                async with trace_socket(dev):
                    pass
            assert refused.value.response.status_code == 409
            assert dev.tracing.refused == 1
            await run_once(dev)
            data = b"".join(await receive(first))
        await dev.wait_until(lambda: dev.tracing.client is None, 5)
        async with trace_socket(dev):  # the first one is gone: the next is welcome
            await dev.wait_until(lambda: dev.tracing.client is not None, 5)
        assert dev.tracing.sessions == 2
    report = trace_report(read_trace(data))
    assert report["complete"] and report["unfinished"] == 1


async def test_the_socket_is_silent_until_a_traced_run_and_stays_open_after_it() -> None:
    async with device() as dev:
        async with trace_socket(dev) as ws:
            with pytest.raises(TimeoutError):  # nothing enabled, nothing running: silence
                await asyncio.wait_for(ws.recv(), 0.3)
            await run_once(dev)  # the channel is not enabled: the run is not traced
            assert await receive(ws, quiet=0.3) == [] and dev.runs[0].trace is None
            await enable(dev)
            await run_once(dev)
            messages = await receive(ws)
            assert messages and dev.runs[1].trace is not None
            with pytest.raises(TimeoutError):  # the run is over: silent, and still open
                await asyncio.wait_for(ws.recv(), 0.3)
            assert ws.state is State.OPEN
        assert ws.close_code == 1000  # the client closed; the device answered in kind
        await dev.wait_until(lambda: dev.tracing.client is None, 5)


async def test_the_trace_goes_out_as_the_run_goes_in_messages_cut_across_packets() -> None:
    async with device(speed=2.0, trace_message_bytes=1500) as dev:
        await enable(dev)
        async with trace_socket(dev) as ws:
            run = await dev.launch()
            stream = asyncio.create_task(read_stream(HOST, dev.profiler_port, timeout=15))
            messages: list[bytes] = []
            during = 0  # messages that arrived while the app was still running
            async with asyncio.timeout(15):
                while not (messages and not run.active and during):
                    try:
                        messages.append(await asyncio.wait_for(ws.recv(), 0.6))
                    except TimeoutError:
                        break
                    during += run.active
            messages += await receive(ws)
            await stream
    record = run.trace
    assert record is not None
    data = b"".join(messages)
    assert during >= 3, "the trace must stream with the run, not all at its end"
    assert {len(m) for m in messages[:-1]} == {1500} and 0 < len(messages[-1]) <= 1500
    assert (record.bytes_sent, record.messages_sent) == (len(data), len(messages))
    assert bytes(record.data) == data and record.clients == [(1, len(data), len(messages))]
    starts = {p.offset for p in PacketSplitter().feed(data)}
    cuts = {1500 * i for i in range(1, len(messages))}
    assert cuts - starts, "message boundaries must fall inside packets"
    trace = read_trace(data)
    report = trace_report(trace)
    assert report["complete"] and not report["problems"] and report["skipped_packets"] == 0
    assert report["unfinished"] == 1
    assert {"RenderThr:Main", "AuxRenderThread", "main", "TN:ContentLoaderTask"} <= set(
        report["threads"]
    )
    frames = report["frames"]
    fps = frames["frames"] / (report["span_ms"] / 1000)
    assert 50 <= fps <= 61, fps
    # time: app time 0 is the .bsprof header's start_ms on the wall clock
    assert trace.wall_offset_ns() == record.start_ms * 1_000_000 - record.boot_ns
    assert record.start_ms == run.start_ms and trace.first_ts >= record.boot_ns


async def test_a_client_that_connects_late_gets_only_what_comes_after() -> None:
    async with device(run_seconds=4.0, speed=2.0) as dev:
        await enable(dev)
        run = await dev.launch()
        stream = asyncio.create_task(read_stream(HOST, dev.profiler_port, timeout=15))
        await until(lambda: (dev.app_clock() or 0) >= 1.5)
        async with trace_socket(dev) as ws:
            data = b"".join(await receive(ws))
        await stream
    record = run.trace
    assert record is not None and record.clients == [(1, len(data), record.messages_sent)]
    trace = read_trace(data)
    report = trace_report(trace)
    assert report["complete"] and report["skipped_packets"] == 0 and report["unfinished"] == 1
    # it starts with the clock and the tracks, then events from when it came: the launch is lost
    assert trace.wall_offset_ns() == record.start_ms * 1_000_000 - record.boot_ns
    assert trace.first_ts - record.boot_ns >= 1.0e9
    assert len(trace.tracks) >= 5


async def test_data_stops_when_the_client_goes_and_resumes_when_one_comes_back() -> None:
    async with device(run_seconds=5.0, speed=2.0) as dev:
        await enable(dev)
        run = await dev.launch()
        stream = asyncio.create_task(read_stream(HOST, dev.profiler_port, timeout=15))
        async with trace_socket(dev) as first:
            await until(lambda: (dev.app_clock() or 0) >= 1.0)
            before = b"".join(await receive(first, quiet=0.05))
        await dev.wait_until(lambda: dev.tracing.client is None, 5)
        await until(lambda: (dev.app_clock() or 0) >= 2.5)
        async with trace_socket(dev) as second:
            after = b"".join(await receive(second))
        await stream
    record = run.trace
    assert record is not None and [c[0] for c in record.clients] == [1, 2]
    sent = bytes(record.data)
    assert sent.startswith(before) and sent.endswith(after)
    a, b = read_trace(before), read_trace(after)
    assert a.error is None and b.error is None and trace_report(b)["unfinished"] == 1
    assert b.first_ts - a.last_ts >= 0.5e9  # what was traced while nobody listened is lost
    assert b.wall_offset_ns() == a.wall_offset_ns()  # one clock, said again


async def test_pings_are_answered_and_an_oversized_message_closes_the_socket() -> None:
    async with device() as dev:
        async with trace_socket(dev) as ws:
            started = time.monotonic()
            await asyncio.wait_for(await ws.ping(b"x"), 2)
            assert time.monotonic() - started < 2
            await ws.send(b"\0" * (100 * 1024))  # more than a client may send in one message
            with pytest.raises(ConnectionClosedError):
                await asyncio.wait_for(ws.recv(), 5)
        assert ws.close_code == 1009
        await dev.wait_until(lambda: dev.tracing.client is None, 5)
        async with trace_socket(dev) as ws:  # the slot is free again
            await asyncio.wait_for(await ws.ping(), 2)


async def test_a_plain_request_for_the_socket_is_not_upgraded() -> None:
    async with device() as dev, httpx.AsyncClient(timeout=5) as client:
        answer = await client.get(f"http://{HOST}:{dev.ecp_port}/perfetto-session")
        assert answer.status_code == 426 and answer.headers["upgrade"] == "websocket"
        assert dev.tracing.client is None and dev.tracing.sessions == 0
        info = await client.get(f"http://{HOST}:{dev.ecp_port}/query/device-info")
        assert info.status_code == 200  # ECP goes on


async def test_stopping_the_device_closes_the_socket_with_going_away() -> None:
    dev = device()
    await dev.start()
    try:
        ws = await trace_socket(dev)
        await dev.wait_until(lambda: dev.tracing.client is not None, 5)
    finally:
        await dev.stop()
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(ws.recv(), 5)
    assert ws.close_code == 1001
