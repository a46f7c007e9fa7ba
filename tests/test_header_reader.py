"""The header's fast reader (``bsprof.header_reader``) against the grammar: on generated headers,
whole, cut short and with bytes changed, it reads what the grammar reads, waits where the grammar
waits, and refuses (``NotPlain``, so the grammar decides) rather than accept anything else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.bsprof import reference
from rokuprof.bsprof.errors import BsprofError
from rokuprof.bsprof.header_reader import NotPlain, read_header
from rokuprof.bsprof.model import Limits
from tests.strategies import build_padded_header, header_key, headers

LIMITS = Limits()


def _grammar(data: bytes, limits: Limits = LIMITS):
    """What the grammar makes of ``data``: ("read", header, size), ("wait",) or ("error", ...)."""
    try:
        header, size = reference.parse_header(data, limits)
    except reference.Truncated:
        return ("wait",)
    except BsprofError as error:
        return ("error", type(error), error.offset, error.message)
    return ("read", header_key(header), size)


def _fast(data: bytes, limits: Limits = LIMITS):
    try:
        read = read_header(data, limits)
    except NotPlain:
        return ("refused",)
    if read is None:
        return ("wait",)
    return ("read", header_key(read[0]), read[1])


@settings(max_examples=150, deadline=None)
@given(headers(), st.binary(max_size=6), st.binary(max_size=8))
def test_a_whole_header_is_read_as_the_grammar_reads_it(header, padding, body):
    data = build_padded_header(header, padding)
    fast = _fast(data + body)
    assert fast == _grammar(data + body)
    assert fast[0] == "read" and fast[2] == len(data)


@settings(max_examples=150, deadline=None)
@given(headers(), st.binary(max_size=4), st.data())
def test_cut_or_changed_it_never_disagrees_with_the_grammar(header, padding, data):
    whole = build_padded_header(header, padding)
    raw = bytearray(whole[: data.draw(st.integers(0, len(whole)), label="cut")])
    for _ in range(data.draw(st.integers(0, 3), label="changes")):
        if raw:
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    limits = Limits(max_string_bytes=data.draw(st.integers(0, 30), label="max string"))
    fast, grammar = _fast(bytes(raw), limits), _grammar(bytes(raw), limits)
    if fast != ("refused",):  # stricter than the grammar, never looser
        assert fast == grammar


@pytest.mark.parametrize(
    "data",
    [
        b"bsprof\x00\x01",  # a wrong magic byte
        b"bsprof\x00\x00\x80\x80\x80\x80\x80\x01",  # an over-long varint
        b"bsprof\x00\x00\x01\x00\x00\xff\xff\x7f",  # a header size over the limit
    ],
)
def test_what_the_grammar_has_to_describe_is_refused(data):
    assert _fast(data) == ("refused",)
    assert _grammar(data)[0] == "error"
