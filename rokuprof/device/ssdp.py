"""SSDP discovery of Roku devices (``ST: roku:ecp``) over UDP, with asyncio-dgram.

The M-SEARCH goes out from an *unconnected* socket (devices answer by unicast from their own
address, which a socket connected to the multicast group would drop). Replies are parsed with
:func:`parse_reply` (pure); a reply's ``Location`` is only followed when its host is the address
the reply came from, so a third party on the LAN cannot redirect a capture elsewhere.

One responder is one device: a Roku answers from one socket, so every reply from the same
address and UDP port counts once, however many USNs it names (:class:`Responders` keeps the
most plausible of its answers). A few responder sockets per address are allowed, because
simulated devices share one loopback address; see :mod:`rokuprof.device.limits`. Before any
parsing, datagrams are rate-limited per source address (:class:`ReplyLimiter`), so one sender
costs little CPU however fast it sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

import asyncio_dgram

from rokuprof.device.constants import ECP_PORT
from rokuprof.device.errors import DeviceError
from rokuprof.device.hosts import url_host
from rokuprof.device.limits import (
    SSDP_MAX_DATAGRAM,
    SSDP_MAX_RESPONDERS_PER_ADDRESS,
    SSDP_MAX_SOURCES,
    SSDP_REPLY_BURST,
    SSDP_REPLY_RATE,
)

SSDP_GROUP = "239.255.255.250"
SSDP_PORT = 1900
ROKU_ST = "roku:ecp"
MAX_DATAGRAM = SSDP_MAX_DATAGRAM


def build_msearch(
    st: str = ROKU_ST, host: str = SSDP_GROUP, port: int = SSDP_PORT, mx: int = 1
) -> bytes:
    """The M-SEARCH request asking devices of type ``st`` to answer."""
    lines = [
        "M-SEARCH * HTTP/1.1",
        f"Host: {host}:{port}",
        'Man: "ssdp:discover"',
        f"ST: {st}",
        f"MX: {mx}",
        "",
        "",
    ]
    return "\r\n".join(lines).encode("ascii")


@dataclass(frozen=True, slots=True)
class SsdpReply:
    """One parsed SSDP message: a search response or a NOTIFY announcement."""

    kind: str  # "response" or "notify"
    headers: dict[str, str]  # lower-cased names

    @property
    def st(self) -> str:
        return self.headers.get("st") or self.headers.get("nt") or ""

    @property
    def usn(self) -> str:
        return self.headers.get("usn", "")

    @property
    def location(self) -> str:
        return self.headers.get("location", "")


def parse_reply(data: bytes) -> SsdpReply | None:
    """Parse a datagram; ``None`` unless it is a 200 search response or a NOTIFY."""
    try:
        text = data.decode("utf-8", "replace")
    except Exception:  # pragma: no cover - decode with "replace" does not raise
        return None
    lines = text.replace("\r\n", "\n").split("\n")
    start = lines[0].strip().split()
    if len(start) >= 2 and start[0].upper().startswith("HTTP/"):
        if start[1] != "200":
            return None
        kind = "response"
    elif start and start[0].upper() == "NOTIFY":
        kind = "notify"
    else:
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line.strip():
            break
        name, sep, value = line.partition(":")
        if sep and name.strip():
            headers.setdefault(name.strip().lower(), value.strip())
    if kind == "notify" and headers.get("nts", "").lower() == "ssdp:byebye":
        return None
    return SsdpReply(kind, headers)


def serial_from_usn(usn: str) -> str:
    """``uuid:roku:ecp:YN00AA000001`` -> ``YN00AA000001`` (empty if not a Roku USN)."""
    prefix = "uuid:roku:ecp:"
    return usn[len(prefix) :] if usn.lower().startswith(prefix) else ""


def _same_host(a: str, b: str) -> bool:
    try:
        return ipaddress.ip_address(a) == ipaddress.ip_address(b)
    except ValueError:
        return a.lower() == b.lower()


@dataclass(frozen=True, slots=True)
class SsdpDevice:
    """A device that answered: where its ECP server is, as far as we trust the reply."""

    usn: str
    serial: str
    address: str  # the address the reply came from
    ecp_port: int
    location: str  # as sent by the device
    location_trusted: bool  # False: Location named another host and was ignored
    server: str

    @property
    def ecp_url(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"http://{host}:{self.ecp_port}/"

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def device_from_reply(reply: SsdpReply, address: str, st: str = ROKU_ST) -> SsdpDevice | None:
    """The device behind a reply from ``address``; ``None`` if the reply is for another ST."""
    if reply.st.lower() != st.lower():
        return None
    port = ECP_PORT
    trusted = False
    try:
        url = urlsplit(reply.location)
        if url.hostname and _same_host(url.hostname, address):
            port = url.port or 80
            trusted = True
    except ValueError:
        pass
    usn = reply.usn or f"address:{address}"
    return SsdpDevice(
        usn=usn,
        serial=serial_from_usn(usn),
        address=address,
        ecp_port=port,
        location=reply.location,
        location_trusted=trusted,
        server=reply.headers.get("server", ""),
    )


def plausibility(device: SsdpDevice) -> tuple[bool, bool]:
    """How much a reply looks like a Roku's: a Location naming its own host, a Roku USN."""
    return (device.location_trusted, bool(device.serial))


class Responders:
    """The devices seen in one search, one per responder (address and UDP port).

    A responder's first answer stands unless a later one is more plausible (see
    :func:`plausibility`); after :data:`SSDP_MAX_RESPONDERS_PER_ADDRESS` responders on one
    address, further ones there are ignored. Memory: one entry per responder, whatever it sends.
    """

    def __init__(self, max_per_address: int = SSDP_MAX_RESPONDERS_PER_ADDRESS) -> None:
        self.max_per_address = max_per_address
        self._devices: dict[tuple[str, int], SsdpDevice] = {}
        self._per_address: dict[str, int] = {}
        self.ignored = 0  # answers that added no device

    def add(self, device: SsdpDevice, port: int) -> None:
        key = (device.address, port)
        known = self._devices.get(key)
        if known is None:
            if self._per_address.get(device.address, 0) >= self.max_per_address:
                self.ignored += 1
                return
            self._per_address[device.address] = self._per_address.get(device.address, 0) + 1
            self._devices[key] = device
        elif plausibility(device) > plausibility(known):
            self._devices[key] = device  # keeps its place in the order
        else:
            self.ignored += 1

    @property
    def devices(self) -> list[SsdpDevice]:
        """In the order the responders first answered."""
        return list(self._devices.values())


class ReplyLimiter:
    """How many datagrams from one source address are looked at: a token bucket per address
    (``burst`` at once, then ``per_second``); pure, the caller says what time it is.

    At most ``max_sources`` addresses are remembered (the least recently heard is forgotten, and
    starts again with a full bucket), so the limiter is bounded whatever the number of senders.
    """

    def __init__(
        self,
        burst: int = SSDP_REPLY_BURST,
        per_second: float = SSDP_REPLY_RATE,
        max_sources: int = SSDP_MAX_SOURCES,
    ) -> None:
        self.burst = burst
        self.per_second = per_second
        self.max_sources = max_sources
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, when
        self.allowed = 0
        self.dropped = 0

    def allow(self, address: str, now: float) -> bool:
        """Whether a datagram from ``address`` arriving at ``now`` is looked at (and counted)."""
        tokens, then = self._buckets.pop(address, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + max(0.0, now - then) * self.per_second)
        ok = tokens >= 1.0
        self._buckets[address] = (tokens - 1.0 if ok else tokens, now)
        if len(self._buckets) > self.max_sources:
            self._buckets.popitem(last=False)
        if ok:
            self.allowed += 1
        else:
            self.dropped += 1
        return ok


async def discover(
    timeout: float = 3.0,
    *,
    targets: Iterable[tuple[str, int]] = ((SSDP_GROUP, SSDP_PORT),),
    bind: tuple[str, int] = ("0.0.0.0", 0),
    st: str = ROKU_ST,
    repeats: int = 2,
    limiter: ReplyLimiter | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[SsdpDevice]:
    """Send M-SEARCH to each target and collect the devices that answer within ``timeout``.

    One device per responder (see :class:`Responders`), in the order they first answered.
    ``targets`` and ``bind`` exist so tests can use loopback unicast. Datagrams beyond the
    ``limiter``'s rate per source address (a fresh :class:`ReplyLimiter` when none is given;
    the daemon keeps one across searches) are dropped unread; ``clock`` is its time.
    """
    limiter = limiter if limiter is not None else ReplyLimiter()
    targets = list(targets)
    routed = [t for t in targets if route_problem(t) is None]
    if targets and not routed:  # nothing would leave this machine: say why, now
        raise DeviceError(f"cannot send the SSDP search: {route_problem(targets[0])}")
    targets = routed
    try:
        stream = await asyncio_dgram.bind(bind)
    except OSError as error:
        raise DeviceError(f"cannot open a UDP socket on {bind[0]}:{bind[1]}: {error}") from error
    with contextlib.suppress(OSError):
        stream.socket.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 2)
    found = Responders()
    deadline = time.monotonic() + timeout
    unreachable: list[OSError] = []  # sends the network refused (reported on a later recv)

    async def send_all() -> None:
        for i in range(max(1, repeats)):
            for host, port in targets:
                message = build_msearch(st, host, port, mx=max(1, min(5, int(timeout))))
                # No route to one target must not stop the others.
                with contextlib.suppress(OSError, asyncio_dgram.TransportClosed):
                    await stream.send(message, (host, port))
            if i + 1 < repeats:
                await asyncio.sleep(min(0.5, timeout / (repeats + 1)))

    sender = asyncio.create_task(send_all())
    try:
        while (left := deadline - time.monotonic()) > 0:
            try:
                data, addr = await asyncio.wait_for(stream.recv(), left)
            except TimeoutError:
                break
            except OSError as error:
                if error.errno in NO_ROUTE:
                    unreachable.append(error)
                continue
            except asyncio_dgram.TransportClosed:
                continue
            if not limiter.allow(addr[0], clock()):
                continue
            reply = parse_reply(data[:MAX_DATAGRAM])
            device = device_from_reply(reply, addr[0], st) if reply else None
            if device is not None:
                found.add(device, addr[1])
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sender
        stream.close()
    if unreachable and not found.devices:
        error = unreachable[0]
        raise DeviceError(f"cannot send the SSDP search: {error.strerror or error}")
    return found.devices


#: Errors that mean a datagram cannot leave this machine for its target.
NO_ROUTE = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.EADDRNOTAVAIL}


def route_problem(target: tuple[str, int]) -> str | None:
    """Why ``target`` has no route from here (``None`` if it has one). Connecting a UDP socket
    only looks the route up: no packet is sent."""
    host, port = target
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((host, port))
    except OSError as error:
        if error.errno not in NO_ROUTE:
            return None  # e.g. a name: the search itself will tell
        return f"no route to {url_host(host)}:{port} ({error.strerror or error})"
    return None
