"""The incremental Decoder: split invariance, truncation, robustness, versions, footer."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    StreamSpec,
    any_streams,
    corrupt_streams,
    decode,
    header_key,
    splits,
    streams,
    truncated_streams,
)

from rokuprof.bsprof import errors
from rokuprof.bsprof.decoder import Decoder
from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import MAGIC, SUPPORTED_MAJOR, Footer, Header

DOCUMENTED = (
    errors.BadMagic,
    errors.BadHeader,
    errors.CorruptVarint,
    errors.InvalidValue,
    errors.UnknownEntryType,
    errors.LimitExceeded,
)

HEADER = Header(
    major=SUPPORTED_MAJOR,
    minor=2,
    patch=3,
    header_size=0,
    requested_sample_ratio=1.0,
    actual_sample_ratio=0.5,
    line_data=True,
    memory_ops=True,
    start_ms=1_700_000_000_000,
    target_name="Demo",
    supplemental="",
    target_version="1.0.0",
    vendor="Roku",
    model="4800X",
    firmware="12.5",
)
ENTRIES = [
    (0, 1, "main"),
    (0, 2, "pkg:/source/main.brs"),
    (1, 1, 1),
    (2, 1, 0, 1, 0, 2, 10, 1),
    (4, 1, 3, 500, 700),
    (5, 1, 2),
]


def _header_len(header: Header = HEADER) -> int:
    return len(build_stream(header, [], end=False))


# --- split invariance -------------------------------------------------------------------------


@given(st.data(), any_streams())
def test_any_split_gives_the_same_outcome(data, stream):
    whole = decode([stream])
    assert decode(data.draw(splits(stream))) == whole
    assert decode([stream[i : i + 1] for i in range(len(stream))]) == whole


@given(st.data(), any_streams())
def test_split_invariance_holds_before_close_too(data, stream):
    whole = decode([stream], close=False)
    assert decode(data.draw(splits(stream)), close=False) == whole
    assert whole.status in ("streaming", "complete", "corrupt")


# --- valid, truncated and corrupt streams -----------------------------------------------------


@given(streams())
def test_valid_stream_decodes_to_what_was_built(spec: StreamSpec):
    out = decode([spec.data])
    assert out.entries == spec.entries
    assert out.entry_count == len(spec.entries)
    assert out.header == header_key(spec.header)
    assert out.footer == spec.footer
    assert out.error is None
    assert out.ended == spec.ended
    assert out.status == spec.status
    expected_offset = len(spec.data) if spec.footer else spec.body_end + spec.ended
    assert out.offset == expected_offset


@given(truncated_streams())
def test_a_cut_stream_keeps_every_whole_entry_before_the_cut(cut):
    out = decode([cut.data])
    header, entries, ended, footer = cut.spec.after_cut(cut.at)
    assert out.error is None
    assert out.header == header_key(header)
    assert out.entries == tuple(entries)
    assert out.ended == ended
    assert out.footer == footer
    if cut.spec.footer_end is None or cut.at < cut.spec.footer_end:
        assert out.status == "incomplete"
    else:  # cut inside the trailing bytes: the footer is whole
        assert out.status == "complete"


@given(corrupt_streams())
def test_injected_bad_entry_is_reported_where_it_starts(bad):
    out = decode([bad.data])
    if bad.error_type is None:  # blind damage: just the documented contract
        assert out.error is None or issubclass(out.error[0], DOCUMENTED)
        return
    assert out.error is not None, bad.how
    assert out.error[:2] == (bad.error_type, bad.at), (bad.how, out.error)
    kept = [
        e for e, end in zip(bad.spec.entries, bad.spec.entry_ends, strict=True) if end <= bad.at
    ]
    assert out.entries == tuple(kept)
    assert out.status == "corrupt"
    assert out.offset == bad.at


# --- robustness -------------------------------------------------------------------------------


def _check_contract(data: bytes) -> Decoder:
    decoder = Decoder()
    entries = []
    for piece in (data[: len(data) // 2], data[len(data) // 2 :]):
        entries.extend(decoder.feed(piece))
    decoder.close()
    assert decoder.entry_count == len(entries)
    assert decoder.received == len(data)
    assert decoder.status in ("complete", "incomplete", "corrupt")
    if decoder.error is not None:
        assert isinstance(decoder.error, DOCUMENTED)
        assert 0 <= decoder.error.offset <= len(data)
        assert decoder.offset == (decoder.error.offset if decoder.header is not None else 0)
        assert decoder.status == "corrupt"
        assert decoder.error.message
    return decoder


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(data):
    _check_contract(data)


@given(st.binary(max_size=300))
def test_arbitrary_bytes_after_the_magic_never_raise(data):
    _check_contract(MAGIC + data)


@given(streams(ended=False), st.binary(max_size=300))
def test_arbitrary_bytes_after_valid_entries_keep_those_entries(spec, garbage):
    decoder = _check_contract(spec.data + garbage)
    # Every entry before the garbage is decoded, whatever the garbage does afterwards.
    out = decode([spec.data + garbage])
    assert out.entries[: len(spec.entries)] == spec.entries
    assert decoder.header == spec.header or header_key(decoder.header) == header_key(spec.header)


def test_empty_input_is_incomplete_without_header():
    decoder = Decoder()
    assert decoder.feed(b"") == []
    assert decoder.status == "streaming"
    decoder.close()
    assert decoder.status == "incomplete"
    assert decoder.header is None
    assert decoder.error is None


@pytest.mark.parametrize("at", range(len(MAGIC)))
def test_bad_magic_names_the_first_wrong_byte(at):
    data = bytearray(build_stream(HEADER, ENTRIES))
    data[at] ^= 0x40
    out = decode([bytes(data)])
    assert out.error == (
        errors.BadMagic,
        at,
        f"not a .bsprof stream: byte {at} is 0x{data[at]:02x}, expected 0x{MAGIC[at]:02x}",
    )
    assert out.entries == ()
    assert out.header is None


def test_bad_magic_is_seen_before_the_rest_of_the_header_arrives():
    decoder = Decoder()
    decoder.feed(b"bsp")
    assert decoder.error is None
    decoder.feed(b"X")
    assert isinstance(decoder.error, errors.BadMagic)
    assert decoder.error.offset == 3


def test_header_size_smaller_than_its_fields_is_a_bad_header():
    good = build_stream(HEADER, [], end=False)
    size_at = len(MAGIC) + 3  # major, minor, patch are one byte each here
    assert good[size_at] == len(good)
    data = good[:size_at] + bytes([len(good) - 1]) + good[size_at + 1 :]
    out = decode([data])
    assert out.error[0] is errors.BadHeader
    assert out.error[1] == 0
    assert out.error[2] == f"header fields run past the header size of {len(good) - 1} bytes"


def test_feed_after_close_is_a_state_error():
    decoder = Decoder()
    decoder.close()
    with pytest.raises(errors.DecoderStateError):
        decoder.feed(b"x")


def test_accepts_bytearray_and_memoryview():
    data = build_stream(HEADER, ENTRIES, Footer(1))
    decoder = Decoder()
    got = decoder.feed(bytearray(data[:40])) + decoder.feed(memoryview(data)[40:])
    assert got == ENTRIES
    assert decoder.status == "complete"


# --- versions, end marker, footer -------------------------------------------------------------


@given(st.integers(0, 2**32 - 1).filter(lambda m: m != SUPPORTED_MAJOR))
def test_other_major_versions_are_read_with_a_warning(major):
    header = dataclasses.replace(HEADER, major=major)
    decoder = Decoder()
    assert decoder.feed(build_stream(header, ENTRIES, Footer(5))) == ENTRIES
    assert decoder.status == "complete"
    assert len(decoder.warnings) == 1
    assert f"{major}.2.3" in decoder.warnings[0]
    assert decoder.header.major == major


def test_supported_major_gives_no_warning():
    decoder = Decoder()
    decoder.feed(build_stream(HEADER, ENTRIES, Footer(5)))
    assert decoder.warnings == []


def test_footer_is_read_after_the_end_marker_and_trailing_bytes_counted():
    data = build_stream(HEADER, ENTRIES, Footer(1_700_000_123_456))
    decoder = Decoder()
    decoder.feed(data[:-1])
    assert decoder.ended
    assert decoder.footer is None
    assert decoder.status == "streaming"
    decoder.feed(data[-1:] + b"\x01\x02")
    assert decoder.footer == Footer(1_700_000_123_456, 2)
    assert decoder.status == "complete"
    assert decoder.feed(b"\xff" * 5) == []
    assert decoder.footer == Footer(1_700_000_123_456, 7)
    decoder.close()
    assert decoder.status == "complete"
    assert decoder.offset == decoder.received == len(data) + 7


def test_end_marker_without_footer_is_incomplete():
    data = build_stream(HEADER, ENTRIES)
    decoder = Decoder()
    assert decoder.feed(data) == ENTRIES
    decoder.close()
    assert decoder.ended
    assert decoder.status == "incomplete"
    assert decoder.footer is None


def test_end_marker_may_be_an_overlong_zero_varint():
    data = build_stream(HEADER, ENTRIES, end=False) + b"\x80\x00" + b"\x05"
    out = decode([data])
    assert out.footer == Footer(5, 0)
    assert out.status == "complete"


def test_offset_after_an_error_does_not_depend_on_the_split():
    data = build_stream(HEADER, ENTRIES, end=False) + b"\x06"
    whole = decode([data])
    assert whole.error[:2] == (errors.UnknownEntryType, len(data) - 1)
    assert whole.offset == len(data) - 1
    assert decode([data[i : i + 1] for i in range(len(data))]) == whole


def test_offset_after_trailing_bytes_does_not_depend_on_the_split():
    data = build_stream(HEADER, ENTRIES, Footer(5)) + b"xyz"
    whole = decode([data])
    assert whole.offset == len(data)
    assert decode([data[:-3], data[-3:]]) == whole
