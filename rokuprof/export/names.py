"""How long a name may be where a viewer draws it, and a JSON writer that streams.

A device may name a function or a file with up to 64 KiB of text (the decoder's limit), and an
export may repeat a name once per frame, node or event. So that no output grows with the length
of names, every name a viewer draws (a frame's function and file, a trace event's name, a call
tree node's name) is cut to :data:`NAME_LIMIT` characters: its first ``NAME_LIMIT - 1`` and
:data:`ELLIPSIS`. Where a format has a place for it, the whole name is written once more, in a
table of its own (speedscope's ``wholeNames``; pprof's string table and the report's ``strings``
keep every name whole, once).

:class:`JsonWriter` builds a JSON document piece by piece into one buffer (no object graph of
the whole document, no second copy of its text), for the exports that are large.

Pure: no I/O.
"""

from __future__ import annotations

import io
import json

#: The most characters of a name a viewer is given to draw (a function, a file).
NAME_LIMIT = 256
ELLIPSIS = "…"


def drawn(text: str, limit: int = NAME_LIMIT) -> str:
    """``text`` as a viewer draws it: whole if it has at most ``limit`` characters, else its
    first ``limit - 1`` and an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def is_cut(text: str, limit: int = NAME_LIMIT) -> bool:
    return len(text) > limit


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def dumps(value: object) -> str:
    """Compact JSON text of a small value (no NaN, UTF-8 kept)."""
    return _encode(value)


class JsonWriter:
    """Text appended in pieces and encoded to UTF-8 in blocks of about :attr:`BLOCK` characters
    into one growing buffer; :meth:`getvalue` hands the buffer over without a copy."""

    BLOCK = 1 << 16

    def __init__(self) -> None:
        self._out = io.BytesIO()
        self._parts: list[str] = []
        self._size = 0

    def raw(self, text: str) -> None:
        """Append JSON text as it is."""
        self._parts.append(text)
        self._size += len(text)
        if self._size >= self.BLOCK:
            self.flush()

    def value(self, value: object) -> None:
        """Append a value as compact JSON."""
        self.raw(_encode(value))

    def flush(self) -> None:
        if self._parts:
            self._out.write("".join(self._parts).encode("utf-8"))
            self._parts.clear()
            self._size = 0

    def getvalue(self) -> bytes:
        self.flush()
        return self._out.getvalue()
