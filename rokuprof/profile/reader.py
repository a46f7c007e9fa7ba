"""Decoder and tables together: bytes in, profile tables out."""

from __future__ import annotations

from rokuprof import _native
from rokuprof.bsprof.decoder import Decoder
from rokuprof.bsprof.errors import BsprofError
from rokuprof.bsprof.model import Footer, Header, Limits
from rokuprof.profile.tables import ProfileTables


class ProfileReader:
    """Feed ``.bsprof`` bytes (split anywhere); the tables fill as entries complete.

    ``ProfileReader()`` is served by the native core when it is built and not disabled (see
    :mod:`rokuprof._native`); :class:`PythonProfileReader` is always the pure-Python one."""

    def __new__(cls, limits: Limits | None = None) -> ProfileReader:
        if cls is ProfileReader:  # native core selection (rokuprof/_native)
            cls = _native.reader_class() or cls
        return super().__new__(cls)

    def __init__(self, limits: Limits | None = None) -> None:
        self.decoder = Decoder(limits)
        self.tables = ProfileTables(self.decoder.limits)

    @classmethod
    def from_bytes(cls, data: bytes, limits: Limits | None = None) -> ProfileReader:
        reader = cls(limits)
        reader.feed(data)
        reader.close()
        return reader

    def feed(self, data: bytes | bytearray | memoryview) -> int:
        """Decode and apply ``data``; return how many entries it completed."""
        entries = self.decoder.feed(data)
        if entries:
            self.tables.apply(entries)
        return len(entries)

    def close(self) -> None:
        self.decoder.close()

    @property
    def header(self) -> Header | None:
        return self.decoder.header

    @property
    def footer(self) -> Footer | None:
        return self.decoder.footer

    @property
    def error(self) -> BsprofError | None:
        return self.decoder.error

    @property
    def status(self) -> str:
        return self.decoder.status

    @property
    def complete(self) -> bool:
        return self.decoder.status == "complete"

    @property
    def entry_count(self) -> int:
        return self.decoder.entry_count

    @property
    def warnings(self) -> list[str]:
        return self.decoder.warnings + self.tables.warnings

    def problem(self) -> str | None:
        """One line saying why the stream is not complete, or ``None`` when it is."""
        if self.error is not None:
            return f"corrupt at byte {self.error.offset}: {self.error.message}"
        if self.header is None:
            return f"incomplete: the header was cut short after {self.decoder.received} bytes"
        if not self.decoder.ended:
            return (
                f"incomplete: the stream stops at byte {self.decoder.received} inside the body "
                f"(whole entries up to byte {self.decoder.offset} kept; no end marker)"
            )
        if self.footer is None:
            return "incomplete: the end marker is there but the footer (end timestamp) is missing"
        return None


class PythonProfileReader(ProfileReader):
    """Always the pure-Python decoder and tables, whatever the native core's state."""
