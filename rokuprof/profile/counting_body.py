"""The pure engine's body: decode and count in one pass.

:class:`CountingBody` is the :class:`~rokuprof.bsprof.decoder.BodyEngine` of the pure engine.
The common entries - CPU and wall time, call counts and memory operations, nearly every byte of
a real stream - are decoded straight into the write-back cache of
:class:`~rokuprof.profile.tables.ProfileTables` (see :meth:`ProfileTables.apply`), with no entry
tuple and no second pass; call paths (many in a row, for many paths) are defined as they are
read. Everything else - strings and modules, the end marker, a tag over 32 bits, a path never
defined, anything out of bounds or malformed - is one entry read by the decoder's loop
(:class:`~rokuprof.bsprof.decoder.PythonBody`, which checks every limit and names what is wrong
and where) and applied the general way. So the answers, limits and errors are the decoder's and
the tables' own, in stream order, and the loop here only has to be right about the well-formed
common case.

Feeding stays exact for every split: a cut entry raises ``IndexError`` (bytes indexing past the
end), and the loop stops before it, as the decoder does.
"""

from __future__ import annotations

from rokuprof.bsprof.decoder import Bytes, PythonBody, Rejected, path_element, read_u32, read_varint
from rokuprof.bsprof.errors import BsprofError
from rokuprof.bsprof.model import PATH, Limits
from rokuprof.path_model import HEAP_FULL_WARNING
from rokuprof.profile.tables import ProfileTables


class CountingBody(PythonBody):
    """The pure engine's body: the common entries counted as they are decoded, the others read
    one at a time by :class:`PythonBody` and applied to the tables."""

    def __init__(self, limits: Limits, tables: ProfileTables) -> None:
        super().__init__(limits)
        self.tables = tables

    def feed(self, buf: Bytes, pos: int, base: int) -> int:
        buf = bytes(buf)
        t = self.tables
        live = t.live_bytes
        count = 0
        try:
            pos, live, count = self._count(buf, pos, base, live)
        finally:
            t.live_bytes = live
            self.entry_count += count
            self.offset = base + pos
        return pos

    def _count(self, buf: bytes, pos: int, base: int, live: int) -> tuple[int, int, int]:
        """Decode and count the whole entries of ``buf[pos:]``; return where the first one not
        taken starts (cut short, unreadable, or the footer), the live bytes and the number of
        entries taken."""
        t = self.tables
        line = self._line
        rows = t.write_back()
        row_of, new_row = rows.row_of, rows.new_row
        line_of, new_line_row = rows.line_of, rows.new_line_row
        alloc_line_of, new_alloc_line_row = rows.alloc_line_of, rows.new_alloc_line_row
        heap = rows.heap
        heap_setdefault = heap.setdefault
        heap_pop = heap.pop
        max_live = t.limits.max_live_allocations
        define = self._definitions.check
        define_path = rows.define_path
        n = len(buf)
        may_fill = len(heap) + n - pos > max_live  # an entry is at least one byte
        count = 0
        start = pos
        while True:
            try:
                while pos < n:
                    start = pos
                    tag = buf[pos]
                    if tag < 0x80:
                        pos += 1
                    elif buf[pos + 1] < 0x80:
                        tag = (tag & 0x7F) | (buf[pos + 1] << 7)
                        pos += 2
                    else:  # many paths; a tag over 32 bits is for the decoder's loop
                        tag, pos = read_varint(buf, pos, 10)
                        if tag >> 35:
                            raise Rejected
                    kind = tag & 7
                    if kind == 3 or kind == 4:  # both start with the line offset
                        if line:
                            lo = buf[pos]
                            if lo < 0x80:
                                pos += 1
                            else:
                                lo, pos = read_u32(buf, pos)
                        else:
                            lo = 0
                    if kind == 3:  # memory operation
                        op = (tag >> 3) & 3
                        if op == 3:
                            raise Rejected
                        addr = buf[pos]  # an address: most often five bytes, unrolled
                        pos += 1
                        if addr >= 0x80:
                            addr &= 0x7F
                            b = buf[pos]
                            pos += 1
                            if b < 0x80:
                                addr |= b << 7
                            else:
                                addr |= (b & 0x7F) << 7
                                b = buf[pos]
                                pos += 1
                                if b < 0x80:
                                    addr |= b << 14
                                else:
                                    addr |= (b & 0x7F) << 14
                                    b = buf[pos]
                                    pos += 1
                                    if b < 0x80:
                                        addr |= b << 21
                                    else:
                                        addr |= (b & 0x7F) << 21
                                        b = buf[pos]
                                        pos += 1
                                        if b >= 0x10:  # over five bytes or 32 bits
                                            raise Rejected
                                        addr |= b << 28
                        pid = tag >> 5
                        if op:  # a free (1) or a free by realloc (2)
                            c = row_of(pid) or new_row(pid)
                            if c is None:
                                raise Rejected
                            c[op + 4] += 1
                            old = heap_pop(addr, None)
                            if old is None:
                                c[8] += 1
                            else:
                                old &= 0xFFFFFFFF
                                c[7] += old
                                live -= old
                            count += 1
                            continue
                        size = buf[pos]
                        if size < 0x80:
                            pos += 1
                        elif buf[pos + 1] < 0x80:
                            size = (size & 0x7F) | buf[pos + 1] << 7
                            pos += 2
                        else:
                            size, pos = read_u32(buf, pos)
                        if lo:  # the line's row, which the tables add to the path's too
                            c = alloc_line_of((pid, lo)) or new_alloc_line_row(pid, lo)
                            if c is None:
                                raise Rejected
                            c[0] += 1
                            c[1] += size
                            new = c[3] | size  # never a shared small int: the slot is >= 1
                        else:
                            c = row_of(pid) or new_row(pid)
                            if c is None:
                                raise Rejected
                            c[3] += 1
                            c[4] += size
                            new = c[9] | size
                        old = heap_setdefault(addr, new)
                        if old is not new:  # the address was still live: replace it
                            heap[addr] = new
                            live += size - (old & 0xFFFFFFFF)
                            t.replaced_allocations += 1
                        elif may_fill and len(heap) > max_live:
                            del heap[addr]
                            rows.over_limit("untracked_allocations", HEAP_FULL_WARNING)
                        else:
                            live += size
                    elif kind == 4:  # CPU and wall time
                        cpu = buf[pos]
                        if cpu < 0x80:
                            pos += 1
                        elif buf[pos + 1] < 0x80:
                            cpu = (cpu & 0x7F) | buf[pos + 1] << 7
                            pos += 2
                        else:
                            cpu, pos = read_u32(buf, pos)
                        wall = buf[pos]
                        if wall < 0x80:
                            pos += 1
                        elif buf[pos + 1] < 0x80:
                            wall = (wall & 0x7F) | buf[pos + 1] << 7
                            pos += 2
                        else:
                            wall, pos = read_u32(buf, pos)
                        pid = tag >> 3
                        c = row_of(pid) or new_row(pid)
                        if c is None:
                            raise Rejected
                        c[0] += cpu
                        c[1] += wall
                        if lo:
                            lc = line_of((pid, lo)) or new_line_row(pid, lo)
                            if lc is not None:
                                lc[0] += cpu
                                lc[1] += wall
                    elif kind == 5:  # call count
                        calls = buf[pos]
                        if calls < 0x80:
                            pos += 1
                        else:
                            calls, pos = read_u32(buf, pos)
                        c = row_of(tag >> 3) or new_row(tag >> 3)
                        if c is None:
                            raise Rejected
                        c[2] += calls
                    elif kind == 2:  # a call path (many of them in a row, for many paths)
                        entry, pos = path_element(buf, pos, tag, line)
                        define(PATH, base + start)
                        define_path(entry)
                    else:
                        raise Rejected
                    count += 1
                return pos, live, count
            except IndexError:
                return start, live, count
            except BsprofError as error:  # a definition over a limit
                self.error = error
                return start, live, count
            except Rejected:  # nothing of the entry at start is counted yet
                t.live_bytes = live
                pos = self._general(buf, start, base)
                live = t.live_bytes
                if pos == start or self.error is not None or self.ended:
                    return pos, live, count

    def _general(self, buf: bytes, start: int, base: int) -> int:
        """Read the entry at ``start`` with the decoder's loop and apply it; return where it ends
        (``start`` if it is cut short or unreadable: then :attr:`error` says why)."""
        out: list = []
        pos = self._read_body(buf, start, out, base, start + 1)
        if out:
            self.entry_count += len(out)
            self.tables.apply(out)
        return pos
