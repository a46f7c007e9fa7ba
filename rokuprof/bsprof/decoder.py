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

:class:`Framing` is the state machine of a stream (header, body, end marker, footer, trailing
bytes), written once; the body between header and end marker belongs to a :class:`BodyEngine`.
:class:`PythonBody` decodes the body in pure Python into entries (the pure engine builds on it,
``rokuprof._native`` has the C one), and :class:`Decoder` is the framing over it.

The body loop reads bytes by index with ``IndexError`` as the "need more bytes" signal. It is
the reference of the pure engine, whose hot loop (:mod:`rokuprof.profile.counting_body`) decodes
and counts the common entries in one pass and hands every other entry to this one. When it
rejects an entry, :func:`rokuprof.bsprof.reference.parse_entry` - the construct grammar - says
exactly what is wrong, so both parsers report identical errors.
"""

from __future__ import annotations

from typing import Protocol

from rokuprof.bsprof import checks
from rokuprof.bsprof.errors import BsprofError, DecoderStateError
from rokuprof.bsprof.header_reader import NotPlain, read_header
from rokuprof.bsprof.model import PATH, Entry, Footer, Header, Limits

HEADER, BODY, FOOTER, DONE, FAILED = "header", "body", "footer", "done", "failed"

U32 = 0xFFFFFFFF

Bytes = bytes | bytearray | memoryview


class Rejected(Exception):
    """The fast path found something wrong; the reference parser will say what."""


def read_varint(buf: bytes, pos: int, max_bytes: int) -> tuple[int, int]:
    """Multi-byte varint at ``buf[pos]``; ``IndexError`` if cut short, ``Rejected`` if too long."""
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
    raise Rejected


def _header(buf: bytes, limits: Limits) -> tuple[Header, int] | None:
    """The header and its size, ``None`` while cut short. The fast reader reads a well-formed
    one; when it refuses, the grammar reads it or says what is wrong."""
    try:
        return read_header(buf, limits)
    except NotPlain:
        pass
    from rokuprof.bsprof import reference  # the grammar loads when it has something to say

    try:
        return reference.parse_header(buf, limits)
    except reference.Truncated:
        return None


def read_u32(buf: bytes, pos: int) -> tuple[int, int]:
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
    raise Rejected  # a fifth byte over 0x0f: longer than 5 bytes or above 32 bits


def _any_u32(buf: bytes, pos: int) -> tuple[int, int]:
    """A uint32 varint of any length (for the rarer entry kinds)."""
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    return read_u32(buf, pos)


def path_element(buf: bytes, pos: int, tag: int, line: bool) -> tuple[Entry, int]:
    """The path element whose fields start at ``buf[pos]`` (after its ``tag``) and where it
    ends; ``IndexError`` if cut short, ``Rejected`` if malformed."""
    ident = tag >> 3
    if ident == 0 or ident > U32:
        raise Rejected
    caller, pos = _any_u32(buf, pos)
    module = lo = 0
    if caller == 0:
        module, pos = _any_u32(buf, pos)
    elif line:
        lo, pos = _any_u32(buf, pos)
    file_id, pos = _any_u32(buf, pos)
    line_no, pos = _any_u32(buf, pos)
    function_id, pos = _any_u32(buf, pos)
    return (2, ident, caller, module, lo, file_id, line_no, function_id), pos


class BodyEngine(Protocol):
    """Decodes the body of one stream: the entries between the header and the end marker.

    :class:`Framing` reads the header, hands every later byte to the engine until it says
    :attr:`ended` (or sets :attr:`error`), then reads the footer. An engine may decode only
    (:class:`PythonBody`) or decode and count in one pass (the native core)."""

    #: The reason the body cannot be read further (the engine then takes no more bytes).
    error: BsprofError | None
    #: True once the end-of-entries marker has been read.
    ended: bool

    @property
    def offset(self) -> int:
        """Stream offset just after the last whole entry (where the unreadable entry starts,
        after an error)."""
        ...

    @property
    def entry_count(self) -> int:
        """Entries decoded so far."""
        ...

    def begin(self, header: Header, offset: int) -> None:
        """The header was read; the body starts at stream ``offset``."""
        ...

    def feed(self, buf: Bytes, pos: int, base: int) -> int:
        """Decode the whole entries of ``buf[pos:]`` (``buf[0]`` is at stream offset ``base``).

        Returns where the bytes the engine did not take start: the partial entry it leaves to
        the framing (an engine that keeps it itself takes everything), the footer once
        :attr:`ended`, the unreadable entry once :attr:`error` is set."""
        ...


class Framing:
    """The state machine of one stream: header, body (its :class:`BodyEngine`'s), end marker,
    footer, trailing bytes. Feed it with :meth:`advance`; see the module docstring."""

    def __init__(self, limits: Limits, body: BodyEngine) -> None:
        self.limits = limits
        self.body = body
        self.state = HEADER
        self.header: Header | None = None
        self.error: BsprofError | None = None
        self.warnings: list[str] = []
        self.received = 0
        self.closed = False
        self._buf = b""  # bytes not taken yet (partial header, entry or footer)
        self._base = 0  # stream offset of self._buf[0]
        self._end_ms: int | None = None
        self._trailing = 0

    # -- public state ------------------------------------------------------------------------

    @property
    def offset(self) -> int:
        """Bytes decoded so far (everything before the partial entry being waited on, or before
        the unreadable entry after an error; trailing bytes after the footer count)."""
        if self.state == BODY or (self.state == FAILED and self.header and not self.ended):
            return self.body.offset
        return self._base

    @property
    def entry_count(self) -> int:
        return self.body.entry_count

    @property
    def footer(self) -> Footer | None:
        if self._end_ms is None:
            return None
        return Footer(self._end_ms, self._trailing)

    @property
    def ended(self) -> bool:
        """True once the end-of-entries marker has been read."""
        return self.header is not None and self.body.ended

    @property
    def status(self) -> str:
        """``complete`` (footer read), ``corrupt`` (error), else ``incomplete`` / ``streaming``."""
        if self.error is not None:
            return "corrupt"
        if self.state == DONE:
            return "complete"
        return "incomplete" if self.closed else "streaming"

    # -- feeding -----------------------------------------------------------------------------

    def advance(self, data: Bytes) -> int:
        """Take the next bytes of the stream; return how many body entries they completed."""
        if self.closed:
            raise DecoderStateError(self.offset, "feed() after close()")
        self.received += len(data)
        if self.state == FAILED:
            return 0
        if self.state == DONE:
            self._trailing += len(data)
            self._base += len(data)
            return 0
        before = self.body.entry_count
        buf = self._buf + bytes(data) if self._buf else data
        pos = 0
        if self.state == HEADER:
            buf = bytes(buf)
            pos = self._read_header(buf)
        if self.state == BODY:
            pos = self.body.feed(buf, pos, self._base)
            if self.body.error is not None:
                self._fail(self.body.error)
            elif self.body.ended:
                self.state = FOOTER
        if self.state == FOOTER:
            pos = self._read_footer(buf, pos)
        if self.state == DONE:
            self._trailing += len(buf) - pos
            pos = len(buf)
        self._buf = b"" if self.state == FAILED else bytes(buf[pos:])
        self._base += pos  # after an error, pos is where the unreadable part starts
        return self.body.entry_count - before

    def close(self) -> None:
        """Say the stream has ended (EOF). Afterwards :attr:`status` is final."""
        self.closed = True

    # -- internals ---------------------------------------------------------------------------

    def _fail(self, error: BsprofError) -> None:
        self.error = error
        self.state = FAILED

    def _read_header(self, buf: bytes) -> int:
        try:
            read = _header(buf, self.limits)
        except BsprofError as error:
            self._fail(error)
            return 0
        if read is None:
            return 0
        header, size = read
        self.header = header
        warning = checks.version_warning(header)
        if warning:
            self.warnings.append(warning)
        self.body.begin(header, size)
        self.state = BODY
        return size

    def _read_footer(self, buf: Bytes, pos: int) -> int:
        try:
            byte = buf[pos]
            if byte < 0x80:
                end_ms, end = byte, pos + 1
            else:
                end_ms, end = read_varint(buf, pos, 10)
                if end_ms >> 64:
                    raise Rejected
        except IndexError:
            return pos
        except Rejected:
            from rokuprof.bsprof.grammar import FooterGrammar, GrammarFault

            try:
                FooterGrammar.parse(bytes(buf[pos:]))
            except GrammarFault as fault:
                self._fail(fault.make(self._base + pos))
            return pos
        self._end_ms = end_ms
        self.state = DONE
        return end


class PythonBody:
    """The pure-Python :class:`BodyEngine`: decoded entries wait in a list for :meth:`take`."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.error: BsprofError | None = None
        self.ended = False
        self.offset = 0
        self.entry_count = 0
        self._line = False
        self._out: list[Entry] = []
        self._definitions = checks.DefinitionLimits(limits)

    def begin(self, header: Header, offset: int) -> None:
        self._line = header.line_data
        self.offset = offset

    def feed(self, buf: Bytes, pos: int, base: int) -> int:
        out = self._out
        count = len(out)
        pos = self._read_body(bytes(buf), pos, out, base)
        self.entry_count += len(out) - count
        self.offset = base + pos
        return pos

    def take(self) -> list[Entry]:
        """The entries decoded since the previous call."""
        out, self._out = self._out, []
        return out

    def _explain(self, buf: bytes, start: int, out: list[Entry], base: int) -> int:
        """The fast path rejected the entry at ``start``: let the grammar say why."""
        from rokuprof.bsprof import reference  # the grammar loads when it has something to say

        try:
            entry, end = reference.parse_entry(
                buf, start, self._line, self.limits, self._definitions, base
            )
        except reference.Truncated:
            return start
        except BsprofError as error:
            self.error = error
            return start
        # The grammar accepted what the fast path did not: trust the grammar.
        if entry is None:  # pragma: no cover - the fast path always accepts the end marker
            self.ended = True
        else:
            out.append(entry)
        return end

    def _read_body(
        self, buf: bytes, pos: int, out: list[Entry], base: int, stop: int | None = None
    ) -> int:
        """Decode whole entries from ``buf[pos:]`` (``buf[0]`` at stream offset ``base``); return
        where the first partial one starts. With ``stop``, only the entries that start before
        it (``pos + 1``: the one entry at ``pos``)."""
        line = self._line
        append = out.append
        n = len(buf)
        stop = n if stop is None else stop
        max_string = self.limits.max_string_bytes
        define = self._definitions.check
        start = pos
        while True:
            try:
                while pos < stop:
                    start = pos
                    tag = buf[pos]
                    if tag < 0x80:
                        pos += 1
                    else:
                        tag, pos = read_varint(buf, pos, 10)
                    kind = tag & 7
                    if kind == 3:  # memory operation
                        op = (tag >> 3) & 3
                        if tag >> 37 or op == 3:
                            raise Rejected
                        if line:
                            lo, pos = _any_u32(buf, pos)
                        else:
                            lo = 0
                        addr, pos = _any_u32(buf, pos)
                        if op == 0:
                            size, pos = _any_u32(buf, pos)
                        else:
                            size = 0
                        append((3, tag >> 5, op, lo, addr, size))
                    elif kind == 4:  # CPU
                        if tag >> 35:
                            raise Rejected
                        if line:
                            lo, pos = _any_u32(buf, pos)
                        else:
                            lo = 0
                        cpu, pos = _any_u32(buf, pos)
                        wall, pos = _any_u32(buf, pos)
                        append((4, tag >> 3, lo, cpu, wall))
                    elif kind == 5:  # call count
                        if tag >> 35:
                            raise Rejected
                        count, pos = _any_u32(buf, pos)
                        append((5, tag >> 3, count))
                    elif kind == 2:  # path element
                        entry, pos = path_element(buf, pos, tag, line)
                        define(PATH, base + start)
                        append(entry)
                    elif kind == 0:  # string, or the end marker
                        if tag == 0:
                            self.ended = True
                            return pos
                        if tag >> 35:
                            raise Rejected
                        nul = buf.find(b"\x00", pos, pos + max_string + 1)
                        if nul < 0:
                            if n - pos > max_string:
                                raise Rejected
                            raise IndexError
                        text = buf[pos:nul].decode("utf-8", "replace")
                        pos = nul + 1
                        define(0, base + start, len(text))
                        append((0, tag >> 3, text))
                    elif kind == 1:  # executable module
                        ident = tag >> 3
                        if ident == 0 or ident > U32:
                            raise Rejected
                        name_id, pos = _any_u32(buf, pos)
                        define(1, base + start)
                        append((1, ident, name_id))
                    else:
                        raise Rejected
                return pos
            except IndexError:
                return start
            except Rejected:
                pos = self._explain(buf, start, out, base)
                if self.error is not None or self.ended or pos == start:
                    return pos
            except BsprofError as error:  # a definition over a limit
                self.error = error
                return start


class Decoder(Framing):
    """Incremental decoder of one ``.bsprof`` stream, in pure Python (see the module
    docstring)."""

    body: PythonBody

    def __init__(self, limits: Limits | None = None) -> None:
        limits = limits or Limits()
        super().__init__(limits, PythonBody(limits))

    def feed(self, data: Bytes) -> list[Entry]:
        """Take the next bytes of the stream; return the body entries they completed."""
        self.advance(data)
        return self.body.take()
