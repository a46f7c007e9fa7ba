"""The fast Decoder against the construct reference parser: same entries, header, footer,
warnings and error (type, offset, message) on valid, truncated and corrupt streams."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    any_streams,
    bad_entries,
    comparable,
    corrupt_streams,
    decode,
    reference_outcome,
    splits,
    streams,
    stretched_streams,
    truncated_streams,
)

from rokuprof.bsprof.model import MAGIC, Limits

TIGHT = Limits(
    max_string_bytes=6,
    max_header_size=120,
    max_strings=5,
    max_modules=2,
    max_paths=6,
    max_string_table_chars=30,
)


def agree(data: bytes, chunks: list[bytes], limits: Limits | None = None) -> None:
    out = decode(chunks, limits)
    assert comparable(out) == reference_outcome(data, limits)
    if out.error is not None:  # offset: where the unreadable entry starts (0 for the header)
        assert out.offset == (out.error[1] if out.header is not None else 0)


@given(st.data(), streams())
def test_valid_streams(data, spec):
    agree(spec.data, data.draw(splits(spec.data)))


@given(st.data(), truncated_streams())
def test_truncated_streams(data, cut):
    agree(cut.data, data.draw(splits(cut.data)))


@given(st.data(), corrupt_streams())
def test_corrupt_streams(data, bad):
    agree(bad.data, data.draw(splits(bad.data)))


@given(st.data(), any_streams(max_actions=40))
def test_tight_limits(data, stream):
    """Small limits make string length, count and header-size errors common."""
    agree(stream, data.draw(splits(stream)), TIGHT)


@given(st.data(), streams(ended=False), st.lists(bad_entries(), max_size=3), st.binary(max_size=40))
def test_bad_entries_followed_by_noise(data, spec, bad, noise):
    stream = spec.data + b"".join(b[1] for b in bad) + noise
    agree(stream, data.draw(splits(stream)))


@given(st.binary(max_size=200))
def test_arbitrary_bytes(data):
    agree(data, [data])


@given(st.data(), st.binary(max_size=200))
def test_arbitrary_bytes_after_the_magic(data, tail):
    stream = MAGIC + tail
    agree(stream, data.draw(splits(stream)))


@given(st.data(), stretched_streams())
def test_non_minimal_varints_decode_to_the_same_entries(data, stretched):
    spec, stream = stretched
    agree(stream, data.draw(splits(stream)))
    assert decode([stream]).entries == spec.entries


@given(st.data(), stretched_streams(overflow=True))
def test_over_long_varints_anywhere_in_the_body(data, stretched):
    _, stream = stretched
    agree(stream, data.draw(splits(stream)))
