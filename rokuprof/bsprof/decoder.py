"""The incremental, sans-IO ``.bsprof`` decoder.

Feed it bytes as they arrive, split anywhere; it returns every body entry that became whole::

    decoder = Decoder()
    for chunk in chunks:
        for entry in decoder.feed(chunk):
            ...
    decoder.close()
    decoder.status      # "complete" | "incomplete" | "corrupt"

It keeps at most one partial entry (bounded by the string-length limit) between feeds, so the
result is the same for every split of the same bytes. Bad input never raises: the decoder keeps
everything decoded before the problem, stops, and describes it in :attr:`Decoder.error` (one of
the types in :mod:`rokuprof.bsprof.errors`, with the byte offset of the entry).

The body loop is hand-tuned (bytes indexing, inlined one-byte varints, ``IndexError`` as the
"need more bytes" signal). When it rejects an entry, :func:`rokuprof.bsprof.reference.parse_entry`
- the construct grammar - says exactly what is wrong, so both parsers report identical errors.
"""

from __future__ import annotations

from rokuprof.bsprof import checks, reference
from rokuprof.bsprof.errors import BsprofError, DecoderStateError
from rokuprof.bsprof.grammar import FooterGrammar, GrammarFault
from rokuprof.bsprof.model import PATH, Entry, Footer, Header, Limits

HEADER, BODY, FOOTER, DONE, FAILED = "header", "body", "footer", "done", "failed"

U32 = 0xFFFFFFFF


class _Reject(Exception):
    """The fast path found something wrong; the reference parser will say what."""


def _varint(buf: bytes, pos: int, max_bytes: int) -> tuple[int, int]:
    """Multi-byte varint at ``buf[pos]``; ``IndexError`` if cut short, ``_Reject`` if too long."""
    result = 0
    shift = 0
    end = pos + max_bytes
    while pos < end:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
    raise _Reject


def _u32(buf: bytes, pos: int) -> tuple[int, int]:
    """A uint32 varint of two or more bytes at ``buf[pos]`` (unrolled: this is the hot path)."""
    r = buf[pos] & 0x7F
    b = buf[pos + 1]
    if b < 0x80:
        return r | (b << 7), pos + 2
    r |= (b & 0x7F) << 7
    b = buf[pos + 2]
    if b < 0x80:
        return r | (b << 14), pos + 3
    r |= (b & 0x7F) << 14
    b = buf[pos + 3]
    if b < 0x80:
        return r | (b << 21), pos + 4
    r |= (b & 0x7F) << 21
    b = buf[pos + 4]
    if b < 0x10:
        return r | (b << 28), pos + 5
    raise _Reject  # a fifth byte over 0x0f: longer than 5 bytes or above 32 bits


def _any_u32(buf: bytes, pos: int) -> tuple[int, int]:
    """A uint32 varint of any length (for the rarer entry kinds)."""
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    return _u32(buf, pos)


class Decoder:
    """Incremental decoder of one ``.bsprof`` stream (see the module docstring)."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.state = HEADER
        self.header: Header | None = None
        self.error: BsprofError | None = None
        self.warnings: list[str] = []
        self.entry_count = 0
        self.received = 0
        self.closed = False
        self._buf = b""
        self._base = 0  # stream offset of self._buf[0]
        self._end_ms: int | None = None
        self._trailing = 0
        self._end_seen = False
        self._definitions = checks.DefinitionLimits(self.limits)

    # -- public state ------------------------------------------------------------------------

    @property
    def offset(self) -> int:
        """Bytes decoded so far (everything before the partial entry being waited on, or before
        the unreadable entry after an error; trailing bytes after the footer count)."""
        return self._base

    @property
    def footer(self) -> Footer | None:
        if self._end_ms is None:
            return None
        return Footer(self._end_ms, self._trailing)

    @property
    def ended(self) -> bool:
        """True once the end-of-entries marker has been read."""
        return self.state in (FOOTER, DONE) or (self.state == FAILED and self._end_seen)

    @property
    def status(self) -> str:
        """``complete`` (footer read), ``corrupt`` (error), else ``incomplete`` / ``streaming``."""
        if self.error is not None:
            return "corrupt"
        if self.state == DONE:
            return "complete"
        return "incomplete" if self.closed else "streaming"

    # -- feeding -----------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> list[Entry]:
        """Take the next bytes of the stream; return the body entries they completed."""
        if self.closed:
            raise DecoderStateError(self._base, "feed() after close()")
        self.received += len(data)
        if self.state == FAILED:
            return []
        if self.state == DONE:
            self._trailing += len(data)
            self._base += len(data)
            return []
        buf = self._buf + bytes(data) if self._buf else bytes(data)
        out: list[Entry] = []
        pos = 0
        if self.state == HEADER:
            pos = self._read_header(buf)
        if self.state == BODY:
            pos = self._read_body(buf, pos, out)
            self.entry_count += len(out)
        if self.state == FOOTER:
            pos = self._read_footer(buf, pos)
        if self.state == DONE:
            self._trailing += len(buf) - pos
            pos = len(buf)
        self._buf = b"" if self.state == FAILED else buf[pos:]
        self._base += pos  # after an error, pos is where the unreadable part starts
        return out

    def close(self) -> None:
        """Say the stream has ended (EOF). Afterwards :attr:`status` is final."""
        self.closed = True

    # -- internals ---------------------------------------------------------------------------

    def _fail(self, error: BsprofError) -> None:
        self.error = error
        self.state = FAILED

    def _read_header(self, buf: bytes) -> int:
        try:
            header, size = reference.parse_header(buf, self.limits)
        except reference.Truncated:
            return 0
        except BsprofError as error:
            self._fail(error)
            return 0
        self.header = header
        warning = checks.version_warning(header)
        if warning:
            self.warnings.append(warning)
        self.state = BODY
        return size

    def _read_footer(self, buf: bytes, pos: int) -> int:
        try:
            byte = buf[pos]
            if byte < 0x80:
                end_ms, end = byte, pos + 1
            else:
                end_ms, end = _varint(buf, pos, 10)
                if end_ms >> 64:
                    raise _Reject
        except IndexError:
            return pos
        except _Reject:
            try:
                FooterGrammar.parse(buf[pos:])
            except GrammarFault as fault:
                self._fail(fault.make(self._base + pos))
            return pos
        self._end_ms = end_ms
        self.state = DONE
        return end

    def _explain(self, buf: bytes, start: int, out: list[Entry]) -> int:
        """The fast path rejected the entry at ``start``: let the grammar say why."""
        try:
            entry, end = reference.parse_entry(
                buf, start, self.header.line_data, self.limits, self._definitions, self._base
            )
        except reference.Truncated:
            return start
        except BsprofError as error:
            self._fail(error)
            return start
        # The grammar accepted what the fast path did not: trust the grammar.
        if entry is None:  # pragma: no cover - the fast path always accepts the end marker
            self._end_seen = True
            self.state = FOOTER
        else:
            out.append(entry)
        return end

    def _read_body(self, buf: bytes, pos: int, out: list[Entry]) -> int:
        """Decode whole entries from ``buf[pos:]``; return where the first partial one starts."""
        line = self.header.line_data
        append = out.append
        n = len(buf)
        max_string = self.limits.max_string_bytes
        define = self._definitions.check
        start = pos
        while True:
            try:
                while pos < n:
                    start = pos
                    tag = buf[pos]
                    if tag < 0x80:
                        pos += 1
                    else:
                        b = buf[pos + 1]
                        if b < 0x80:
                            tag = (tag & 0x7F) | (b << 7)
                            pos += 2
                        else:
                            tag, pos = _varint(buf, pos, 10)
                    kind = tag & 7
                    if kind == 3:  # memory operation
                        op = (tag >> 3) & 3
                        if tag >> 37 or op == 3:
                            raise _Reject
                        if line:
                            lo = buf[pos]
                            if lo < 0x80:
                                pos += 1
                            else:
                                lo, pos = _u32(buf, pos)
                        else:
                            lo = 0
                        addr = buf[pos]
                        if addr < 0x80:
                            pos += 1
                        else:
                            addr, pos = _u32(buf, pos)
                        if op == 0:
                            size = buf[pos]
                            if size < 0x80:
                                pos += 1
                            else:
                                size, pos = _u32(buf, pos)
                        else:
                            size = 0
                        append((3, tag >> 5, op, lo, addr, size))
                    elif kind == 4:  # CPU
                        if tag >> 35:
                            raise _Reject
                        if line:
                            lo = buf[pos]
                            if lo < 0x80:
                                pos += 1
                            else:
                                lo, pos = _u32(buf, pos)
                        else:
                            lo = 0
                        cpu = buf[pos]
                        if cpu < 0x80:
                            pos += 1
                        else:
                            cpu, pos = _u32(buf, pos)
                        wall = buf[pos]
                        if wall < 0x80:
                            pos += 1
                        else:
                            wall, pos = _u32(buf, pos)
                        append((4, tag >> 3, lo, cpu, wall))
                    elif kind == 5:  # call count
                        if tag >> 35:
                            raise _Reject
                        count = buf[pos]
                        if count < 0x80:
                            pos += 1
                        else:
                            count, pos = _u32(buf, pos)
                        append((5, tag >> 3, count))
                    elif kind == 2:  # path element
                        ident = tag >> 3
                        if ident == 0 or ident > U32:
                            raise _Reject
                        caller, pos = _any_u32(buf, pos)
                        module = lo = 0
                        if caller == 0:
                            module, pos = _any_u32(buf, pos)
                        elif line:
                            lo, pos = _any_u32(buf, pos)
                        file_id, pos = _any_u32(buf, pos)
                        line_no, pos = _any_u32(buf, pos)
                        function_id, pos = _any_u32(buf, pos)
                        define(PATH, self._base + start)
                        append((2, ident, caller, module, lo, file_id, line_no, function_id))
                    elif kind == 0:  # string, or the end marker
                        if tag == 0:
                            self._end_seen = True
                            self.state = FOOTER
                            return pos
                        if tag >> 35:
                            raise _Reject
                        nul = buf.find(b"\x00", pos, pos + max_string + 1)
                        if nul < 0:
                            if n - pos > max_string:
                                raise _Reject
                            raise IndexError
                        text = buf[pos:nul].decode("utf-8", "replace")
                        pos = nul + 1
                        define(0, self._base + start, len(text))
                        append((0, tag >> 3, text))
                    elif kind == 1:  # executable module
                        ident = tag >> 3
                        if ident == 0 or ident > U32:
                            raise _Reject
                        name_id, pos = _any_u32(buf, pos)
                        define(1, self._base + start)
                        append((1, ident, name_id))
                    else:
                        raise _Reject
                return pos
            except IndexError:
                return start
            except _Reject:
                pos = self._explain(buf, start, out)
                if self.state != BODY or pos == start:
                    return pos
            except BsprofError as error:  # a definition over a limit
                self._fail(error)
                return start
