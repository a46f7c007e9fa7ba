"""One reader: bytes in, profile tables out, whichever engine reads the body."""

from __future__ import annotations

from rokuprof.bsprof.decoder import Bytes, Framing
from rokuprof.bsprof.errors import BsprofError
from rokuprof.bsprof.model import Footer, Header, Limits
from rokuprof.profile import engine as engines
from rokuprof.profile.protocol import TablesView


class ProfileReader:
    """Feed ``.bsprof`` bytes (split anywhere); the tables fill as entries complete.

    The header, the end marker and the footer are read by the one
    :class:`~rokuprof.bsprof.decoder.Framing`; the body by ``engine``
    (:mod:`rokuprof.profile.engine`; by default the one :func:`~rokuprof.profile.engine.select`
    picks)."""

    def __init__(self, limits: Limits | None = None, engine: engines.Engine | None = None) -> None:
        self.engine = engine or engines.select()
        limits = limits or Limits()
        body, tables = self.engine.open(limits)
        self.tables: TablesView = tables
        self.decoder = Framing(limits, body)

    @classmethod
    def from_bytes(
        cls, data: bytes, limits: Limits | None = None, engine: engines.Engine | None = None
    ) -> ProfileReader:
        reader = cls(limits, engine)
        reader.feed(data)
        reader.close()
        return reader

    def feed(self, data: Bytes) -> int:
        """Decode and count ``data``; return how many entries it completed."""
        return self.decoder.advance(data)

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
