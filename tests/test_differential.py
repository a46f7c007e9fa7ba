"""Each engine's decoding against the construct reference parser: same entries, header,
footer, warnings and error (type, offset, message) on valid, truncated and corrupt streams,
whatever the split; and the native engine against the pure decoder on every observable answer
(status, offset, entry count too).

The native core runs in record mode, so its entries can be compared one by one.
"""

from __future__ import annotations

import pytest
from conftest import engine_for
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    Outcome,
    any_streams,
    bad_entries,
    comparable,
    corrupt_streams,
    decode,
    outcome_of,
    reference_outcome,
    splits,
    streams,
    stretched_streams,
    truncated_streams,
)
from table_views import TIGHT

from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import MAGIC, Footer, Header, Limits
from rokuprof.profile.engine import PURE, Engine


@pytest.fixture(scope="module", params=["native", "native-queued", "pure"])
def engine(request):
    """Each engine, and the native core with its look-ahead queue taking every entry."""
    yield from engine_for(request.param)


def decode_on(engine: Engine, chunks, limits: Limits | None = None, close: bool = True) -> Outcome:
    """:func:`strategies.decode` on ``engine`` (the native core in record mode)."""
    if engine is PURE:
        return decode(chunks, limits, close)
    from rokuprof._native.reader import NativeDecoder

    decoder = NativeDecoder(limits, record=True)
    entries = []
    for piece in chunks:
        count = decoder.feed(piece)
        got = decoder.take_entries()
        assert count == len(got)
        entries.extend(got)
    if close:
        decoder.close()
    return outcome_of(decoder, entries)


def agree(engine: Engine, data: bytes, chunks: list[bytes], limits: Limits | None = None) -> None:
    """Split as given == whole == reference (== the pure decoder, for the native engine)."""
    out = decode_on(engine, chunks, limits)
    assert comparable(out) == reference_outcome(data, limits)
    if out.error is not None:  # offset: where the unreadable entry starts (0 for the header)
        assert out.offset == (out.error[1] if out.header is not None else 0)
    assert out == decode_on(engine, [data], limits)
    if engine is not PURE:
        assert out == decode(chunks, limits)


@given(st.data(), streams())
def test_valid_streams(engine, data, spec):
    agree(engine, spec.data, data.draw(splits(spec.data)))


@given(st.data(), truncated_streams())
def test_truncated_streams(engine, data, cut):
    agree(engine, cut.data, data.draw(splits(cut.data)))


@given(st.data(), corrupt_streams())
def test_corrupt_streams(engine, data, bad):
    agree(engine, bad.data, data.draw(splits(bad.data)))


@given(st.data(), any_streams(max_actions=40))
def test_tight_limits(engine, data, stream):
    """Small limits make string length, count and header-size errors common."""
    agree(engine, stream, data.draw(splits(stream)), TIGHT)


@given(st.data(), streams(ended=False), st.lists(bad_entries(), max_size=3), st.binary(max_size=40))
def test_bad_entries_followed_by_noise(engine, data, spec, bad, noise):
    stream = spec.data + b"".join(b[1] for b in bad) + noise
    agree(engine, stream, data.draw(splits(stream)))


@given(st.binary(max_size=200))
def test_arbitrary_bytes(engine, data):
    agree(engine, data, [data])


@given(st.data(), st.binary(max_size=200))
def test_arbitrary_bytes_after_the_magic(engine, data, tail):
    stream = MAGIC + tail
    agree(engine, stream, data.draw(splits(stream)))


@given(st.data(), stretched_streams())
def test_non_minimal_varints_decode_to_the_same_entries(engine, data, stretched):
    spec, stream = stretched
    agree(engine, stream, data.draw(splits(stream)))
    assert decode_on(engine, [stream]).entries == spec.entries


@given(st.data(), stretched_streams(overflow=True))
def test_over_long_varints_anywhere_in_the_body(engine, data, stretched):
    _, stream = stretched
    agree(engine, stream, data.draw(splits(stream)))


@given(st.data(), any_streams())
def test_split_invariance_holds_before_close_too(engine, data, stream):
    chunks = data.draw(splits(stream))
    out = decode_on(engine, chunks, close=False)
    assert out == decode_on(engine, [stream], close=False) == decode(chunks, close=False)


def test_a_long_string_fed_byte_by_byte_is_accepted_at_the_limit(engine):
    limits = Limits(max_string_bytes=5000)
    header = Header(1, 0, 0, 0, 1.0, 1.0, False, False, 0, "a", "", "1", "R", "X", "1")
    text = "ü" * 2500  # 5000 bytes
    data = build_stream(header, [(0, 1, text), (0, 2, "x" * 10)], Footer(5))
    out = decode_on(engine, [data[i : i + 1] for i in range(len(data))], limits)
    assert out.status == "complete" and out.entries[0] == (0, 1, text)
    too_long = build_stream(header, [(0, 1, text + "a")], Footer(5))
    out = decode_on(engine, [too_long[i : i + 3] for i in range(0, len(too_long), 3)], limits)
    assert out.error is not None and out.error[2] == "string length exceeds the limit of 5000"
    assert out == decode([too_long], limits)


def test_a_rejected_entry_is_explained_by_the_grammar_with_the_definition_counts(engine):
    limits = Limits(max_paths=2)
    header = Header(1, 0, 0, 0, 1.0, 1.0, False, False, 0, "a", "", "1", "R", "X", "1")
    entries = [(0, 1, "f"), (1, 1, 1)] + [(2, i, 0, 1, 0, 1, 1, 1) for i in (5, 5, 6)]
    data = build_stream(header, entries)
    out = decode_on(engine, [data[i : i + 2] for i in range(0, len(data), 2)], limits)
    assert out.error[2] == "number of paths 3 exceeds the limit of 2"
    assert out == decode([data], limits)


def test_accepts_bytearray_and_memoryview(engine):
    header = Header(1, 0, 0, 0, 1.0, 1.0, True, True, 0, "a", "", "1", "R", "X", "1")
    entries = [(0, 1, "main"), (1, 1, 1), (2, 1, 0, 1, 0, 1, 10, 1), (4, 1, 3, 500, 700)]
    data = build_stream(header, entries, Footer(7))
    pieces = [bytearray(data[:30]), memoryview(data)[30:41], memoryview(bytearray(data[41:]))]
    assert decode_on(engine, pieces) == decode_on(engine, [data]) == decode([data])
    assert decode_on(engine, pieces).entries == tuple(entries)
