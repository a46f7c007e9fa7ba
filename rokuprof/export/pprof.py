"""pprof: gzip-compressed protobuf ``perftools.profiles.Profile`` (``go tool pprof``, Pyroscope,
Parca, speedscope).

One sample per call path carries its exact counters; with line data the leaf's CPU, wall time and
allocations are split over samples at the leaf's real source lines (``function line + line
offset - 1``), and what no line claimed stays at the function's first line. Callers are located
at the line they made the call from. Sample types, in order: ``cpu/operations``, ``wall/<unit>``,
``calls/count``, ``alloc_objects/count``, ``alloc_space/bytes``, ``inuse_objects/count``,
``inuse_space/bytes`` (the live heap at the end); ``wall`` is the default. Each sample has a
``thread`` label (the executable module). There is exactly one Mapping and every Location points
at it; ``string_table[0]`` is ``""``; the threads' names follow the sample types in module-ID
order. Made from the tables alone (:class:`~rokuprof.export.aggregate.AggregateInput`): no
timeline.
"""

from __future__ import annotations

import gzip

from rokuprof.export.aggregate import AnyInput
from rokuprof.export.interning import Interner
from rokuprof.export.protobuf import (
    bytes_field,
    int_field,
    packed_varints,
    required_int_field,
    string_field,
)

# perftools.profiles.Profile field numbers
_SAMPLE_TYPE, _SAMPLE, _MAPPING, _LOCATION, _FUNCTION, _STRING_TABLE = 1, 2, 3, 4, 5, 6
_TIME_NANOS, _DURATION_NANOS, _PERIOD_TYPE, _PERIOD, _COMMENT, _DEFAULT_SAMPLE_TYPE = (
    9,
    10,
    11,
    12,
    13,
    14,
)

MAPPING_ID = 1


def sample_types(inp: AnyInput) -> list[tuple[str, str]]:
    return [
        ("cpu", "operations"),
        ("wall", inp.run.wall_unit_name),
        ("calls", "count"),
        ("alloc_objects", "count"),
        ("alloc_space", "bytes"),
        ("inuse_objects", "count"),
        ("inuse_space", "bytes"),
    ]


def export(inp: AnyInput) -> bytes:
    return gzip.compress(encode(inp), compresslevel=6, mtime=0)


def encode(inp: AnyInput) -> bytes:
    """The uncompressed protobuf message."""
    strings = Interner([""])  # pprof's string table: "" first, at index 0
    s = strings.id
    out = bytearray()
    types = sample_types(inp)
    for name, unit in types:
        out += bytes_field(_SAMPLE_TYPE, int_field(1, s(name)) + int_field(2, s(unit)))

    functions: dict[int, int] = {}  # frame index -> function ID
    locations: dict[tuple[int, int], int] = {}  # (frame index, line) -> location ID
    function_msgs = bytearray()
    location_msgs = bytearray()
    frames = inp.frames

    def location(frame: int, line: int) -> int:
        nonlocal function_msgs, location_msgs
        loc = locations.get((frame, line))
        if loc is not None:
            return loc
        fid = functions.get(frame)
        if fid is None:
            fid = functions[frame] = len(functions) + 1
            f = frames[frame]
            name = s(f.function)
            function_msgs += bytes_field(
                _FUNCTION,
                required_int_field(1, fid)
                + int_field(2, name)
                + int_field(3, name)
                + int_field(4, s(f.file))
                + int_field(5, f.line),
            )
        loc = locations[(frame, line)] = len(locations) + 1
        line_msg = required_int_field(1, fid) + int_field(2, line)
        location_msgs += bytes_field(
            _LOCATION,
            required_int_field(1, loc) + int_field(2, MAPPING_ID) + bytes_field(4, line_msg),
        )
        return loc

    thread_key = s("thread")
    labels = {  # in module-ID order, however the input came to know its threads
        t: bytes_field(3, int_field(1, thread_key) + int_field(2, s(inp.threads[t])))
        for t in sorted(inp.threads)
    }
    for p in inp.paths:
        callers = [location(f, line) for f, line in zip(p.frames[1:], p.lines[1:], strict=True)]
        label = labels[p.thread]
        values = [p.cpu, p.wall, p.calls, p.alloc_count, p.alloc_bytes, p.live_count, p.live_bytes]
        for line, at_line in _by_line(p).items():
            for i, v in enumerate(at_line):
                values[i] -= v
            if any(at_line):
                out += _sample([location(p.frames[0], line), *callers], at_line, label)
        if any(values):
            out += _sample([location(p.frames[0], p.lines[0]), *callers], values, label)

    mapping_name = inp.run.app or "brightscript"
    if inp.run.app_version:
        mapping_name += f"@{inp.run.app_version}"
    out += bytes_field(
        _MAPPING,
        int_field(1, MAPPING_ID)
        + int_field(5, s(mapping_name))
        + int_field(7, 1)  # has_functions
        + int_field(8, 1)  # has_filenames
        + int_field(9, 1 if inp.run.line_data else 0),  # has_line_numbers
    )
    out += location_msgs
    out += function_msgs
    note = f"rokuprof export; input {inp.run.status}"
    comment = s(f"{note}: {inp.run.problem}" if inp.run.problem else note)
    if inp.run.start is not None:
        out += int_field(_TIME_NANOS, round(inp.run.start * 1e9))
        out += int_field(_DURATION_NANOS, round(inp.run.duration * 1e9))
    out += bytes_field(_PERIOD_TYPE, int_field(1, s("wall")) + int_field(2, s(types[1][1])))
    out += int_field(_PERIOD, 1)
    out += int_field(_COMMENT, comment)
    out += int_field(_DEFAULT_SAMPLE_TYPE, s("wall"))
    table = b"".join(string_field(_STRING_TABLE, text) for text in strings.items)
    return table + bytes(out)


def _by_line(p) -> dict[int, list[int]]:
    """The leaf's figures per source line, in line order: ``[cpu, wall, 0, allocs, bytes]``."""
    out: dict[int, list[int]] = {}
    for line, cpu, wall in p.line_cpu:
        v = out.setdefault(line, [0, 0, 0, 0, 0])
        v[0] += cpu
        v[1] += wall
    for line, count, size in p.line_alloc:
        v = out.setdefault(line, [0, 0, 0, 0, 0])
        v[3] += count
        v[4] += size
    return dict(sorted(out.items()))


def _sample(locations: list[int], values: list[int], label: bytes) -> bytes:
    values = values + [0] * (7 - len(values))
    return bytes_field(_SAMPLE, packed_varints(1, locations) + packed_varints(2, values) + label)
