"""export/interning.py: each distinct item once, in first-seen order, known by its index (the
string table of pprof, the export model's frames)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.export.interning import Interner

# Texts and (function, file, line)-like tuples, drawn from a small alphabet so repeats are common.
_items = st.lists(
    st.one_of(
        st.text(alphabet="ab\x00é", max_size=3),
        st.tuples(st.sampled_from("fg"), st.sampled_from("xy"), st.integers(0, 2)),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(_items)
def test_an_item_is_known_by_the_index_where_it_was_first_seen(items):
    table: Interner = Interner()
    ids = [table.id(item) for item in items]

    first_seen = list(dict.fromkeys(items))
    assert table.items == first_seen
    assert ids == [first_seen.index(item) for item in items]
    assert [table.id(item) for item in first_seen] == list(range(len(first_seen)))
    assert table.items == first_seen  # asking again adds nothing


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=3), unique=True, max_size=10), st.lists(st.text(max_size=3)))
def test_given_a_list_it_interns_into_that_list(existing, more):
    items = list(existing)
    table = Interner(items)

    assert [table.id(text) for text in existing] == list(range(len(existing)))
    for text in more:
        table.id(text)
    assert table.items is items
    assert items[: len(existing)] == existing
    assert items == list(dict.fromkeys([*existing, *more]))


def test_pprofs_string_table_keeps_the_empty_string_at_index_0():
    table = Interner([""])
    assert [table.id(t) for t in ("wall", "", "cpu", "wall")] == [1, 0, 2, 1]
    assert table.items == ["", "wall", "cpu"]
