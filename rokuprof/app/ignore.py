"""What a ``.rokuignore`` at an app's root leaves out of its package: gitignore-like patterns.

Supported, as git reads them: one pattern a line; blank lines and ``#`` comments are skipped
(``\\#`` for a leading ``#``), trailing spaces dropped; ``*`` (any characters but ``/``), ``?``,
``[abc]``/``[!a-z]`` classes, ``**`` (``**/x``, ``x/**``, ``a/**/b``), ``\\`` escapes; a pattern
ending in ``/`` matches directories only; a pattern with a ``/`` at its start or middle is
anchored at the app's root (``/out``), one without matches a name at any depth (``*.psd``);
``!pattern`` takes a path back, the last matching line wins. As in git, a path inside an
ignored directory cannot be taken back (the directory is not even read).

Matching never backtracks: each pattern is a small automaton (one state per pattern element)
run over the path's characters with the set of states it can be in, so one match costs at most
O(pattern × path) steps whatever the stars (``*a*a*a*a*a*a*a*a*a*a*a*a*b`` against 60 ``a``
is 60 steps, where a backtracking regex took minutes). The transitions seen are remembered per
pattern (up to :data:`MAX_REMEMBERED` of them), so the many paths of an app cost about one
dictionary look-up per character.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

#: Transitions (state set, character) remembered per pattern before the memory is cleared.
MAX_REMEMBERED = 4096

# Kinds of pattern element.
_LIT = 0  # one given character
_ONE = 1  # one character but "/" that a class (or "?") accepts
_STAR = 2  # "*": any characters but "/"
_ANY = 3  # a trailing "/**": any characters
_DIRS = 4  # a leading or inner "**/": nothing, or any characters ending in "/"


@dataclass(frozen=True)
class _Element:
    kind: int
    char: str = ""
    accepts: re.Pattern[str] | None = None  # _ONE: the class, for one character


_ANY_ONE = _Element(_ONE)


def _class(pattern: str, start: int) -> tuple[_Element, int] | None:
    """The ``[...]`` class opening at ``start`` and the index after it (None: not a class)."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    body_start = i
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 1
    if i >= len(pattern):
        return None
    body = pattern[body_start:i]
    body = body.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    # A one-character class: matching it cannot backtrack.
    accepts = re.compile(("[^" if negate else "[") + body + "]", re.DOTALL)
    return _Element(_ONE, accepts=accepts), i + 1


def _elements(pattern: str) -> tuple[_Element, ...]:
    """A glob (no leading ``/``, no trailing ``/``) as the elements of its automaton."""
    out: list[_Element] = []
    i, n = 0, len(pattern)
    # git compares the pattern's literal prefix (up to its first special character) on its own
    # and matches the rest from there, so stars right after that prefix count as at the start.
    prefix = next((k for k, ch in enumerate(pattern) if ch in "*?[\\"), n)
    while i < n:
        c = pattern[i]
        if c == "*":
            # A run of stars is one "*", except two or more that start a path element (after a
            # "/", the start, or the literal prefix) and end one (at a "/" or the end): "**", as
            # git reads "****" too.
            end = i
            while end < n and pattern[end] == "*":
                end += 1
            whole = end - i > 1 and (i in (0, prefix) or pattern[i - 1] == "/")
            if whole and pattern.startswith("/", end):
                out.append(_Element(_DIRS))
                i = end + 1
            elif whole and end == n:
                out.append(_Element(_ANY))
                i = end
            else:
                out.append(_Element(_STAR))
                i = end
        elif c == "?":
            out.append(_ANY_ONE)
            i += 1
        elif c == "[" and (cls := _class(pattern, i)) is not None:
            out.append(cls[0])
            i = cls[1]
        elif c == "\\" and i + 1 < n:
            out.append(_Element(_LIT, pattern[i + 1]))
            i += 2
        else:
            out.append(_Element(_LIT, c))
            i += 1
    return tuple(out)


@dataclass
class _Matcher:
    """One pattern's automaton. State ``2k`` is "before element k" (``2·len`` accepts); state
    ``2k+1`` is "inside the ``**/`` element k, its ``/`` still to come"."""

    elements: tuple[_Element, ...]
    _start: frozenset[int] = field(init=False)
    _seen: dict[tuple[frozenset[int], str], frozenset[int]] = field(init=False)

    def __post_init__(self) -> None:
        self._accept = 2 * len(self.elements)
        self._start = self._closure({0})
        self._seen = {}

    def _closure(self, states: Iterable[int]) -> frozenset[int]:
        """``states`` and every state reached from them by an element that may match nothing."""
        found = set(states)
        todo = [s for s in found if not s & 1]
        while todo:
            k = todo.pop() >> 1
            if k < len(self.elements) and self.elements[k].kind in (_STAR, _ANY, _DIRS):
                after = 2 * (k + 1)
                if after not in found:
                    found.add(after)
                    todo.append(after)
        return frozenset(found)

    def _step(self, states: frozenset[int], c: str) -> frozenset[int]:
        after: set[int] = set()
        slash = c == "/"
        for state in states:
            k = state >> 1
            if k >= len(self.elements):
                continue
            element = self.elements[k]
            kind = element.kind
            if kind == _LIT:
                if c == element.char:
                    after.add(state + 2)
            elif kind == _ONE:
                if not slash and (element.accepts is None or element.accepts.fullmatch(c)):
                    after.add(state + 2)
            elif kind == _STAR:
                if not slash:
                    after.add(state)
            elif kind == _ANY:
                after.add(state)
            else:  # _DIRS, before it or inside it: any character, and after a "/" it is done
                after.add(2 * k + 1)
                if slash:
                    after.add(2 * (k + 1))
        return self._closure(after)

    def matches(self, text: str) -> bool:
        """Whether the whole of ``text`` matches: O(len(elements) × len(text)) at most."""
        states = self._start
        seen = self._seen
        for c in text:
            key = (states, c)
            following = seen.get(key)
            if following is None:
                if len(seen) >= MAX_REMEMBERED:
                    seen.clear()
                following = seen[key] = self._step(states, c)
            states = following
            if not states:
                return False
        return self._accept in states


@dataclass(frozen=True)
class _Rule:
    matcher: _Matcher
    negate: bool
    dirs_only: bool
    #: Not anchored (no "/" in the pattern): it matches the path's last name, at any depth.
    name_only: bool


def _rule(line: str) -> _Rule | None:
    line = line.rstrip("\r\n")
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate or line.startswith(("\\#", "\\!")):
        line = line[1:]
    # git takes off one trailing "/" (directories only) and one leading "/" (anchored): "a//"
    # and "//a" keep a "/" that no path name matches.
    dirs_only = line.endswith("/")
    line = line.removesuffix("/")
    anchored = "/" in line
    line = line.removeprefix("/")
    if not line:
        return None
    # Without a "/", no element but a lone "**" crosses one, so matching the last name is the
    # same as matching "any directories, then the pattern" against the whole path.
    return _Rule(_Matcher(_elements(line)), negate, dirs_only, not anchored)


class IgnoreRules:
    """The patterns of one ``.rokuignore``; ask :meth:`ignored` about each path, parents first."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._rules = [rule for line in lines if (rule := _rule(line)) is not None]

    @classmethod
    def parse(cls, text: str) -> IgnoreRules:
        return cls(text.removeprefix("\ufeff").split("\n"))

    def __bool__(self) -> bool:
        return bool(self._rules)

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (relative to the app's root, ``/``-separated) is left out."""
        name = path.rpartition("/")[2]
        verdict = False
        for rule in self._rules:
            if rule.dirs_only and not is_dir:
                continue
            if rule.matcher.matches(name if rule.name_only else path):
                verdict = not rule.negate
        return verdict
