"""The simulator's time and randomness are inputs: ``DeviceConfig`` is the one place their
defaults come from, and with a scripted clock and a seeded ``random.Random`` what a simulator part
does is exact and reproducible (real sockets on 127.0.0.1 where a part writes to a peer)."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from scripted_clock import ScriptedClock

from rokuprof.simulator import DeviceConfig, ReplayBody, SimulatedDevice
from rokuprof.simulator.config import Fault
from rokuprof.simulator.probe import http, read_stream
from rokuprof.simulator.replay import replay_stream
from rokuprof.simulator.runs import RunRecord
from rokuprof.simulator.stream import StreamOutput

HOST = "127.0.0.1"
SIMULATOR = Path(__file__).resolve().parent.parent / "rokuprof" / "simulator"
#: The one module that names the default clocks and the default random sources.
DEFAULTS = "config.py"
CLOCKS = {"time", "monotonic", "perf_counter", "time_ns", "monotonic_ns", "perf_counter_ns"}


def drawn(module: str, name: str) -> bool:
    if module == "time":
        return name in CLOCKS
    return (module == "random" and name != "Random") or module == "secrets"


def reads_of_time_or_chance(tree: ast.AST) -> list[str]:
    """``time.<clock>``, ``random.<function>`` (``random.Random`` is a seeded source, not a
    draw), ``secrets.<anything>``, and the same names imported from those modules."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module, name = node.value.id, node.attr
            if drawn(module, name):
                found.append(f"{module}.{name} (line {node.lineno})")
        elif isinstance(node, ast.ImportFrom) and node.module in ("time", "random", "secrets"):
            for alias in node.names:
                if drawn(node.module, alias.name):
                    found.append(f"from {node.module} import {alias.name} (line {node.lineno})")
    return found


def test_the_simulator_reads_no_clock_and_draws_nothing_outside_its_config() -> None:
    offenders = {}
    for path in sorted(SIMULATOR.glob("*.py")):
        if path.name == DEFAULTS:
            continue
        found = reads_of_time_or_chance(ast.parse(path.read_text(), str(path)))
        if found:
            offenders[path.name] = found
    assert offenders == {}
    # the probe sees what it looks for: the defaults module is where they are
    defaults = reads_of_time_or_chance(ast.parse((SIMULATOR / DEFAULTS).read_text()))
    assert {entry.split(" ")[0] for entry in defaults} >= {"time.time", "time.monotonic"}


# -- a stream's splits and stalls ----------------------------------------------------------------


@contextlib.asynccontextmanager
async def loopback_writer():
    """A real connection on 127.0.0.1: yields (writer, received), ``received`` filled by the
    peer until the writer closes."""
    received = bytearray()
    done = asyncio.Event()

    async def drain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            received.extend(data)
        writer.close()
        done.set()

    server = await asyncio.start_server(drain, HOST, 0)
    try:
        port = server.sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection(HOST, port)
        yield writer, received
        async with asyncio.timeout(5):
            await done.wait()
    finally:
        server.close()
        await server.wait_closed()


MESSAGES = [bytes(range(i, i + 40)) for i in range(0, 200, 40)]


async def splits(
    seed: int, messages: list[bytes] = MESSAGES, max_pieces: int = 6
) -> tuple[list[bytes], bytes]:
    """The writes a stream output makes of ``messages`` with ``Random(seed)``, and what
    arrived."""
    async with loopback_writer() as (writer, received):
        writes: list[bytes] = []
        real_write = writer.write

        def write(data) -> None:  # the real writer, watched
            writes.append(bytes(data))
            real_write(data)

        writer.write = write
        record, rng = RunRecord(0, 0.0, 0.0), random.Random(seed)
        out = StreamOutput(writer, record, [], rng, clock=ScriptedClock(), max_pieces=max_pieces)
        for message in messages:
            await out.send(message)
        await out.close()
    return writes, bytes(received)


async def test_the_same_seed_splits_a_stream_the_same_way_and_another_seed_does_not() -> None:
    first, arrived = await splits(11)
    again, _ = await splits(11)
    other, other_arrived = await splits(12)
    assert first == again
    assert other != first
    assert len(first) > len(MESSAGES)  # it did split
    assert arrived == other_arrived == b"".join(MESSAGES) == b"".join(first)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    messages=st.lists(st.binary(min_size=1, max_size=64), min_size=1, max_size=6),
    max_pieces=st.integers(1, 8),
)
def test_splits_are_a_function_of_the_seed_and_lose_or_reorder_nothing(
    seed: int, messages: list[bytes], max_pieces: int
) -> None:
    writes, arrived = asyncio.run(splits(seed, messages, max_pieces))
    assert asyncio.run(splits(seed, messages, max_pieces))[0] == writes
    assert arrived == b"".join(messages) == b"".join(writes)
    assert all(writes) and len(writes) <= len(messages) * max_pieces


async def test_a_timed_stall_holds_the_stream_until_the_clock_reaches_its_end() -> None:
    clock = ScriptedClock(100.0)
    stall = Fault("stall", after_bytes=10, stall_seconds=5.0)
    async with loopback_writer() as (writer, received):
        record = RunRecord(0, clock(), 0.0)
        out = StreamOutput(writer, record, [stall], random.Random(1), clock=clock, max_pieces=1)
        await out.send(bytes(30))
        assert (record.bytes_sent, len(out.held), record.faults_fired) == (10, 20, ["stall"])
        clock.advance(4.5)
        await out.send(bytes(5))
        assert (record.bytes_sent, len(out.held)) == (10, 25)
        clock.advance(0.5)  # the stall's end: the next write takes everything held
        await out.send(bytes(1))
        assert (record.bytes_sent, len(out.held), out.state) == (36, 0, "open")
        await out.hold_until_resumed()  # nothing held: returns at once
        await out.close()
    assert len(received) == 36


# -- the replay schedule -------------------------------------------------------------------------


async def replay_slices(blocked: float) -> tuple[list[int], RunRecord]:
    """Slice sizes of a replayed body at 800 B/s, a write every 1/8 s of a scripted clock that
    moves only when the schedule sleeps, or when the first write blocks for ``blocked`` s."""
    clock = ScriptedClock(0.0)
    body = ReplayBody.generate(0.5, seed=4)
    record = RunRecord(0, 0.0, 0.0)
    slices: list[int] = []

    async def send(piece: memoryview) -> None:
        slices.append(len(piece))
        if len(slices) == 1:
            clock.advance(blocked)

    async def wait_until(deadline: float) -> bool:
        clock.now = max(clock.now, deadline)
        return True

    async with asyncio.timeout(5):
        await replay_stream(record, body, send, wait_until, rate=800.0, tick=0.125, clock=clock)
    assert sum(slices) == len(body) == record.body_sent
    return slices, record


async def test_a_replay_writes_what_came_due_on_the_clock_it_is_given() -> None:
    slices, record = await replay_slices(blocked=0.0)
    assert slices[:-1] == [100] * (len(slices) - 1) and 0 < slices[-1] <= 100
    assert record.max_behind == 0
    # the first write (at 1/8 s) blocks for 3/8 s: 300 bytes more came due meanwhile, the
    # schedule does not wait for them, so the next write (at 5/8 s) takes 400
    slowed, record = await replay_slices(blocked=0.375)
    assert slowed[:3] == [100, 400, 100] and record.max_behind == 300


# -- the device --------------------------------------------------------------------------------


async def test_a_device_reads_uptime_run_times_and_remote_times_from_its_clocks() -> None:
    mono, wall = ScriptedClock(500.0), ScriptedClock(1_700_000_000.0)
    cfg = DeviceConfig(auto_launch=False, monotonic=mono, clock=wall, dev_password="pw")
    async with SimulatedDevice(cfg) as dev:
        assert dev.started_at == 500.0
        mono.advance(42.75)
        status, _, body = await http(HOST, dev.ecp_port, "GET", "/query/device-info")
        assert status == 200 and b"<uptime>42</uptime>" in body
        status, _, _ = await http(HOST, dev.ecp_port, "POST", "/keypress/Rev")
        assert status == 200 and list(dev.remote_log) == [(542.75, "keypress", "Rev")]
        mono.advance(1.0)
        record = await dev.launch()
        assert (record.launched_at, record.launched_wall) == (543.75, 1_700_000_000.0)
        await dev.home()


async def test_the_installer_password_and_nonces_come_from_the_token_source() -> None:
    tokens = iter(["0123456789abcdef" * 4, "opaque1", "nonce1", "nonce2"])
    cfg = DeviceConfig(auto_launch=False, token=lambda: next(tokens))
    async with SimulatedDevice(cfg) as dev:
        assert dev.password == "0123456789abcdef"
        for nonce in ("nonce1", "nonce2"):  # each challenge on the wire takes the next token
            status, headers, _ = await http(HOST, dev.installer_port, "GET", "/")
            challenge = headers["www-authenticate"]
            assert status == 401 and f'nonce="{nonce}"' in challenge
            assert 'opaque="opaque1"' in challenge


async def device_stream(seed: int) -> bytes:
    cfg = DeviceConfig(
        seed=seed, run_seconds=1.0, speed=20.0, runs=1, clock=lambda: 1_700_000_000.0
    )
    async with SimulatedDevice(cfg) as dev:
        await dev.wait_listening(2)
        data = await read_stream(HOST, dev.profiler_port)
        await dev.wait_run_end(0, 5)
    assert data == dev.sent_bytes(0)
    return data


async def test_devices_with_the_same_seed_and_clock_stream_the_same_bytes() -> None:
    first = await device_stream(5)
    assert await device_stream(5) == first
    assert await device_stream(6) != first
