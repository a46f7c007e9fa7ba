"""The construct grammar: golden bytes from the spec, and build/parse round trips."""

from __future__ import annotations

import dataclasses
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    build_padded_header,
    encode_entry,
    entry_lists,
    header_key,
    headers,
    ids,
    stretched_varint,
    u32s,
    u64s,
    varint,
)

from rokuprof.bsprof import checks, errors, reference
from rokuprof.bsprof.grammar import (
    END_MARKER,
    FooterGrammar,
    GrammarFault,
    HeaderGrammar,
    build_entry,
    build_footer,
    build_header,
    build_stream,
)
from rokuprof.bsprof.model import (
    ALLOC,
    FREE,
    FREE_REALLOC,
    MAGIC,
    MEMORY,
    UINT32_MAX,
    Footer,
    Header,
    Limits,
)

HEADER = Header(
    major=1,
    minor=2,
    patch=3,
    header_size=0,
    requested_sample_ratio=1.0,
    actual_sample_ratio=0.5,
    line_data=True,
    memory_ops=True,
    start_ms=300,
    target_name="A",
    supplemental="",
    target_version="1",
    vendor="R",
    model="M",
    firmware="F",
)
# magic, 1.2.3, header size 35, ratios, flags, start 300, six NUL-terminated strings
HEADER_BYTES = (
    MAGIC
    + b"\x01\x02\x03\x23"
    + struct.pack("<ff", 1.0, 0.5)
    + b"\x01\x01"
    + b"\xac\x02"
    + b"A\x00\x001\x00R\x00M\x00F\x00"
)


def parse_one(data: bytes, line_data: bool, limits: Limits | None = None):
    """Parse one entry from the start of ``data`` with the reference parser."""
    limits = limits or Limits()
    return reference.parse_entry(data, 0, line_data, limits, checks.DefinitionLimits(limits))


def first_varint(data: bytes) -> int:
    value = shift = 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value
    raise AssertionError("no complete varint")


# --- header, end marker, footer ---------------------------------------------------------------


def test_header_golden_bytes():
    assert len(HEADER_BYTES) == 0x23
    assert build_header(HEADER) == HEADER_BYTES
    header, size = reference.parse_header(HEADER_BYTES, Limits())
    assert size == 0x23
    assert header == dataclasses.replace(HEADER, header_size=0x23)
    assert header.version == "1.2.3"


def test_header_padded_with_zeros_up_to_pad_to():
    padded = build_header(HEADER, pad_to=40)
    assert padded == HEADER_BYTES[:11] + b"\x28" + HEADER_BYTES[12:] + b"\x00" * 5
    header, size = reference.parse_header(padded + b"\x08x\x00", Limits())
    assert size == 40
    assert header.header_size == 40


def test_header_size_varint_may_grow_with_padding():
    padded = build_header(HEADER, pad_to=200)
    assert len(padded) == 200
    assert padded[11:13] == varint(200)
    assert HeaderGrammar.parse(padded).fields_end == len(HEADER_BYTES) + 1


def test_header_skips_unknown_bytes_up_to_header_size():
    data = build_padded_header(HEADER, b"\xffnew fields\x01\x02")
    data += build_entry((0, 1, "main"), True) + END_MARKER + b"\x07"
    result = reference.parse(data)
    assert result.error is None
    assert result.header.header_size == len(HEADER_BYTES) + 13
    assert result.entries == [(0, 1, "main")]
    assert result.footer == Footer(7, 0)


@given(headers(), st.none() | st.binary(min_size=1, max_size=300))
def test_header_round_trip(header, padding):
    data = build_padded_header(header, padding)
    parsed, size = reference.parse_header(data + b"\x00", Limits())
    assert size == len(data)
    assert header_key(parsed) == header_key(dataclasses.replace(header, header_size=size))


def test_header_fields_past_header_size_are_a_bad_header():
    data = HEADER_BYTES[:11] + b"\x20" + HEADER_BYTES[12:]
    with pytest.raises(errors.BadHeader) as raised:
        reference.parse_header(data, Limits())
    assert raised.value.offset == 0
    assert raised.value.message == "header fields run past the header size of 32 bytes"


def test_header_shorter_than_header_size_is_truncated():
    with pytest.raises(reference.Truncated):
        reference.parse_header(build_header(HEADER, pad_to=60)[:59], Limits())


def test_end_marker_and_footer():
    assert END_MARKER == b"\x00"
    assert parse_one(END_MARKER, True) == (None, 1)
    assert build_footer(Footer(300)) == b"\xac\x02"
    assert build_footer(Footer(2**64 - 1)) == b"\xff" * 9 + b"\x01"
    assert FooterGrammar.parse(b"\xac\x02\x99").end_ms == 300


@given(u64s())
def test_footer_round_trip(end_ms):
    assert FooterGrammar.parse(build_footer(Footer(end_ms))).end_ms == end_ms


def test_whole_stream_layout():
    entries = [(0, 1, "f"), (5, 7, 1)]
    data = build_stream(HEADER, entries, Footer(9))
    assert data == HEADER_BYTES + b"\x08f\x00" + b"\x3d\x01" + b"\x00" + b"\x09"
    assert build_stream(HEADER, entries, Footer(9), end=False) == data[:-2]
    assert build_stream(HEADER, entries) == data[:-1]


# --- every entry type, both line-flag settings ------------------------------------------------

GOLDEN = [
    # (entry, line_data, bytes)
    ((0, 1, "hé"), False, b"\x08h\xc3\xa9\x00"),
    ((0, 1, "hé"), True, b"\x08h\xc3\xa9\x00"),
    ((0, 16, ""), True, b"\x80\x01\x00"),
    ((1, 2, 1), False, b"\x11\x01"),
    ((1, 2, 1), True, b"\x11\x01"),
    ((2, 3, 0, 2, 0, 1, 10, 1), False, b"\x1a\x00\x02\x01\x0a\x01"),
    ((2, 3, 0, 2, 0, 1, 10, 1), True, b"\x1a\x00\x02\x01\x0a\x01"),
    ((2, 4, 3, 0, 0, 1, 300, 1), False, b"\x22\x03\x01\xac\x02\x01"),
    ((2, 4, 3, 0, 5, 1, 300, 1), True, b"\x22\x03\x05\x01\xac\x02\x01"),
    ((3, 1, ALLOC, 0, 0x1000, 64), False, b"\x23\x80\x20\x40"),
    ((3, 1, ALLOC, 7, 0x1000, 64), True, b"\x23\x07\x80\x20\x40"),
    ((3, 1, FREE, 0, 0x1000, 0), False, b"\x2b\x80\x20"),
    ((3, 1, FREE, 7, 0x1000, 0), True, b"\x2b\x07\x80\x20"),
    ((3, 1, FREE_REALLOC, 0, 5, 0), False, b"\x33\x05"),
    ((3, 1, FREE_REALLOC, 2, 5, 0), True, b"\x33\x02\x05"),
    ((4, 5, 0, 1000, 20), False, b"\x2c\xe8\x07\x14"),
    ((4, 5, 2, 1000, 20), True, b"\x2c\x02\xe8\x07\x14"),
    ((5, 5, 3), False, b"\x2d\x03"),
    ((5, 5, 3), True, b"\x2d\x03"),
    ((5, UINT32_MAX, UINT32_MAX), True, varint(UINT32_MAX << 3 | 5) + b"\xff\xff\xff\xff\x0f"),
]


@pytest.mark.parametrize(("entry", "line_data", "encoded"), GOLDEN)
def test_entry_golden_bytes(entry, line_data, encoded):
    assert build_entry(entry, line_data) == encoded
    assert parse_one(encoded + b"\xee", line_data) == (entry, len(encoded))


@pytest.mark.parametrize("line_data", [False, True])
@given(data=st.data())
def test_every_entry_round_trips(line_data, data):
    entries = data.draw(entry_lists(line_data, memory_ops=True, max_actions=40))
    for entry in entries:
        encoded = build_entry(entry, line_data)
        assert parse_one(encoded, line_data) == (entry, len(encoded))


@given(u32s(), st.sampled_from([ALLOC, FREE, FREE_REALLOC]), st.booleans())
def test_memory_tag_layout(path, op, line_data):
    """Bits 36..5 path, 4..3 operation, 2..0 = 3."""
    entry = (MEMORY, path, op, 1 if line_data else 0, 77, 9 if op == ALLOC else 0)
    encoded = build_entry(entry, line_data)
    tag = first_varint(encoded)
    assert tag & 0b111 == MEMORY
    assert (tag >> 3) & 0b11 == op
    assert tag >> 5 == path
    assert tag == path << 5 | op << 3 | 3
    assert parse_one(encoded, line_data) == (entry, len(encoded))


def test_memory_tag_uses_all_37_bits():
    encoded = build_entry((MEMORY, UINT32_MAX, FREE_REALLOC, 0, 1, 0), False)
    assert first_varint(encoded) == UINT32_MAX << 5 | 0b10_011  # op 2 in bits 4..3, type 3
    assert len(encoded) == 6 + 1


@given(ids(), st.sampled_from([0, 1, 2, 4, 5]))
def test_tag_payload_is_the_id_above_three_type_bits(ident, kind):
    entry = {
        0: (0, ident, "x"),
        1: (1, ident, 1),
        2: (2, ident, 0, 1, 0, 1, 1, 1),
        4: (4, ident, 0, 1, 1),
        5: (5, ident, 1),
    }[kind]
    assert first_varint(build_entry(entry, False)) == ident << 3 | kind


# --- building refuses what parsing would reject ----------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        (1, 0, 1),  # module ID 0
        (2, 0, 0, 1, 0, 1, 1, 1),  # path ID 0
        (3, 1, 3, 0, 1, 0),  # memory operation 3
        (4, 2**32, 0, 1, 1),  # path ID over 32 bits
        (5, 1, 2**32),  # count over 32 bits
        (0, 1, "a\x00b"),  # NUL inside a string
    ],
)
def test_build_refuses_invalid_entries(entry):
    with pytest.raises(GrammarFault):
        build_entry(entry, True)


def test_string_length_limit_is_inclusive():
    limits = Limits(max_string_bytes=4)
    assert parse_one(b"\x08abcd\x00", False, limits) == ((0, 1, "abcd"), 6)
    with pytest.raises(errors.LimitExceeded) as raised:
        parse_one(b"\x08abcde\x00", False, limits)
    assert raised.value.message == "string length exceeds the limit of 4"


def test_invalid_utf8_is_replaced_not_refused():
    assert parse_one(b"\x08a\xffb\x00", False) == ((0, 1, "a\ufffdb"), 5)


# --- an independent hand encoder agrees with the grammar --------------------------------------


@pytest.mark.parametrize("line_data", [False, True])
@given(data=st.data())
def test_hand_encoder_matches_the_grammar(line_data, data):
    for entry in data.draw(entry_lists(line_data, memory_ops=True, max_actions=40)):
        assert encode_entry(entry, line_data) == build_entry(entry, line_data)


@pytest.mark.parametrize(
    ("width", "value"), [(5, 0), (5, UINT32_MAX), (2, 1), (4, 300), (3, 2**14)]
)
def test_non_minimal_field_varints_are_accepted(width, value):
    encoded = b"\x2d" + stretched_varint(value, width)  # call count on path 5
    assert len(encoded) == 1 + width
    assert parse_one(encoded, False) == ((5, 5, value), len(encoded))


def test_field_varint_of_six_bytes_is_corrupt():
    with pytest.raises(errors.CorruptVarint) as raised:
        parse_one(b"\x2d" + stretched_varint(1, 6), False)
    assert raised.value.message == "count: varint longer than 5 bytes"
