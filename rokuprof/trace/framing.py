"""The packets of a Perfetto trace as its bytes arrive (sans-IO, pure).

A trace file is the protobuf message ``perfetto.protos.Trace``: field 1 (``TracePacket``)
repeated, each a tag byte ``0x0A``, a varint length and the packet. It streams as it is written,
so :class:`PacketSplitter` takes bytes split anywhere (inside a tag, a length or a packet) and
hands out whole packets with the offset each began at. Top-level fields other than 1 are
skipped by their wire type, as a protobuf reader would. Bounded: no packet over
``max_packet_bytes`` is held (the stream is refused at its length, before its bytes arrive),
and what is held never exceeds one packet plus a length. Cost is linear in the bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

#: The largest packet kept (a heap graph comes in many packets; Perfetto's own writers keep
#: packets far smaller).
MAX_PACKET_BYTES = 16 * 1024 * 1024
#: A protobuf varint is at most ten bytes.
MAX_VARINT_BYTES = 10

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


class TraceFormatError(ValueError):
    """Bytes that are not a Perfetto trace, naming what was wrong and at which byte."""

    def __init__(self, what: str, offset: int) -> None:
        super().__init__(f"{what} at byte {offset:,}")
        self.what = what
        self.offset = offset


@dataclass(frozen=True, slots=True)
class Packet:
    """One ``TracePacket``'s bytes and the offset of its tag in the stream."""

    offset: int
    data: bytes


class PacketSplitter:
    """Whole packets out of bytes fed in any pieces. After a :class:`TraceFormatError` the
    splitter refuses more (the packets before it were all handed out)."""

    def __init__(self, max_packet_bytes: int = MAX_PACKET_BYTES) -> None:
        self.max_packet_bytes = max_packet_bytes
        self.offset = 0  # bytes of the stream consumed into whole fields
        self._buf = bytearray()
        self._failed: TraceFormatError | None = None

    @property
    def pending(self) -> int:
        """Bytes held that do not yet make a whole field (a packet cut by the end of a message,
        or at the end of the trace: a packet the writer never finished)."""
        return len(self._buf)

    def feed(self, data: bytes | bytearray | memoryview) -> Iterator[Packet]:
        """The packets ``data`` completes, in order."""
        if self._failed is not None:
            raise self._failed
        self._buf += data
        buf = self._buf
        at = 0
        try:
            while True:
                head = _field_head(buf, at)
                if head is None:
                    break
                field, wire, body, size = head
                if wire == _LENGTH and size > self.max_packet_bytes:
                    what = "packet" if field == 1 else f"field {field}"
                    raise TraceFormatError(
                        f"a {what} of {size:,} bytes (the limit is {self.max_packet_bytes:,})",
                        self.offset,
                    )
                if len(buf) < body + size:
                    break
                if field == 1 and wire == _LENGTH:
                    yield Packet(self.offset, bytes(buf[body : body + size]))
                self.offset += body + size - at
                at = body + size
        except TraceFormatError as exc:
            self._failed = exc
            raise
        finally:
            del buf[:at]


def _field_head(buf: bytearray, at: int) -> tuple[int, int, int, int] | None:
    """``(field number, wire type, where its body starts, body size)`` of the field at ``at``,
    or ``None`` when the bytes end inside its head."""
    key = _varint(buf, at)
    if key is None:
        return None
    tag, at = key
    field, wire = tag >> 3, tag & 7
    if field == 0:
        raise TraceFormatError(f"field number 0 (tag byte 0x{buf[at - 1]:02x})", at - 1)
    if wire == _VARINT:
        value = _varint(buf, at)
        return None if value is None else (field, wire, at, value[1] - at)
    if wire == _FIXED64:
        return field, wire, at, 8
    if wire == _FIXED32:
        return field, wire, at, 4
    if wire == _LENGTH:
        length = _varint(buf, at)
        return None if length is None else (field, wire, length[1], length[0])
    raise TraceFormatError(f"wire type {wire} (field {field}): not a protobuf trace", at - 1)


def _varint(buf: bytearray, at: int) -> tuple[int, int] | None:
    """The varint at ``at`` and the offset after it; ``None`` if the bytes end inside it."""
    value = 0
    for i in range(MAX_VARINT_BYTES):
        if at + i >= len(buf):
            return None
        byte = buf[at + i]
        value |= (byte & 0x7F) << (7 * i)
        if byte < 0x80:
            return value, at + i + 1
    raise TraceFormatError("a varint longer than ten bytes", at)
