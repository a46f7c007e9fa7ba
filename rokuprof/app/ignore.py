"""What a ``.rokuignore`` at an app's root leaves out of its package: gitignore-like patterns.

Supported, as git reads them: one pattern a line; blank lines and ``#`` comments are skipped
(``\\#`` for a leading ``#``), trailing spaces dropped; ``*`` (any characters but ``/``), ``?``,
``[abc]``/``[!a-z]`` classes, ``**`` (``**/x``, ``x/**``, ``a/**/b``), ``\\`` escapes; a pattern
ending in ``/`` matches directories only; a pattern with a ``/`` at its start or middle is
anchored at the app's root (``/out``), one without matches a name at any depth (``*.psd``);
``!pattern`` takes a path back, the last matching line wins. As in git, a path inside an
ignored directory cannot be taken back (the directory is not even read).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dirs_only: bool


def _class(pattern: str, start: int) -> tuple[str, int] | None:
    """The regex of the ``[...]`` class opening at ``start``, and the index after it."""
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
    return ("[^/" if negate else "[") + body + "]", i + 1


def _translate(pattern: str) -> str:
    """A glob (no leading ``/``, no trailing ``/``) as a regex for a whole relative path."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*" and pattern.startswith("**", i):
            at_start = i == 0 or pattern[i - 1] == "/"
            if at_start and pattern.startswith("**/", i):
                out.append("(?:.*/)?")
                i += 3
                continue
            if at_start and i + 2 == n:
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (cls := _class(pattern, i)) is not None:
            out.append(cls[0])
            i = cls[1]
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _rule(line: str) -> _Rule | None:
    line = line.rstrip("\r\n")
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate or line.startswith(("\\#", "\\!")):
        line = line[1:]
    dirs_only = line.endswith("/")
    line = line.rstrip("/")
    anchored = "/" in line
    line = line.lstrip("/")
    if not line:
        return None
    prefix = "" if anchored else "(?:.*/)?"
    return _Rule(re.compile(f"{prefix}{_translate(line)}", re.DOTALL), negate, dirs_only)


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
        verdict = False
        for rule in self._rules:
            if rule.dirs_only and not is_dir:
                continue
            if rule.regex.fullmatch(path):
                verdict = not rule.negate
        return verdict
