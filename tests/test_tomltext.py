"""rokuprof.tomltext: TOML with its nesting bounded. Over generated documents whose strings and
comments are full of brackets and quotes, it reads what tomllib reads up to the limit and refuses
more than it with a line and column, never a RecursionError."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.tomltext import MAX_NESTING, TooDeep, loads

TRICKY = "[]{}#'\"\\ab\n"


def basic(text: str) -> str:
    out = "".join(
        "\\\\" if c == "\\" else '\\"' if c == '"' else "\\n" if c == "\n" else c for c in text
    )
    return f'"{out}"'


def string(text: str, form: int) -> str:
    """``text`` as a TOML string of one of four forms (a form that cannot hold it: basic)."""
    if form == 1 and "'" not in text and "\n" not in text:
        return f"'{text}'"
    if form == 2 and "'''" not in text and not text.endswith("'"):
        return f"'''{text}'''"
    if form == 3:
        return '"""' + basic(text)[1:-1].replace("\\n", "\n") + '"""'
    return basic(text)


LEAF = st.one_of(
    st.integers(-5, 5).map(str),
    st.builds(string, st.text(TRICKY, max_size=6), st.integers(0, 3)),
)


def value(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    array = st.lists(children, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")
    table = st.lists(children, max_size=3).map(
        lambda xs: "{" + ", ".join(f"k{i} = {x}" for i, x in enumerate(xs)) + "}"
    )
    return array | table


VALUE = st.recursive(LEAF, value, max_leaves=12)
COMMENT = st.text("[]{}#'\"ab ", max_size=8).map(lambda text: f"  # {text}")


def depth(text: str) -> int:
    """How deep a generated value nests (its strings and comments are read by tomllib)."""
    parsed = tomllib.loads(f"x = {text}\n")["x"]

    def down(item: object) -> int:
        if isinstance(item, list):
            return 1 + max((down(x) for x in item), default=0)
        if isinstance(item, dict):
            return 1 + max((down(x) for x in item.values()), default=0)
        return 0

    return down(parsed)


@settings(max_examples=150)
@given(VALUE, COMMENT, st.integers(0, MAX_NESTING + 3))
def test_reads_what_tomllib_reads_up_to_the_limit_and_refuses_past_it(
    inner: str, comment: str, wraps: int
) -> None:
    text = "[" * wraps + inner + "]" * wraps
    document = f"{comment}\nx = {text}{comment}\n[t]\ny = 'z'\n"
    if depth(inner) + wraps <= MAX_NESTING:
        assert loads(document) == tomllib.loads(document)
    else:
        with pytest.raises(TooDeep, match=r"^arrays or tables nested more than 100 deep \(at "):
            loads(document)


def test_the_limit_is_exact_and_says_where() -> None:
    assert loads("a = " + "[" * 100 + "]" * 100) == tomllib.loads("a = " + "[" * 100 + "]" * 100)
    with pytest.raises(TooDeep) as info:
        loads("\n\nb = [1, " + "[" * 101)
    assert str(info.value) == "arrays or tables nested more than 100 deep (at line 3, column 108)"
    assert isinstance(info.value, tomllib.TOMLDecodeError)  # a caller's one "not valid TOML"


def test_fifty_thousand_levels_are_refused_not_a_recursion_error() -> None:
    for opener in ("[", "{a = "):
        with pytest.raises(TooDeep):
            loads("a = " + opener * 50_000)
