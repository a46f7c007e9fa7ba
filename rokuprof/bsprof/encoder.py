"""Fast encoding of entry tuples, byte-identical to the construct grammar's build.

The grammar (:mod:`rokuprof.bsprof.grammar`) defines the format and builds streams, but at about
0.5 MB/s; the simulator and the benchmarks need more. This module writes the same bytes by hand
and is tested against the grammar on generated entries. It does not validate: give it entries
the grammar would accept.
"""

from __future__ import annotations

from collections.abc import Iterable

from rokuprof.bsprof.model import ALLOC, CALLS, CPU, MEMORY, MODULE, PATH, STRING, Entry


def _put(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def encode_entries(entries: Iterable[Entry], line_data: bool) -> bytes:
    """The body bytes of ``entries`` (no header, no end marker)."""
    out = bytearray()
    append = out.append
    put = _put
    for e in entries:
        kind = e[0]
        if kind == MEMORY:
            _, path, op, line_offset, address, size = e
            put(out, (path << 5) | (op << 3) | MEMORY)
            if line_data:
                put(out, line_offset)
            put(out, address)
            if op == ALLOC:
                put(out, size)
        elif kind == CPU:
            _, path, line_offset, cpu, wall = e
            put(out, (path << 3) | CPU)
            if line_data:
                put(out, line_offset)
            put(out, cpu)
            put(out, wall)
        elif kind == CALLS:
            put(out, (e[1] << 3) | CALLS)
            put(out, e[2])
        elif kind == PATH:
            _, pid, caller, module, line_offset, file_id, line, function_id = e
            put(out, (pid << 3) | PATH)
            put(out, caller)
            if caller == 0:
                put(out, module)
            elif line_data:
                put(out, line_offset)
            put(out, file_id)
            put(out, line)
            put(out, function_id)
        elif kind == STRING:
            put(out, e[1] << 3)
            out += e[2].encode("utf-8")
            append(0)
        elif kind == MODULE:
            put(out, (e[1] << 3) | MODULE)
            put(out, e[2])
        else:
            raise ValueError(f"not an entry tuple: {e!r}")
    return bytes(out)


def encode_varint(value: int) -> bytes:
    out = bytearray()
    _put(out, value)
    return bytes(out)
