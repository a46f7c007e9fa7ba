"""Rules shared by the reference parser and the fast decoder, so both judge a stream alike."""

from __future__ import annotations

from dataclasses import fields

from rokuprof.bsprof.errors import BadMagic, LimitExceeded
from rokuprof.bsprof.model import MAGIC, MODULE, PATH, STRING, SUPPORTED_MAJOR, Header, Limits


def magic_error(data: bytes) -> BadMagic | None:
    """A :class:`BadMagic` if ``data`` (possibly shorter than the magic) cannot start a stream."""
    for i in range(min(len(data), len(MAGIC))):
        if data[i] != MAGIC[i]:
            return BadMagic(
                i, f"not a .bsprof stream: byte {i} is 0x{data[i]:02x}, expected 0x{MAGIC[i]:02x}"
            )
    return None


def header_size_error(header_size: int, limits: Limits) -> LimitExceeded | None:
    if header_size > limits.max_header_size:
        return LimitExceeded(0, "header size", header_size, limits.max_header_size)
    return None


def header_from_fields(c) -> Header:
    """Build a :class:`Header` from parsed grammar fields, which have its fields' names (its
    two flags are numbers there)."""
    values = {f.name: getattr(c, f.name) for f in fields(Header)}
    values["line_data"] = bool(c.line_data)
    values["memory_ops"] = bool(c.memory_ops)
    return Header(**values)


def version_warning(header: Header) -> str | None:
    if header.major != SUPPORTED_MAJOR:
        return (
            f"format version {header.version}: written for major version {SUPPORTED_MAJOR}; "
            "reading it anyway"
        )
    return None


class DefinitionLimits:
    """Counts string, module and path definitions and enforces :class:`Limits` on them."""

    __slots__ = ("_maxima", "counts", "max_chars", "string_chars")

    def __init__(self, limits: Limits) -> None:
        self.max_chars = limits.max_string_table_chars
        self.string_chars = 0
        self.counts = {STRING: 0, MODULE: 0, PATH: 0}
        self._maxima = {
            STRING: ("strings", limits.max_strings),
            MODULE: ("modules", limits.max_modules),
            PATH: ("paths", limits.max_paths),
        }

    def check(self, kind: int, offset: int, chars: int = 0) -> None:
        """Account one definition (``chars``: length of a string's text); raise
        :class:`LimitExceeded` when it is one too many. The ID's size is not limited: any
        uint32 but 0 is valid (the grammar rules out 0 and payloads over 32 bits)."""
        name, maximum = self._maxima[kind]
        count = self.counts[kind] + 1
        if count > maximum:
            raise LimitExceeded(offset, f"number of {name}", count, maximum)
        if chars:
            total = self.string_chars + chars
            if total > self.max_chars:
                raise LimitExceeded(offset, "string table size (characters)", total, self.max_chars)
            self.string_chars = total
        self.counts[kind] = count
