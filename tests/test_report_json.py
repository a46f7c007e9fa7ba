"""The report's data is written as the json module writes it, byte for byte, though its long
lists of integers go through orjson (``page._dumps``): over generated models (nested dicts and
lists of integers past 64 bits, floats orjson would write otherwise, strings, the marker itself,
booleans, nulls, number arrays), with the length that counts as long taken small so that every
branch runs; and on a real model, whose text and page are unchanged."""

from __future__ import annotations

import json
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.export import input_from_bytes
from rokuprof.export.report import page
from rokuprof.export.report.model import build_model
from tests.strategies import streams


def by_json(data):
    return json.dumps(
        data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=page._plain
    )


SCALARS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(0, 2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),  # 1e-05: orjson writes 0.00001
    st.text(max_size=4),
    st.sampled_from(["\0rokuprof-json\0", "\\u0000", True, False, None]),
)
ARRAYS = st.one_of(
    st.lists(st.integers(0, 2**63 - 1), max_size=6).map(lambda v: array("q", v)),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=4).map(
        lambda v: array("d", v)
    ),
)
#: Integers with now and then a float orjson writes in other digits (1e-05 as 0.00001).
NUMBERS = st.lists(
    st.one_of(st.integers(-(2**65), 2**65), st.sampled_from([1e-05, 2.5e-07, 0.5, 1e16])),
    max_size=6,
)
MODELS = st.recursive(
    st.one_of(SCALARS, ARRAYS, NUMBERS),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(MODELS, st.integers(0, 4))
def test_the_text_is_the_json_modules(model, long):
    assert page._dumps(model, long) == by_json(model)


def test_a_string_that_reads_as_the_marker_is_written_as_itself():
    ints = list(range(2000))
    for model in (
        {"a": ints, "b": "\0rokuprof-json\0"},
        {"\0rokuprof-json\0": ints},
        ["\0rokuprof-json\0", ints, "x\0rokuprof-json\0"],
    ):
        assert page._dumps(model) == by_json(model)


@settings(max_examples=10, deadline=None)
@given(streams(memory_ops=True))
def test_a_real_models_page_is_unchanged(spec):
    model = build_model(input_from_bytes(spec.data))
    assert page._dumps(model, 1) == page._dumps(model) == by_json(model)
