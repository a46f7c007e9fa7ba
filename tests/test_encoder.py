"""The fast encoder writes exactly the bytes the construct grammar builds."""

from hypothesis import given
from hypothesis import strategies as st
from strategies import entry_lists, u64s

from rokuprof.bsprof.encoder import encode_entries, encode_varint
from rokuprof.bsprof.grammar import build_entry


@given(st.booleans().flatmap(lambda line: st.tuples(st.just(line), entry_lists(line))))
def test_encoder_matches_grammar(case):
    line_data, entries = case
    expected = b"".join(build_entry(e, line_data) for e in entries)
    assert encode_entries(entries, line_data) == expected


@given(u64s())
def test_varint_roundtrip_length(value):
    encoded = encode_varint(value)
    assert all(b & 0x80 for b in encoded[:-1]) and not encoded[-1] & 0x80
    decoded = sum((b & 0x7F) << (7 * i) for i, b in enumerate(encoded))
    assert decoded == value
