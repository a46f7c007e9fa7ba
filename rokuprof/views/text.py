"""Device text made safe to show: data, never markup, never terminal control.

Everything a device sends (names from the .bsprof string table, header fields, ECP and console
replies, error messages that quote them) passes through :func:`printable` before it reaches a
terminal or a log line, and reaches rich only as a :class:`~rich.text.Text` (:func:`text`,
:func:`error_line`), which rich never parses as markup, so ``[/]`` or ``[link=…]`` stay
literal.

:func:`printable` shows each character a terminal would act on as a Python-style escape:
C0 controls (ESC included), DEL and C1 controls (U+0080–U+009F, e.g. the 8-bit CSI) as
``\\x1b``, ``\\x9b`` (``\\t``, ``\\n``, ``\\r`` for the usual three); bidirectional embeddings,
overrides, isolates and marks, line and paragraph separators, and lone surrogates as
``\\u202e``. Everything else, "Café" or "東京" included, is kept as it is. A backslash is kept
too, so a name that literally contains the four characters ``\\x1b`` looks the same as one with
an ESC in it; ``--json`` output has the exact text.

:func:`json_dumps` writes JSON whose strings decode to the exact original text but which is
just as safe in a terminal: it escapes the same characters as ``\\uXXXX``.
"""

from __future__ import annotations

import json
import re

from rich.text import Text

#: What a terminal may act upon: C0, DEL, C1; the bidi controls (ALM, LRM, RLM, LRE…RLO,
#: LRI…PDI); LINE and PARAGRAPH SEPARATOR; surrogates (never valid text on their own).
_OTHER = "\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
UNSAFE = re.compile(f"[\x00-\x1f{_OTHER}]")
_UNSAFE_MULTILINE = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHER}]")  # keeps \t and \n
_UNSAFE_JSON = re.compile(f"[{_OTHER}]")  # json.dumps escapes C0 itself; indents are \n
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(value: object, *, multiline: bool = False) -> str:
    """``str(value)`` with every terminal control character replaced by a visible escape.

    ``multiline`` keeps newlines and tabs (for a console reply shown as it came); otherwise
    the result is always one line.
    """
    s = value if isinstance(value, str) else str(value)
    pattern = _UNSAFE_MULTILINE if multiline else UNSAFE
    return pattern.sub(_escape, s)


def text(value: object, style: str = "") -> Text:
    """Device text as a rich ``Text``: shown literally, never read as markup."""
    return Text(printable(value), style=style)


def error_line(message: object) -> Text:
    """``error: <message>`` for stderr, with the message shown literally."""
    return Text.assemble(("error:", "red"), " ", printable(message))


def json_dumps(data: object, indent: int | None = None) -> str:
    """JSON of ``data`` (non-ASCII kept readable) with every unsafe character ``\\u``-escaped:
    ``json.loads`` gives back the exact strings, a terminal shows no control sequence."""
    dumped = json.dumps(data, indent=indent, ensure_ascii=False)
    return _UNSAFE_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)
