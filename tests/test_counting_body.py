"""The pure engine's one-pass body (``profile/counting_body.py``) against the two-pass way it
replaced: the decoder's entries (``PythonBody``) applied to ``ProfileTables``. Every answer of
the tables, the status, the offset, the entry count and the error are the same, whatever the
split, on valid, corrupt, stretched and heap-heavy streams, under default and tight limits.
Needs no native core."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from strategies import any_streams, chunk, splits, stretched_streams
from table_views import TIGHT, heap_stream, ids_of, table_view

from rokuprof.bsprof.decoder import Bytes, PythonBody
from rokuprof.bsprof.model import Limits
from rokuprof.profile.counting_body import CountingBody
from rokuprof.profile.engine import PURE, Engine
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.tables import ProfileTables


class TwoPassBody(PythonBody):
    """Decode a feed's entries, then apply them: the pure engine before the one-pass body."""

    def __init__(self, limits: Limits, tables: ProfileTables) -> None:
        super().__init__(limits)
        self.tables = tables

    def feed(self, buf: Bytes, pos: int, base: int) -> int:
        pos = super().feed(buf, pos, base)
        self.tables.apply(self.take())
        return pos


def _open_two_pass(limits: Limits):
    tables = ProfileTables(limits)
    return TwoPassBody(limits, tables), tables


TWO_PASS = Engine("two-pass", _open_two_pass)


def outcome(reader: ProfileReader) -> tuple:
    return (
        reader.status,
        reader.problem(),
        reader.entry_count,
        reader.header,
        reader.footer,
        reader.warnings,
        reader.decoder.offset,
        reader.decoder.state,
    )


def compare(chunks: list[bytes], limits: Limits | None = None) -> None:
    one = ProfileReader(limits, PURE)
    two = ProfileReader(limits, TWO_PASS)
    assert isinstance(one.decoder.body, CountingBody)
    for piece in chunks:
        assert one.feed(piece) == two.feed(piece)
        assert (one.entry_count, one.decoder.offset) == (two.entry_count, two.decoder.offset)
    one.close()
    two.close()
    assert outcome(one) == outcome(two)
    ids = ids_of(two)
    expected = table_view(two.tables, ids)
    for key, value in table_view(one.tables, ids).items():
        assert (key, value) == (key, expected[key])
    assert one.tables.take_delta() == two.tables.take_delta()


@given(st.data(), any_streams(max_actions=60))
def test_any_stream_any_split(data, stream):
    compare(data.draw(splits(stream)))


@given(st.data(), any_streams(max_actions=60))
def test_any_stream_under_tight_limits(data, stream):
    compare(data.draw(splits(stream)), TIGHT)


@given(st.data(), stretched_streams(max_actions=40))
def test_non_minimal_varints(data, stretched):
    compare(data.draw(splits(stretched[1])))


@given(
    st.integers(0, 2**32),
    st.integers(200, 3000),
    st.sampled_from([3, 200, 3000]),
    st.booleans(),
    st.lists(st.integers(1, 60_000), max_size=6),
)
def test_a_busy_heap_with_undefined_paths_and_full_tables(
    seed, operations, addresses, line_data, cuts
):
    chunks = chunk(heap_stream(seed, operations, addresses, line_data), cuts)
    compare(chunks)
    compare(chunks, Limits(max_live_allocations=100, max_line_keys=30))
