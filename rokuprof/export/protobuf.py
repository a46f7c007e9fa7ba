"""The few protobuf wire-format pieces the exporters need, written by hand (no protobuf runtime):
varints, length-delimited fields, packed repeated integers and doubles."""

from __future__ import annotations

import struct

_MASK64 = (1 << 64) - 1


def varint(value: int) -> bytes:
    """Base-128 varint; a negative int64 is written as its 64-bit two's complement."""
    value &= _MASK64
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def key(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def int_field(field: int, value: int) -> bytes:
    """A varint field (int64, uint64, uint32, bool); omitted when 0 (proto3 default)."""
    return key(field, 0) + varint(value) if value else b""


def required_int_field(field: int, value: int) -> bytes:
    """A varint field written even when 0 (proto2 ``required``)."""
    return key(field, 0) + varint(value)


def bytes_field(field: int, data: bytes) -> bytes:
    return key(field, 2) + varint(len(data)) + data


def string_field(field: int, text: str) -> bytes:
    return bytes_field(field, text.encode("utf-8"))


def double_field(field: int, value: float) -> bytes:
    return key(field, 1) + struct.pack("<d", value)


def packed_varints(field: int, values: list[int]) -> bytes:
    if not values:
        return b""
    return bytes_field(field, b"".join(map(varint, values)))


def packed_doubles(field: int, values: list[float]) -> bytes:
    if not values:
        return b""
    return bytes_field(field, struct.pack(f"<{len(values)}d", *values))
