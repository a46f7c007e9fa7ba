"""SSDP discovery: reply parsing, Location trust, dedupe, and real datagrams on loopback."""

from __future__ import annotations

import asyncio

import pytest
from hostile_servers import SsdpFlood

from rokuprof.device.ssdp import (
    ReplyLimiter,
    Responders,
    SsdpDevice,
    build_msearch,
    device_from_reply,
    discover,
    parse_reply,
    serial_from_usn,
)
from rokuprof.simulator import DeviceConfig, SimulatedDevice

REPLY = (
    b"HTTP/1.1 200 OK\r\nCache-Control: max-age=3600\r\nST: roku:ecp\r\n"
    b"Location: http://192.168.1.20:8060/\r\nUSN: uuid:roku:ecp:YN00AA000001\r\n"
    b"Server: Roku/14.1.4 UPnP/1.0 Roku/14.1.4\r\n\r\n"
)


def test_msearch_asks_for_roku_ecp() -> None:
    text = build_msearch().decode()
    assert text.startswith("M-SEARCH * HTTP/1.1\r\n")
    assert "Host: 239.255.255.250:1900\r\n" in text
    assert 'Man: "ssdp:discover"\r\n' in text
    assert "ST: roku:ecp\r\n" in text
    assert text.endswith("\r\n\r\n")


def test_header_names_are_case_insensitive() -> None:
    mixed = REPLY.replace(b"Location:", b"LOCATION:").replace(b"USN:", b"usn:")
    mixed = mixed.replace(b"ST:", b"sT:")
    reply = parse_reply(mixed)
    assert reply.location == "http://192.168.1.20:8060/"
    assert reply.usn == "uuid:roku:ecp:YN00AA000001"
    assert reply.st == "roku:ecp"


def test_location_is_trusted_only_from_the_host_it_names() -> None:
    reply = parse_reply(REPLY)
    own = device_from_reply(reply, "192.168.1.20")
    assert (own.address, own.ecp_port, own.location_trusted) == ("192.168.1.20", 8060, True)
    assert own.serial == "YN00AA000001"
    assert own.ecp_url == "http://192.168.1.20:8060/"
    other = device_from_reply(reply, "192.168.1.66")
    assert other.address == "192.168.1.66"  # never the host the reply merely names
    assert other.location_trusted is False
    assert other.ecp_url == "http://192.168.1.66:8060/"


def test_location_port_is_used_when_trusted() -> None:
    reply = parse_reply(REPLY.replace(b"192.168.1.20:8060", b"127.0.0.1:18060"))
    assert device_from_reply(reply, "127.0.0.1").ecp_port == 18060


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 404 Not Found\r\n\r\n",
        b"M-SEARCH * HTTP/1.1\r\nST: roku:ecp\r\n\r\n",
        b"\xff\xfe garbage",
        b"",
        b"NOTIFY * HTTP/1.1\r\nNT: roku:ecp\r\nNTS: ssdp:byebye\r\nUSN: uuid:roku:ecp:X\r\n\r\n",
    ],
)
def test_other_datagrams_are_ignored(data: bytes) -> None:
    assert parse_reply(data) is None


def test_notify_alive_and_other_search_targets() -> None:
    notify = parse_reply(
        b"NOTIFY * HTTP/1.1\nNT: roku:ecp\nNTS: ssdp:alive\nUSN: uuid:roku:ecp:A1\n"
        b"Location: http://10.0.0.5:8060/\n\n"
    )
    assert device_from_reply(notify, "10.0.0.5").serial == "A1"
    other = parse_reply(REPLY.replace(b"ST: roku:ecp", b"ST: upnp:rootdevice"))
    assert device_from_reply(other, "192.168.1.20") is None
    assert serial_from_usn("uuid:something-else") == ""


class Responder(asyncio.DatagramProtocol):
    """Answers every datagram with the scripted replies (loopback only)."""

    def __init__(self, replies: list[bytes]) -> None:
        self.replies = replies
        self.requests: list[bytes] = []

    def connection_made(self, transport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr) -> None:
        self.requests.append(data)
        for reply in self.replies:
            self.transport.sendto(reply, addr)


async def start_responder(replies: list[bytes]):
    loop = asyncio.get_running_loop()
    transport, proto = await loop.create_datagram_endpoint(
        lambda: Responder(replies), local_addr=("127.0.0.1", 0)
    )
    return transport, proto, transport.get_extra_info("sockname")[1]


async def test_one_responder_is_one_device_with_its_most_plausible_answer() -> None:
    foreign = REPLY.replace(b"YN00AA000001", b"YN00AA000002")  # Location names 192.168.1.20
    own = REPLY.replace(b"192.168.1.20:8060", b"127.0.0.1:18060")
    other = own.replace(b"YN00AA000001", b"YN00AA000003")
    transport, proto, port = await start_responder([foreign, own, other, own, b"noise"])
    try:
        found = await discover(0.5, targets=[("127.0.0.1", port)], bind=("127.0.0.1", 0))
    finally:
        transport.close()
    assert proto.requests and b"ST: roku:ecp" in proto.requests[0]
    # The foreign-Location answer came first, but the first one naming its own host wins.
    assert [(d.serial, d.ecp_url) for d in found] == [("YN00AA000001", "http://127.0.0.1:18060/")]


async def test_a_foreign_location_is_not_followed() -> None:
    foreign = REPLY.replace(b"YN00AA000001", b"YN00AA000002")  # Location names 192.168.1.20
    transport, _, port = await start_responder([foreign])
    try:
        found = await discover(0.3, targets=[("127.0.0.1", port)], bind=("127.0.0.1", 0))
    finally:
        transport.close()
    assert [d.serial for d in found] == ["YN00AA000002"]
    assert found[0].ecp_url == "http://127.0.0.1:8060/" and not found[0].location_trusted


def test_responders_bound_devices_per_address() -> None:
    responders = Responders(max_per_address=2)
    for port in range(10):
        for n in range(3):
            usn = f"uuid:roku:ecp:P{port}N{n}"
            responders.add(SsdpDevice(usn, usn[14:], "127.0.0.1", 8060, "", True, ""), port)
    responders.add(SsdpDevice("x", "", "127.0.0.2", 8060, "", True, ""), 1)
    assert [d.serial for d in responders.devices] == ["P0N0", "P1N0", ""]
    assert responders.ignored == 28


async def test_discover_finds_two_simulated_devices() -> None:
    one = DeviceConfig(serial="YN00AA000001", name="Sim One", auto_launch=False)
    two = DeviceConfig(serial="YN00AA000002", name="Sim Two", auto_launch=False)
    async with SimulatedDevice(one) as a, SimulatedDevice(two) as b:
        targets = [("127.0.0.1", a.ssdp_port), ("127.0.0.1", b.ssdp_port)]
        found = await discover(1.0, targets=targets, bind=("127.0.0.1", 0))
        by_serial = {d.serial: d for d in found}
        assert set(by_serial) == {"YN00AA000001", "YN00AA000002"}
        assert by_serial["YN00AA000001"].ecp_port == a.ecp_port
        assert by_serial["YN00AA000002"].ecp_port == b.ecp_port
        assert all(d.location_trusted for d in found)


async def test_discover_with_nobody_answering_returns_nothing_in_time() -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    # Port 9 (discard) on loopback: nothing answers, ICMP errors are ignored.
    assert await discover(0.3, targets=[("127.0.0.1", 9)], bind=("127.0.0.1", 0)) == []
    assert loop.time() - start < 2


def test_reply_limiter_is_a_token_bucket_per_source_address() -> None:
    limiter = ReplyLimiter(burst=3, per_second=2.0, max_sources=2)
    assert [limiter.allow("10.0.0.1", 0.0) for _ in range(4)] == [True, True, True, False]
    assert limiter.allow("10.0.0.2", 0.0)  # another address has its own bucket
    assert limiter.allow("10.0.0.1", 0.5)  # one token back after 0.5 s at 2/s ...
    assert not limiter.allow("10.0.0.1", 0.5)  # ... and only one
    assert not limiter.allow("10.0.0.1", 0.75)  # half a token
    assert limiter.allow("10.0.0.1", 1.0)  # and another half: one
    assert [limiter.allow("10.0.0.1", 100.0) for _ in range(4)] == [True, True, True, False]
    assert (limiter.allowed, limiter.dropped) == (9, 4)
    # at most max_sources addresses are remembered: the least recently heard is forgotten
    limiter.allow("10.0.0.3", 100.0)  # forgets 10.0.0.2 (heard at 0.0)
    limiter.allow("10.0.0.2", 100.0)  # forgets 10.0.0.1; 10.0.0.2 starts with a full bucket
    assert limiter.allow("10.0.0.1", 100.0)  # forgotten: a full bucket again


async def test_datagrams_beyond_the_rate_of_their_address_are_dropped_unread() -> None:
    """Two loopback addresses answer one search, 50 and 3 replies: with a burst of 5 and a
    clock that stands still, exactly 5 + 3 are looked at; the flooder is still one device."""
    limiter = ReplyLimiter(burst=5, per_second=1.0)
    async with SsdpFlood(50, host="127.0.0.2") as flood, SsdpFlood(3, host="127.0.0.3") as few:
        targets = [("127.0.0.2", flood.port), ("127.0.0.3", few.port)]
        found = await discover(
            0.5,
            targets=targets,
            bind=("127.0.0.1", 0),
            repeats=1,
            limiter=limiter,
            clock=lambda: 0.0,
        )
    assert (flood.replies, few.replies) == (50, 3)
    assert (limiter.allowed, limiter.dropped) == (8, 45)
    assert sorted((d.address, d.serial) for d in found) == [
        ("127.0.0.2", "YN0000000001"),
        ("127.0.0.3", "YN0000000001"),
    ]
