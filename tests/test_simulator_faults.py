"""Fault injection on the simulated profiler stream: resets, closes, stalls, garbage, cuts."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from rokuprof.profile.reader import ProfileReader
from rokuprof.simulator import DeviceConfig, Fault, SimulatedDevice
from rokuprof.simulator.probe import open_stream, read_stream
from rokuprof.simulator.runs import COMPLETE, CUT, STALLED

HOST = "127.0.0.1"


def config(**kw) -> DeviceConfig:
    base = dict(run_seconds=1.0, runs=1, speed=20.0, run_gap=0.05, seed=7)
    return DeviceConfig(**(base | kw))


async def read_all(reader: asyncio.StreamReader, timeout: float = 5.0) -> tuple[bytes, str]:
    """Everything until EOF or reset, and how it ended."""
    data = bytearray()
    async with asyncio.timeout(timeout):
        try:
            while chunk := await reader.read(65536):
                data += chunk
        except ConnectionResetError:
            return bytes(data), "reset"
    return bytes(data), "eof"


async def close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


@pytest.mark.parametrize("kind,ending", [("reset", "reset"), ("close", "eof")])
async def test_cut_after_n_bytes(kind, ending):
    async with SimulatedDevice(config(faults=(Fault(kind, after_bytes=777),))) as dev:
        reader, writer, _ = await open_stream(HOST, dev.profiler_port)
        try:
            data, how = await read_all(reader)
        finally:
            await close(writer)
        assert how == ending
        assert len(data) == 777 and data == dev.sent_bytes(0)
        parsed = ProfileReader.from_bytes(data)
        assert parsed.status == "incomplete"
        run = await dev.wait_run_end(0, 3)
        assert run.status == CUT and run.faults_fired == [kind]
        assert run.exit_reason == "run-length"  # the app ran on without its client


async def test_fault_for_one_run_only_then_clean_run():
    faults = (Fault("reset", after_bytes=100, run=0),)
    async with SimulatedDevice(config(runs=2, faults=faults)) as dev:
        reader, writer, _ = await open_stream(HOST, dev.profiler_port)
        try:
            data, how = await read_all(reader)
        finally:
            await close(writer)
        assert (len(data), how) == (100, "reset")
        await dev.wait_run_end(0, 3)
        await dev.wait_listening(3)
        body = await read_stream(HOST, dev.profiler_port)
        assert ProfileReader.from_bytes(body).complete
        await dev.wait_idle(3)
        assert [r.status for r in dev.runs] == [CUT, COMPLETE]


async def test_reconnect_during_a_cut_run_is_refused():
    async with SimulatedDevice(config(run_seconds=2.0, faults=(Fault("close", 300),))) as dev:
        reader, writer, _ = await open_stream(HOST, dev.profiler_port)
        try:
            await read_all(reader)
        finally:
            await close(writer)
        reader, writer, status = await open_stream(HOST, dev.profiler_port)
        await close(writer)
        assert status == 503


async def test_stall_keeps_the_connection_open_without_data():
    async with SimulatedDevice(config(run_seconds=30.0, faults=(Fault("stall", 500),))) as dev:
        reader, writer, _ = await open_stream(HOST, dev.profiler_port)
        try:
            data = b""
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.5):
                    while chunk := await reader.read(65536):
                        data += chunk
            assert len(data) == 500 and not reader.at_eof()
            assert dev.current.status == "streaming"
            await dev.home()
            rest, how = await read_all(reader)
        finally:
            await close(writer)
        assert (rest, how) == (b"", "eof")  # closed at app exit, held data never sent
        assert dev.runs[0].status == STALLED and dev.sent_bytes(0) == data


async def test_timed_stall_resumes_and_completes():
    faults = (Fault("stall", 400, stall_seconds=0.3),)
    async with SimulatedDevice(config(run_seconds=1.0, speed=10.0, faults=faults)) as dev:
        reader, writer, _ = await open_stream(HOST, dev.profiler_port)
        try:
            data, how = await read_all(reader)
        finally:
            await close(writer)
        assert how == "eof" and data == dev.sent_bytes(0)
        assert ProfileReader.from_bytes(data).complete
        assert dev.runs[0].status == COMPLETE


async def test_garbage_after_n_bytes_corrupts_the_stream_there():
    async with SimulatedDevice(config(faults=(Fault("garbage", 1000),))) as dev:
        body = await read_stream(HOST, dev.profiler_port)
    assert body == dev.sent_bytes(0)
    assert body[1000:1011] == b"\xff" * 11
    parsed = ProfileReader.from_bytes(body)
    assert parsed.status == "corrupt"
    assert 900 < parsed.error.offset <= 1000


async def test_cut_from_a_test_and_runtime_fault():
    async with SimulatedDevice(config(run_seconds=30.0, speed=1.0)) as dev:
        reader, writer, _ = await open_stream(HOST, dev.profiler_port)
        try:
            async with asyncio.timeout(2):
                first = await reader.read(65536)
            assert first
            assert await dev.cut(reset=False)
            rest, how = await read_all(reader)
        finally:
            await close(writer)
        assert how == "eof" and first + rest == dev.sent_bytes(0)
        assert dev.current.status == CUT  # the app keeps running
        assert not await dev.cut()
        await dev.home()
        dev.add_fault(Fault("reset", after_bytes=50, run=1))
        await dev.launch()
        reader, writer, _ = await open_stream(HOST, dev.profiler_port)
        try:
            data, how = await read_all(reader)
        finally:
            await close(writer)
        assert (len(data), how) == (50, "reset")


async def test_client_going_away_is_recorded_and_app_runs_on():
    async with SimulatedDevice(config(run_seconds=1.0, speed=5.0)) as dev:
        reader, writer, _ = await open_stream(HOST, dev.profiler_port)
        async with asyncio.timeout(2):
            await reader.read(100)
        await close(writer)
        run = await dev.wait_run_end(0, 3)
        assert run.status == "client-gone" and run.exit_reason == "run-length"
