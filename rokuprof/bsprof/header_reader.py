"""The header's fast reader: a well-formed header read without the grammar.

The grammar (:mod:`rokuprof.bsprof.grammar`, built on construct) stays the one definition of the
format and the one source of its error messages; loading it costs more than reading a small
capture, so the :class:`~rokuprof.bsprof.decoder.Decoder` reads a header here first and asks the
reference parser only when this reader finds anything it does not accept (``NotPlain``): a bad
magic, an over-long or too large varint, a size over the limit, fields past the header size, a
string without its NUL or over the length limit. It is stricter than the grammar, never looser,
so what it accepts the grammar reads the same (``tests/test_header_reader.py`` checks both on
generated headers).
"""

from __future__ import annotations

import struct

from rokuprof.bsprof import checks
from rokuprof.bsprof.model import MAGIC, Header, Limits

_FLOAT = struct.Struct("<f")


class NotPlain(Exception):
    """Something only the grammar can describe; the reference parser says what."""


def read_header(buf: bytes, limits: Limits) -> tuple[Header, int] | None:
    """The header at the start of ``buf`` and its size in bytes; ``None`` while more bytes are
    needed; ``NotPlain`` for anything but a well-formed header within ``limits``."""
    if checks.magic_error(buf) is not None:
        raise NotPlain
    try:
        pos = len(MAGIC)
        major, pos = _varint(buf, pos, 32)
        minor, pos = _varint(buf, pos, 32)
        patch, pos = _varint(buf, pos, 32)
        size, pos = _varint(buf, pos, 32)
    except IndexError:
        return None  # the prefix is cut short: the grammar would say the same
    if checks.header_size_error(size, limits) is not None:
        raise NotPlain
    if len(buf) < size:
        return None
    data = bytes(buf[:size])
    try:
        requested, actual = _FLOAT.unpack_from(data, pos)[0], _FLOAT.unpack_from(data, pos + 4)[0]
        pos += 8
        line_data, pos = _varint(data, pos, 32)
        memory_ops, pos = _varint(data, pos, 32)
        start_ms, pos = _varint(data, pos, 64)
    except (IndexError, struct.error):
        raise NotPlain from None  # fields past the header size
    texts = []
    for _ in range(6):
        end = data.find(b"\x00", pos)
        if end < 0 or end - pos > limits.max_string_bytes:
            raise NotPlain
        texts.append(data[pos:end].decode("utf-8", "replace"))
        pos = end + 1
    header = Header(
        major, minor, patch, size, requested, actual, bool(line_data), bool(memory_ops),
        start_ms, *texts,
    )  # fmt: skip
    return header, size


def _varint(buf: bytes, pos: int, bits: int) -> tuple[int, int]:
    """A varint of at most ``bits`` bits at ``buf[pos]``; ``IndexError`` if cut short."""
    result = shift = 0
    for _ in range((bits + 6) // 7):
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result >> bits:
                raise NotPlain
            return result, pos
        shift += 7
    raise NotPlain
