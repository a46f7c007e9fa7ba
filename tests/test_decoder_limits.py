"""Limits: hostile or broken streams get a clear error (or documented behaviour) and the
decoder's memory stays bounded however the bytes arrive."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import decode, reference_outcome, splits, streams, varint

from rokuprof.bsprof import errors
from rokuprof.bsprof.decoder import Decoder
from rokuprof.bsprof.grammar import build_entry, build_header, build_stream
from rokuprof.bsprof.model import MAGIC, UINT32_MAX, Footer, Header, Limits
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.tables import ProfileTables

HEADER = Header(1, 0, 0, 0, 1.0, 1.0, False, True, 0, "app", "", "1", "Roku", "4800X", "12")
HEAD = build_header(HEADER)
MB = 1024 * 1024


def feed_pieces(decoder: Decoder, data: bytes, size: int) -> int:
    """Feed ``data`` in ``size``-byte pieces; return the largest internal buffer seen."""
    largest = 0
    for i in range(0, len(data), size):
        decoder.feed(data[i : i + size])
        largest = max(largest, len(decoder._buf))
    return largest


def body(*entries) -> bytes:
    return b"".join(build_entry(e, False) for e in entries)


# --- endless varints --------------------------------------------------------------------------


def test_endless_tag_varint_is_corrupt_and_costs_nothing():
    decoder = Decoder()
    decoder.feed(HEAD)
    assert feed_pieces(decoder, b"\x80" * 64, 1) <= 10  # one byte at a time: at most a tag
    assert decoder.error == errors.CorruptVarint(
        len(HEAD), "entry tag: varint longer than 10 bytes"
    )
    assert feed_pieces(decoder, b"\x80" * (2 * MB), 4096) == 0  # after the error: nothing kept
    assert decoder.status == "corrupt"
    assert decoder.received == len(HEAD) + 64 + 2 * MB


def test_endless_field_varint_is_corrupt():
    data = HEAD + body((0, 1, "f")) + b"\x2c" + b"\x80" * 100
    out = decode([data])
    at = len(HEAD) + 3
    assert out.error == (errors.CorruptVarint, at, "cpu: varint longer than 5 bytes")
    assert out.entries == ((0, 1, "f"),)


def test_endless_header_varint_is_corrupt():
    decoder = Decoder()
    assert feed_pieces(decoder, MAGIC + b"\x80" * MB, 1000) == 0
    assert decoder.error == errors.CorruptVarint(0, "major version: varint longer than 5 bytes")


def test_endless_footer_varint_is_corrupt():
    data = HEAD + b"\x00" + b"\x80" * 1000
    out = decode([data])
    assert out.error == (
        errors.CorruptVarint,
        len(HEAD) + 1,
        "end timestamp: varint longer than 10 bytes",
    )
    assert out.ended


# --- strings and header size ------------------------------------------------------------------


def test_giant_string_without_nul_is_refused_with_a_bounded_buffer():
    limits = Limits()
    decoder = Decoder(limits)
    decoder.feed(HEAD + body((0, 1, "ok")))
    start = decoder.offset
    largest = feed_pieces(decoder, b"\x10" + b"a" * (2 * MB), 1000)
    assert largest <= limits.max_string_bytes + 16
    assert decoder.error == errors.LimitExceeded(start, "string length", None, 65536)
    assert decoder.error.message == "string length exceeds the limit of 65536"
    assert decoder.entry_count == 1


def test_string_of_exactly_the_limit_fed_in_small_pieces_is_accepted():
    limits = Limits(max_string_bytes=5000)
    text = "é" * 2500  # 5000 bytes of UTF-8
    data = HEAD + body((0, 1, text)) + b"\x00\x01"
    decoder = Decoder(limits)
    largest = feed_pieces(decoder, data, 7)
    assert largest <= 5000 + 16
    assert decoder.status == "complete"
    assert decode([data], limits).entries == ((0, 1, text),)


def test_header_size_over_the_limit_is_refused_at_once():
    limits = Limits(max_header_size=1000)
    head = build_header(HEADER, pad_to=1001)
    decoder = Decoder(limits)
    decoder.feed(head[:20])  # only the first fields: enough to know the size
    assert decoder.error == errors.LimitExceeded(0, "header size", 1001, 1000)
    assert decoder.error.message == "header size 1001 exceeds the limit of 1000"
    assert decode([head], limits).error[:2] == (errors.LimitExceeded, 0)


def test_header_waits_for_header_size_bytes_with_a_bounded_buffer():
    limits = Limits()
    head = build_header(HEADER, pad_to=limits.max_header_size)
    decoder = Decoder(limits)
    largest = feed_pieces(decoder, head + b"\x00\x05", 3000)
    assert largest <= limits.max_header_size
    assert decoder.header.header_size == limits.max_header_size
    assert decoder.status == "complete"


def test_nul_less_header_string_is_a_bad_header():
    fields = build_header(dataclasses.replace(HEADER, firmware="x" * 5000))
    data = fields[: len(fields) - 1] + b"y" * 100  # drop the last NUL; header size stays
    out = decode([data])
    assert out.error == (
        errors.BadHeader,
        0,
        f"header fields run past the header size of {len(fields)} bytes",
    )


# --- definitions: counts and IDs --------------------------------------------------------------

DEFINITIONS = {
    "strings": lambda i: (0, i, "s"),
    "modules": lambda i: (1, i, 1),
    "paths": lambda i: (2, i, 0, 1, 0, 1, 1, 1),
}


@pytest.mark.parametrize(("kind", "type_"), [("strings", 0), ("modules", 1), ("paths", 2)])
def test_too_many_definitions(kind, type_):
    limits = Limits(**{f"max_{kind}": 3})
    entries = [(0, 1, "s"), (1, 1, 1)] if kind != "strings" else []
    entries += [DEFINITIONS[kind](i) for i in range(2, 7)]
    bad = [i for i, e in enumerate(entries) if e[0] == type_][3]  # the fourth definition
    data = build_stream(HEADER, entries, end=False)
    at = len(build_stream(HEADER, entries[:bad], end=False))
    out = decode([data[i : i + 1] for i in range(len(data))], limits)
    assert out.error == (errors.LimitExceeded, at, f"number of {kind} 4 exceeds the limit of 3")
    assert out.entries == tuple(entries[:bad])
    assert reference_outcome(data, limits)["error"] == out.error


TOP = UINT32_MAX  # the largest ID the format allows (IDs are uint32, 0 is reserved)

#: Every entry kind with IDs at the top of the range (and one just below a varint length step).
TOP_ENTRIES = [
    (0, TOP, "main"),
    (0, TOP - 1, "pkg:/source/main.brs"),
    (0, 2**28 - 1, "helper"),
    (1, TOP, TOP),
    (2, TOP, 0, TOP, 0, TOP - 1, 10, TOP),
    (2, 2**28 - 1, TOP, 0, 0, TOP - 1, 20, 2**28 - 1),
    (4, TOP, 0, 300, 1_500_000),
    (4, 2**28 - 1, 0, 200, 1_500_000),
    (5, TOP, 3),
    (3, TOP, 0, 0, TOP, 64),
    (3, 2**28 - 1, 1, 0, TOP, 0),
]


@pytest.mark.engine
def test_ids_take_the_whole_uint32_range():
    data = build_stream(HEADER, TOP_ENTRIES, Footer(3_000))
    out = decode([data[i : i + 1] for i in range(len(data))])
    assert out.status == "complete" and out.error is None
    assert out.entries == tuple(TOP_ENTRIES)
    assert reference_outcome(data)["entries"] == out.entries
    tables = ProfileReader.from_bytes(data).tables
    assert [n.id for n in tables.stack(2**28 - 1)] == [2**28 - 1, TOP]
    assert tables.module_name(tables.stack(TOP)[0].module) == "main"
    assert tables.stats(TOP).calls == 3 and tables.stats(2**28 - 1).free_count == 1
    assert tables.totals().freed_bytes == 64 and tables.dangling == 0


@pytest.mark.parametrize("kind", [0, 1, 2, 4, 5])
def test_an_id_over_32_bits_is_a_corrupt_tag(kind):
    ok = build_stream(HEADER, TOP_ENTRIES[:5], end=False)
    data = ok + varint((TOP + 1) << 3 | kind) + b"\x01\x01\x01\x01\x01\x01"
    out = decode([data])
    assert out.error == (errors.CorruptVarint, len(ok), errors.TAG_PAYLOAD_TOO_LARGE)
    assert reference_outcome(data)["error"] == out.error


@pytest.mark.engine
def test_a_file_with_ids_up_to_2_32_minus_1_converts(tmp_path):
    from typer.testing import CliRunner

    from rokuprof.cli import app

    source = tmp_path / "top-ids.bsprof"
    source.write_bytes(build_stream(HEADER, TOP_ENTRIES, Footer(3_000)))
    result = CliRunner().invoke(app, ["convert", str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    [chunk_file] = sorted((tmp_path / "out" / "chunks").iterdir())
    profile = json.loads(chunk_file.read_text())["profile"]
    assert {s["thread_id"] for s in profile["samples"]} == {str(TOP)}
    assert profile["thread_metadata"][str(TOP)]["name"] == "main"
    names = {f["function"] for f in profile["frames"]}
    assert names == {"main", "helper"}


def test_redefinitions_count_against_the_limit():
    limits = Limits(max_strings=2)
    out = decode([build_stream(HEADER, [(0, 1, "a"), (0, 1, "b"), (0, 1, "c")])], limits)
    assert out.error[0] is errors.LimitExceeded
    assert len(out.entries) == 2


def test_string_table_size_is_bounded():
    limits = Limits(max_string_table_chars=10)
    entries = [(0, 1, "abcd"), (0, 2, "éééé"), (0, 3, "xyz")]  # 4 + 4 + 3 characters
    ok = build_stream(HEADER, entries[:2], end=False)
    data = build_stream(HEADER, entries, end=False)
    out = decode([data[i : i + 1] for i in range(len(data))], limits)
    assert out.entries == tuple(entries[:2])
    assert out.error == (
        errors.LimitExceeded,
        len(ok),
        "string table size (characters) 11 exceeds the limit of 10",
    )
    assert reference_outcome(data, limits)["error"] == out.error


@given(st.data(), streams(ended=True, footer=True))
def test_buffer_never_holds_more_than_one_partial_entry(data, spec):
    longest = max(
        [spec.header_end, len(spec.data) - spec.body_end]
        + [b - a for a, b in zip(spec.entry_starts, spec.entry_ends, strict=True)]
    )
    decoder = Decoder()
    for piece in data.draw(splits(spec.data)):
        decoder.feed(piece)
        assert len(decoder._buf) < max(longest, 1)
    assert decoder.status == "complete"


# --- live allocations -------------------------------------------------------------------------


def test_live_allocations_over_the_limit_are_counted_not_tracked():
    tables = ProfileTables(Limits(max_live_allocations=3))
    tables.apply([(2, 1, 0, 1, 0, 1, 1, 1)])
    tables.apply([(3, 1, 0, 0, 0x100 + i, 10 + i) for i in range(5)])
    totals = tables.totals()
    assert totals.alloc_count == 5
    assert totals.alloc_bytes == 10 + 11 + 12 + 13 + 14
    assert totals.live_count == 3
    assert totals.live_bytes == 10 + 11 + 12
    assert len(tables.heap) == 3
    assert tables.untracked_allocations == 2
    assert len(tables.warnings) == 1
    assert "live-heap tracking stopped at 3 allocations" in tables.warnings[0]
    # a free of an untracked allocation is an unknown free; a tracked free makes room again
    tables.apply([(3, 1, 1, 0, 0x104, 0), (3, 1, 1, 0, 0x100, 0), (3, 1, 0, 0, 0x200, 7)])
    totals = tables.totals()
    assert (totals.unknown_frees, totals.free_count, totals.freed_bytes) == (1, 2, 10)
    assert (totals.live_count, totals.live_bytes) == (3, 11 + 12 + 7)
    assert len(tables.warnings) == 1


@pytest.mark.engine
def test_reader_reports_the_heap_limit_warning():
    entries = [(2, 1, 0, 1, 0, 1, 1, 1)] + [(3, 1, 0, 0, i, 1) for i in range(10)]
    reader = ProfileReader.from_bytes(
        build_stream(HEADER, entries, end=False) + varint(0), Limits(max_live_allocations=4)
    )
    assert reader.tables.totals().alloc_count == 10
    assert len(reader.tables.heap) == 4
    assert any("live-heap tracking stopped" in w for w in reader.warnings)
