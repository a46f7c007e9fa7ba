"""A plain pure-Python ``.bsprof`` reader: the baseline the pure-Python engine is measured against.

Written the simple way, with no tuning: one varint function, one ``if`` per entry type, a dict
of nine counters per call path (CPU, wall, calls, allocations and their bytes, frees, frees by
realloc, freed bytes, frees of unknown addresses) and a live-allocation table (address ->
size). It keeps no per-line counters, no limits and no error reporting: it is what the
engine's per-path totals cost at the least, not a reader to ship. ``benchmarks/decode.py``
checks its totals equal the engine's before timing it.
"""

from __future__ import annotations

MAGIC = b"bsprof\x00\x00"


class PlainReader:
    """Feed bytes in pieces; ``paths`` holds each call path's nine counters."""

    def __init__(self) -> None:
        self.buf = b""
        self.header_done = False
        self.line_data = False
        self.ended = False
        self.strings: dict[int, str] = {}
        self.modules: dict[int, int] = {}
        self.parents: dict[int, tuple[int, int, int, int, int, int]] = {}
        self.paths: dict[int, list[int]] = {}
        self.live: dict[int, int] = {}  # address -> size

    def feed(self, data: bytes) -> None:
        buf = self.buf + data
        pos = 0
        try:
            if not self.header_done:
                pos = self.read_header(buf)
            pos = self.read_entries(buf, pos)
        except IndexError:  # a partial entry: wait for more bytes
            pass
        self.buf = buf[pos:]

    def read_header(self, buf: bytes) -> int:
        if buf[: len(MAGIC)] != MAGIC:
            raise ValueError("not a .bsprof stream")
        pos = len(MAGIC)
        for _ in range(3):  # major, minor, patch
            _, pos = varint(buf, pos)
        size, pos = varint(buf, pos)
        pos += 8  # two float32 sample ratios
        line_data, pos = varint(buf, pos)
        if len(buf) < size:
            raise IndexError
        self.line_data = bool(line_data)
        self.header_done = True
        return size

    def read_entries(self, buf: bytes, pos: int) -> int:
        """Read whole entries from ``pos``; return where the first partial one starts (the
        ``IndexError`` of a cut entry is caught here, so what came before it is kept)."""
        line_data = self.line_data
        paths = self.paths
        live = self.live
        while not self.ended:
            start = pos
            try:
                tag, pos = varint(buf, pos)
                kind = tag & 7
                if kind == 4:  # CPU and wall time
                    if line_data:
                        _, pos = varint(buf, pos)
                    cpu, pos = varint(buf, pos)
                    wall, pos = varint(buf, pos)
                    counters = paths.get(tag >> 3) or self.counters(tag >> 3)
                    counters[0] += cpu
                    counters[1] += wall
                elif kind == 5:  # calls
                    count, pos = varint(buf, pos)
                    (paths.get(tag >> 3) or self.counters(tag >> 3))[2] += count
                elif kind == 3:  # a memory operation
                    path, op = tag >> 5, (tag >> 3) & 3
                    if line_data:
                        _, pos = varint(buf, pos)
                    address, pos = varint(buf, pos)
                    counters = paths.get(path) or self.counters(path)
                    if op == 0:
                        size, pos = varint(buf, pos)
                        counters[3] += 1
                        counters[4] += size
                        live[address] = size
                    else:
                        counters[4 + op] += 1  # a free (1) or a free by realloc (2)
                        freed = live.pop(address, None)
                        if freed is None:
                            counters[8] += 1
                        else:
                            counters[7] += freed
                elif kind == 2:  # a call path
                    caller, pos = varint(buf, pos)
                    module = line_offset = 0
                    if caller == 0:
                        module, pos = varint(buf, pos)
                    elif line_data:
                        line_offset, pos = varint(buf, pos)
                    file_id, pos = varint(buf, pos)
                    line, pos = varint(buf, pos)
                    function, pos = varint(buf, pos)
                    self.parents[tag >> 3] = (caller, module, line_offset, file_id, line, function)
                elif kind == 0:
                    if tag == 0:  # the end marker
                        self.ended = True
                        return pos
                    end = buf.find(b"\x00", pos)
                    if end < 0:
                        raise IndexError
                    self.strings[tag >> 3] = buf[pos:end].decode("utf-8", "replace")
                    pos = end + 1
                elif kind == 1:  # an executable module
                    name, pos = varint(buf, pos)
                    self.modules[tag >> 3] = name
                else:
                    raise ValueError(f"unknown entry type {kind} at byte {start}")
            except IndexError:
                return start
        return pos

    def counters(self, path: int) -> list[int]:
        counters = self.paths[path] = [0] * 9
        return counters


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``buf[pos]`` and where it ends; ``IndexError`` if cut short."""
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
