"""The reference parser: the construct grammar applied entry by entry.

Slow (construct is interpreted) but simple and obviously faithful to the grammar. It serves as
the oracle the fast :class:`~rokuprof.bsprof.decoder.Decoder` is tested against, and the decoder
calls :func:`parse_entry` to describe precisely an entry its fast path rejected.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from construct import StreamError

from rokuprof.bsprof import checks
from rokuprof.bsprof.errors import BadHeader, BsprofError
from rokuprof.bsprof.grammar import (
    BodyEntry,
    FooterGrammar,
    GrammarFault,
    HeaderGrammar,
    HeaderPrefix,
    entry_from_container,
)
from rokuprof.bsprof.model import PATH, STRING, Entry, Footer, Header, Limits


class Truncated(Exception):
    """Not enough bytes to read the entry."""


@dataclass
class ReferenceResult:
    header: Header | None = None
    entries: list[Entry] = field(default_factory=list)
    ended: bool = False
    footer: Footer | None = None
    error: BsprofError | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.footer is not None and self.error is None


def parse_entry(
    data: bytes,
    offset: int,
    line_data: bool,
    limits: Limits,
    definitions: checks.DefinitionLimits,
    base: int = 0,
) -> tuple[Entry | None, int]:
    """Parse the entry at ``data[offset:]``; return it (``None`` = end marker) and its end.

    ``base`` is the absolute stream offset of ``data[0]``, used in error offsets. Raises a
    :class:`BsprofError` for bad input and :class:`Truncated` when ``data`` ends inside it.
    """
    stream = io.BytesIO(data)
    stream.seek(offset)
    where = base + offset
    try:
        parsed = BodyEntry.parse_stream(stream, line_data=line_data, limits=limits)
    except GrammarFault as fault:
        raise fault.make(where) from None
    except StreamError:
        raise Truncated from None
    entry = entry_from_container(parsed)
    if entry is not None and entry[0] <= PATH:
        chars = len(entry[2]) if entry[0] == STRING else 0
        definitions.check(entry[0], where, chars)
    return entry, stream.tell()


def parse_header(data: bytes, limits: Limits) -> tuple[Header, int]:
    """Parse the header from the start of ``data``; raise ``Truncated`` or a ``BsprofError``."""
    bad = checks.magic_error(data)
    if bad is not None:
        raise bad
    try:
        prefix = HeaderPrefix.parse(data, limits=limits)
    except GrammarFault as fault:
        raise fault.make(0) from None
    except StreamError:
        raise Truncated from None
    too_big = checks.header_size_error(prefix.header_size, limits)
    if too_big is not None:
        raise too_big
    if len(data) < prefix.header_size:
        raise Truncated
    try:
        fields = HeaderGrammar.parse(data[: prefix.header_size], limits=limits)
    except GrammarFault as fault:
        raise fault.make(0) from None
    except StreamError:
        raise BadHeader(
            0, f"header fields run past the header size of {prefix.header_size} bytes"
        ) from None
    return checks.header_from_fields(fields), prefix.header_size


def parse(data: bytes, limits: Limits | None = None) -> ReferenceResult:
    """Parse a whole (possibly truncated or corrupt) stream held in memory."""
    limits = limits or Limits()
    result = ReferenceResult()
    try:
        header, pos = parse_header(data, limits)
    except Truncated:
        return result
    except BsprofError as error:
        result.error = error
        return result
    result.header = header
    warning = checks.version_warning(header)
    if warning:
        result.warnings.append(warning)
    definitions = checks.DefinitionLimits(limits)
    while True:
        try:
            entry, end = parse_entry(data, pos, header.line_data, limits, definitions)
        except Truncated:
            return result
        except BsprofError as error:
            result.error = error
            return result
        pos = end
        if entry is None:
            result.ended = True
            break
        result.entries.append(entry)
    stream = io.BytesIO(data)
    stream.seek(pos)
    try:
        footer = FooterGrammar.parse_stream(stream)
    except GrammarFault as fault:
        result.error = fault.make(pos)
        return result
    except StreamError:
        return result
    result.footer = Footer(footer.end_ms, len(data) - stream.tell())
    return result


__all__ = ["ReferenceResult", "Truncated", "parse", "parse_entry", "parse_header"]
