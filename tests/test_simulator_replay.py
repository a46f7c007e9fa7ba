"""Replay devices: a body encoded once, streamed on schedule by several devices over loopback;
a slow client shows up as bytes behind schedule; files are replayed, bad ones refused."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import time
from pathlib import Path

import pytest
from daemon_helpers import start_simulator as simulate
from waiting import until

from rokuprof.bsprof.decoder import Decoder
from rokuprof.bsprof.grammar import END_MARKER
from rokuprof.simulator import DeviceConfig, ReplayBody, ReplayError, SimulatedDevice
from rokuprof.simulator.fleet import fleet_configs, run_fleet
from rokuprof.simulator.probe import read_stream
from rokuprof.simulator.replay import app_rate_for


@pytest.fixture(scope="module")
def body() -> ReplayBody:
    return ReplayBody.generate(3.0, seed=7, rate=40)


def decode(data: bytes) -> tuple[Decoder, list]:
    decoder = Decoder()
    entries = decoder.feed(data)
    decoder.close()
    return decoder, entries


def replay_config(body: ReplayBody, **kw) -> DeviceConfig:
    return DeviceConfig(replay=body, **({"replay_rate": 400_000.0, "keep_bytes": True} | kw))


async def test_a_replayed_run_is_header_body_end_marker_and_footer_on_schedule(
    body: ReplayBody,
) -> None:
    rate = 400_000.0
    async with SimulatedDevice(replay_config(body, replay_rate=rate)) as dev:
        t0 = time.monotonic()
        data = await read_stream("127.0.0.1", dev.profiler_port)
        took = time.monotonic() - t0
        run = await dev.wait_run_end(0, 5)
    assert data == dev.sent_bytes(0)
    header = body.stream_header(run.start_ms)
    assert data.startswith(header) and data[len(header) :].startswith(body.body)
    assert data[len(header) + len(body) :][:1] == END_MARKER
    decoder, entries = decode(data)
    _, expected = decode(body.stream_header(0) + body.body)
    assert decoder.status == "complete" and entries == expected
    assert decoder.header.start_ms == run.start_ms and decoder.footer.end_ms == run.end_ms
    assert run.status == "complete" and run.exit_reason == "run-length"
    # the rate, not faster: exact on the device's own schedule (its last byte came due only
    # len / rate after the body began); not much slower, by the test's clock
    assert run.ended_at - run.schedule_start >= len(body) / rate
    assert took < len(body) / rate + 2.0
    assert abs(run.app_seconds - took) < 0.5  # a replayed app runs in real time
    assert run.body_sent == len(body) and run.behind(time.monotonic()) == 0
    assert run.max_behind < rate * 0.25  # a client that keeps up: within a few ticks
    assert run.offered(time.monotonic()) == run.bytes_sent == len(data)


async def test_devices_share_one_body_and_each_streams_it(body: ReplayBody) -> None:
    configs = fleet_configs(3, replay_config(body, runs=1))
    assert all(c.replay is body for c in configs)  # shared, not copied
    started: list[SimulatedDevice] = []

    async def read_all() -> list[bytes]:
        await until(lambda: started, 10)
        return await asyncio.gather(*(read_stream("127.0.0.1", d.profiler_port) for d in started))

    fleet = asyncio.create_task(run_fleet(configs, on_started=started.extend, duration=10))
    streams = await read_all()
    devices = await fleet
    for dev, data in zip(devices, streams, strict=True):
        assert dev.runs[0].status == "complete" and data == dev.sent_bytes(0)
        assert body.body in data


async def test_a_client_that_reads_too_slowly_leaves_the_device_behind_schedule(
    body: ReplayBody,
) -> None:
    rate = 2_000_000.0
    big = ReplayBody(body.header, body.body * 6, source="six times")  # 1.5 s at the rate
    assert len(big) > 1.4 * rate
    async with SimulatedDevice(replay_config(big, replay_rate=rate, keep_bytes=False)) as dev:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", dev.profiler_port))
        reader, writer = await asyncio.open_connection(sock=sock)
        writer.write(b"GET /bsprof/channel.bsprof HTTP/1.1\r\nHost: x\r\n\r\n")
        await reader.readuntil(b"\r\n\r\n")
        await asyncio.sleep(1.0)  # not reading: about 2 MB come due
        behind = dev.current.behind(time.monotonic())
        received = len(await asyncio.wait_for(reader.read(), 10))
        writer.close()
        await writer.wait_closed()
        run = await dev.wait_run_end(0, 5)
    assert behind > 1_000_000  # small buffers: the backlog shows in the schedule
    assert run.max_behind > 1_000_000
    assert received == run.bytes_sent and run.body_sent == len(big)  # late, but all of it


async def test_a_bsprof_file_is_replayed_with_a_fresh_header(
    tmp_path: Path, body: ReplayBody
) -> None:
    live = DeviceConfig(run_seconds=1.0, speed=20.0, seed=3, keep_bytes=True)
    async with SimulatedDevice(live) as dev:
        original = await read_stream("127.0.0.1", dev.profiler_port)
    path = tmp_path / "capture.bsprof"
    path.write_bytes(original + b"trailing junk")
    replay = ReplayBody.from_file(path)
    assert replay.source == str(path)
    _, expected = decode(original)
    async with SimulatedDevice(replay_config(replay, replay_rate=1e6)) as dev:
        data = await read_stream("127.0.0.1", dev.profiler_port)
        run = await dev.wait_run_end(0, 5)
    decoder, entries = decode(data)
    assert decoder.status == "complete" and entries == expected
    assert decoder.header.start_ms == run.start_ms
    # a cut file: every whole entry
    cut = tmp_path / "cut.bsprof"
    cut.write_bytes(original[: len(original) * 2 // 3])
    _, whole = decode(original[: len(original) * 2 // 3])
    again = ReplayBody.from_file(cut)
    _, replayed = decode(again.stream_header(0) + again.body)
    assert replayed == whole and 0 < len(whole) < len(expected)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        (b"", "ends inside the header"),
        (b"not a profile at all", "not a .bsprof stream"),
        ("corrupt", "cannot replay a corrupt stream"),
    ],
)
def test_files_that_cannot_be_replayed_say_why(
    tmp_path: Path, body: ReplayBody, content, message: str
) -> None:
    path = tmp_path / "x.bsprof"
    if content == "corrupt":
        content = body.stream_header(0) + body.body[:1000] + b"\xff" * 11 + body.body[1000:]
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ReplayError) as info:
        ReplayBody.from_file(path)
    text = str(info.value)
    assert str(path) in text and message in text and "\n" not in text


def test_generated_bodies_keep_app_time_near_the_wall_clock() -> None:
    rate = 200_000.0
    generated = ReplayBody.generate(2.0, rate=app_rate_for(rate))
    assert generated.app_seconds == pytest.approx(2.0)
    assert 0.6 < len(generated) / rate / 2.0 < 1.6  # replayed, 2 app s take about 2 s


async def test_the_simulate_command_replays_a_file_on_two_devices(tmp_path: Path) -> None:
    live = DeviceConfig(run_seconds=1.0, speed=20.0, seed=5, keep_bytes=True)
    async with SimulatedDevice(live) as dev:
        original = await read_stream("127.0.0.1", dev.profiler_port)
    path = tmp_path / "run.bsprof"
    path.write_bytes(original)
    proc = await simulate(
        "--replay", str(path), "--replay-rate", "200KB", "--devices", "2", "--runs", "1", "--json"
    )
    try:
        rows = [json.loads(await asyncio.wait_for(proc.stdout.readline(), 15)) for _ in range(2)]
        streams = await asyncio.gather(*(read_stream("127.0.0.1", r["profiler"]) for r in rows))
        runs = [json.loads(await asyncio.wait_for(proc.stdout.readline(), 15)) for _ in range(2)]
        assert await asyncio.wait_for(proc.wait(), 15) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    _, expected = decode(original)
    for data in streams:
        decoder, entries = decode(data)
        assert decoder.status == "complete" and entries == expected
    assert [r["status"] for r in runs] == ["complete", "complete"]
    assert sorted(r["bytes"] for r in runs) == sorted(len(s) for s in streams)


async def test_the_simulate_command_refuses_a_file_it_cannot_replay(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a profile\n")
    proc = await simulate("--replay", str(path))
    out, err = await asyncio.wait_for(proc.communicate(), 15)
    assert proc.returncode == 2 and out == b""
    assert err.decode().splitlines() == [
        f"error: {path}: byte 0: not a .bsprof stream: byte 0 is 0x6e, expected 0x62"
    ]


@pytest.mark.parametrize("source", ["generated", "file"])
async def test_a_run_ended_early_finishes_its_entry_and_stays_well_formed(
    tmp_path: Path, body: ReplayBody, source: str
) -> None:
    if source == "file":
        path = tmp_path / "b.bsprof"
        path.write_bytes(body.stream_header(0) + body.body + END_MARKER + b"\x00")
        body = ReplayBody.from_file(path)
    assert body.boundaries and max(b - a for a, b in itertools.pairwise(body.boundaries)) < 1 << 17
    async with SimulatedDevice(replay_config(body, replay_rate=300_000.0)) as dev:
        reading = asyncio.create_task(read_stream("127.0.0.1", dev.profiler_port))
        await until(lambda: dev.runs and dev.runs[0].body_sent > len(body) // 4, 10)  # a part
        assert await dev.home()
        data = await reading
        run = await dev.wait_run_end(0, 5)
    decoder, entries = decode(data)
    _, expected = decode(body.stream_header(0) + body.body)
    assert decoder.status == "complete" and run.exit_reason == "home"
    assert 0 < len(entries) < len(expected) and entries == expected[: len(entries)]
