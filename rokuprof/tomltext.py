"""TOML text read with its nesting bounded: the one reader of every TOML rokuprof takes (the
daemon's config, a scenario).

:mod:`tomllib` descends once per nested array or inline table, so a file of 50,000 ``[`` ends in
a ``RecursionError`` (a traceback) rather than a parse error. :func:`loads` first measures how
deep the text nests, in one pass that knows TOML's strings and comments, and refuses more than
:data:`MAX_NESTING` levels as :class:`tomllib.TOMLDecodeError` naming the line and column, as
tomllib says any other error. Pure: no I/O.
"""

from __future__ import annotations

import tomllib
from typing import Any

#: Arrays and inline tables nested deeper than this are refused (a config or a scenario needs
#: three or four levels; tomllib itself manages a few hundred).
MAX_NESTING = 100

_OPEN = frozenset("[{")
_CLOSE = frozenset("]}")


class TooDeep(tomllib.TOMLDecodeError):
    """The text nests arrays or inline tables deeper than :data:`MAX_NESTING`."""


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {column}"


def _string_end(text: str, pos: int) -> int:
    """The index after the string opening at ``pos`` (the text's end if it never closes)."""
    quote = text[pos]
    if text.startswith(quote * 3, pos):
        closing, start, escapes = quote * 3, pos + 3, quote == '"'
    else:
        closing, start, escapes = quote, pos + 1, quote == '"'
    i = start
    n = len(text)
    while i < n:
        c = text[i]
        if escapes and c == "\\":
            i += 2
            continue
        if text.startswith(closing, i):
            i += len(closing)
            while len(closing) == 3 and i < n and text[i] == quote:  # up to 2 quotes may end it
                i += 1
            return i
        if len(closing) == 1 and c == "\n":
            return i  # a one-line string does not cross a line; tomllib will say so
        i += 1
    return n


def nesting_error(text: str) -> str | None:
    """Where and how ``text`` nests too deeply, or None. Linear in the text."""
    depth = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in _OPEN:
            depth += 1
            if depth > MAX_NESTING:
                return (
                    f"arrays or tables nested more than {MAX_NESTING} deep (at {_where(text, i)})"
                )
        elif c in _CLOSE:
            depth = max(depth - 1, 0)
        elif c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c in "\"'":
            i = _string_end(text, i)
            continue
        i += 1
    return None


def loads(text: str) -> dict[str, Any]:
    """:func:`tomllib.loads` with the nesting bounded; any problem is a
    :class:`tomllib.TOMLDecodeError` (one line, with where it is)."""
    problem = nesting_error(text)
    if problem is not None:
        raise TooDeep(problem)
    try:
        return tomllib.loads(text)
    except RecursionError:  # not expected under MAX_NESTING; never a traceback
        raise TooDeep(
            f"arrays or tables nested too deeply for this reader (over {MAX_NESTING})"
        ) from None
