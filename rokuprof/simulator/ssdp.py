"""SSDP responder of the simulated device: unicast replies to ``M-SEARCH`` for ``roku:ecp``."""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from typing import TYPE_CHECKING, Protocol

from rokuprof.device.hosts import url_host

if TYPE_CHECKING:
    from rokuprof.simulator.config import DeviceConfig


class Announced(Protocol):
    """What SSDP needs of a device, and all it may touch."""

    config: DeviceConfig
    ecp_port: int

    @property
    def advertise_host(self) -> str: ...


log = logging.getLogger(__name__)

MULTICAST_GROUP = "239.255.255.250"
SEARCH_TARGETS = ("roku:ecp", "ssdp:all")
MAX_AGE = 3600


def parse_search(data: bytes) -> dict[str, str] | None:
    """The headers (lower-case names) of an ``M-SEARCH`` request, or None for anything else."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\r\n") if "\r\n" in text else text.split("\n")
    if not lines or lines[0].split()[:2] != ["M-SEARCH", "*"]:
        return None
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return headers


def search_reply(device: Announced, target: str, host: str) -> bytes:
    """The unicast reply a Roku sends to a matching search."""
    cfg = device.config
    version = cfg.software_version
    lines = [
        "HTTP/1.1 200 OK",
        f"Cache-Control: max-age={MAX_AGE}",
        f"ST: {target}",
        f"USN: uuid:roku:ecp:{cfg.serial}",
        "Ext: ",
        f"Server: Roku/{version} UPnP/1.0 Roku/{version}",
        f"LOCATION: http://{url_host(host)}:{device.ecp_port}/",  # IPv6 in brackets
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _local_address(peer: tuple[str, int]) -> str:
    """The local address this machine uses to reach ``peer`` (no packet is sent)."""
    family = socket.AF_INET6 if ":" in peer[0] else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.connect(peer[:2])
        return probe.getsockname()[0]


class SsdpProtocol(asyncio.DatagramProtocol):
    def __init__(self, device: Announced) -> None:
        self.device = device
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr) -> None:
        headers = parse_search(data)
        if headers is None or self.transport is None:
            return
        target = headers.get("st", "")
        if target.lower() not in SEARCH_TARGETS:
            return
        if headers.get("man", '"ssdp:discover"').strip('"').lower() != "ssdp:discover":
            return
        device = self.device
        host = device.config.advertise_host or device.config.host
        if host in ("", "0.0.0.0", "::"):
            try:
                host = _local_address(addr)
            except OSError:
                host = device.advertise_host
        reply_target = "roku:ecp" if target.lower() == "ssdp:all" else target
        self.transport.sendto(search_reply(device, reply_target, host), addr)


async def start(device: Announced) -> tuple[asyncio.DatagramTransport, int]:
    """Bind the responder; join the SSDP multicast group only if the config asks for it."""
    cfg = device.config
    sock = socket.socket(socket.AF_INET6 if ":" in cfg.host else socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((cfg.host, cfg.ssdp_port))
        if cfg.ssdp_multicast:
            membership = struct.pack(
                "4s4s", socket.inet_aton(MULTICAST_GROUP), socket.inet_aton("0.0.0.0")
            )
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_datagram_endpoint(lambda: SsdpProtocol(device), sock=sock)
    return transport, sock.getsockname()[1]
