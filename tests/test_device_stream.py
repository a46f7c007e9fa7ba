"""The profiler stream client: response parsing (scripted bytes, every split) and real sockets."""

from __future__ import annotations

import asyncio
import socket

import pytest
from device_script import ScriptedDevice

from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import CALLS, CPU, MODULE, PATH, STRING, Footer, Header
from rokuprof.device.errors import DeviceTimeout, DeviceUnavailable, HttpStatusError, ProtocolError
from rokuprof.device.response import ResponseReader
from rokuprof.device.stream import ConnectionLost, ProfilerStream

HEADER = Header(
    1, 0, 0, 0, 1.0, 1.0, False, False, 1_700_000_000_000, "App", "", "1.0", "Roku", "4800X", "14.1"
)
ENTRIES = [
    (STRING, 1, "main"),
    (STRING, 2, "pkg:/source/main.brs"),
    (MODULE, 1, 1),
    (PATH, 1, 0, 1, 0, 2, 1, 1),
    (CPU, 1, 0, 1234, 5678),
    (CALLS, 1, 3),
]
BODY = build_stream(HEADER, ENTRIES, Footer(1_700_000_005_000))


def feed_split(reader: ResponseReader, data: bytes, step: int) -> bytes:
    out = bytearray()
    for i in range(0, len(data), step):
        out += reader.feed(data[i : i + step])
    return bytes(out)


def every_split(data: bytes) -> list[bytes]:
    """The body read with the data cut in two at every position."""
    results = []
    for cut in range(len(data) + 1):
        reader = ResponseReader()
        results.append(reader.feed(data[:cut]) + reader.feed(data[cut:]))
    return results


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.0 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nX-Odd:  v \r\n\r\n",
        b"HTTP/1.1 200\r\n\r\n",
        b"HTTP/1.0 200 OK\n\n",  # bare LF line ends
        b"http/1.1 200 ok\r\nSERVER: Roku\r\n\r\n",
        b"",  # no HTTP response at all: the body starts with the magic
    ],
)
def test_body_is_everything_after_the_head_for_every_split(head: bytes) -> None:
    data = head + BODY
    assert set(every_split(data)) == {BODY}
    reader = ResponseReader()
    assert feed_split(reader, data, 1) == BODY
    assert reader.status == 200
    assert reader.http is bool(head)
    assert reader.eof_problem() is None


def test_content_length_ends_the_body_and_ignores_the_rest() -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY + b"junk"
    assert set(every_split(data)) == {BODY}
    reader = ResponseReader()
    assert feed_split(reader, data, 3) == BODY
    assert reader.state == "done" and reader.ignored_bytes == 4


def test_short_content_length_body_is_reported_at_eof() -> None:
    reader = ResponseReader()
    reader.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + BODY)
    assert f"after {len(BODY)} of 1000 body bytes" in reader.eof_problem()


def test_chunked_body_is_decoded() -> None:
    parts = [BODY[:7], BODY[7:40], BODY[40:]]
    chunked = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\nX: y\r\n\r\n"
    data = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked
    assert set(every_split(data)) == {BODY}
    reader = ResponseReader()
    assert feed_split(reader, data, 1) == BODY
    assert reader.state == "done"


def test_data_that_is_neither_http_nor_bsprof_is_passed_on_for_the_decoder_to_judge() -> None:
    assert ResponseReader().feed(b"garbage\x00\x01") == b"garbage\x00\x01"


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 404),
        (b"HTTP/1.0 503\r\n\r\nbusy", 503),
    ],
)
def test_non_200_is_a_clear_error(data: bytes, status: int) -> None:
    with pytest.raises(HttpStatusError) as info:
        feed_split(ResponseReader("the profiler port 10.0.0.2:8090"), data, 2)
    assert info.value.status == status
    assert f"10.0.0.2:8090 answered {status}" in str(info.value)
    assert "expected 200" in str(info.value)


def test_unreadable_status_line_and_endless_head_are_protocol_errors() -> None:
    with pytest.raises(ProtocolError, match="status line"):
        ResponseReader().feed(b"HTTP/1.1 OK fine\r\n\r\n")
    reader = ResponseReader()
    reader.feed(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(ProtocolError, match="head over"):
        for _ in range(70):
            reader.feed(b"X-Filler: " + b"a" * 1000 + b"\r\n")


def test_eof_inside_the_head_is_reported() -> None:
    reader = ResponseReader()
    reader.feed(b"HTTP/1.1 200 OK\r\nServer")
    assert "inside the HTTP response head" in reader.eof_problem()


# -- real sockets on loopback --------------------------------------------------------------------


async def read_all(stream: ProfilerStream, idle: float = 5.0) -> bytes:
    out = bytearray()
    while data := await stream.read(idle):
        out += data
    return bytes(out)


async def test_stream_sends_the_get_and_reads_the_body_split_anywhere() -> None:
    data = b"HTTP/1.0 200 OK\r\n\r\n" + BODY
    pieces = [data[i : i + 5] for i in range(0, len(data), 5)]
    async with ScriptedDevice(pieces) as dev:
        async with await ProfilerStream.open("127.0.0.1", dev.port, connect_timeout=2) as s:
            sock = s.transport.get_extra_info("socket")
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            assert await read_all(s) == BODY
        assert dev.requests[0].startswith(b"GET /bsprof/channel.bsprof HTTP/1.1\r\n")


async def test_stream_without_http_response() -> None:
    async with (
        ScriptedDevice([BODY[:3], BODY[3:]]) as dev,
        await ProfilerStream.open("127.0.0.1", dev.port) as s,
    ):
        assert await read_all(s) == BODY
        assert s.response.http is False


async def test_nothing_listening_is_device_unavailable() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(DeviceUnavailable, match=f"127.0.0.1:{port}"):
        await ProfilerStream.open("127.0.0.1", port, connect_timeout=2)


async def test_idle_stream_times_out() -> None:
    async with (
        ScriptedDevice([b"HTTP/1.1 200 OK\r\n\r\n", BODY[:20]], stall=True) as dev,
        await ProfilerStream.open("127.0.0.1", dev.port) as s,
    ):
        assert await s.read(2) == BODY[:20]
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(DeviceTimeout, match="no data"):
            await s.read(0.2)
        assert loop.time() - start < 1.5


async def test_reset_mid_body_is_connection_lost_with_the_data_kept() -> None:
    async with (
        ScriptedDevice([b"HTTP/1.1 200 OK\r\n\r\n", BODY[:30]], reset=True) as dev,
        await ProfilerStream.open("127.0.0.1", dev.port) as s,
    ):
        got = bytearray()
        with pytest.raises(ConnectionLost, match="lost"):
            while True:
                data = await s.read(2)
                if not data:
                    break
                got += data
        assert bytes(got) == BODY[:30]


async def test_http_error_from_the_socket() -> None:
    async with (
        ScriptedDevice([b"HTTP/1.1 404 Not Found\r\n\r\n"]) as dev,
        await ProfilerStream.open("127.0.0.1", dev.port) as s,
    ):
        with pytest.raises(HttpStatusError, match="404"):
            await s.read(2)


async def test_a_delivered_stream_times_out_idle_after_its_last_byte() -> None:
    pieces = [b"x" * 10] * 40  # about 0.2 s of writes, then nothing
    async with (
        ScriptedDevice([b"HTTP/1.0 200 OK\r\n\r\n", *pieces], stall=True) as dev,
        await ProfilerStream.open("127.0.0.1", dev.port) as s,
    ):
        loop = asyncio.get_running_loop()
        got: list[bytes] = []
        s.deliver(got.append)
        with pytest.raises(DeviceTimeout, match=r"no data from .* for 0\.3 s"):
            await s.wait_end(0.3)
        timed_out = loop.time()
        assert b"".join(got) == b"x" * 400
        last = s.last_data  # monotonic, as the loop's clock
        assert 0.3 <= timed_out - last < 1.5  # counted from the last byte, not the start
