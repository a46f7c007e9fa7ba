"""How long a name may be where a viewer draws it, and a JSON writer that streams.

A device may name a function or a file with up to 64 KiB of text (the decoder's limit), and an
export may repeat a name once per frame, node or event. So that no output grows with the length
of names, every name a viewer draws (a frame's function and file, a trace event's name, a call
tree node's name) is cut to :data:`NAME_LIMIT` characters: its first ``NAME_LIMIT - 1`` and
:data:`ELLIPSIS`. Where a format has a place for it, the whole name is written once more, in a
table of its own (speedscope's ``wholeNames``; pprof's string table and the report's ``strings``
keep every name whole, once).

:class:`JsonWriter` builds a JSON document piece by piece, in encoded blocks handed over as
they fill (no object graph of the whole document, no copy of its text): the exports that can be
large are generators of those blocks, which the shells write to the file as they come.

Pure: no I/O.
"""

from __future__ import annotations

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
    """Text appended in pieces and encoded to UTF-8 in blocks of about :attr:`BLOCK` characters.

    The blocks wait in :attr:`ready` until :meth:`take` hands them over, so an exporter that is
    a generator yields each block as soon as it is encoded (``if out.ready: yield from
    out.take()``) and never holds more than a block or two of its file.
    """

    BLOCK = 1 << 16

    def __init__(self) -> None:
        self.ready: list[bytes] = []  # encoded blocks not yet taken
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
        """Encode what was appended into a block (even a short one)."""
        if self._parts:
            self.ready.append("".join(self._parts).encode("utf-8"))
            self._parts.clear()
            self._size = 0

    def take(self) -> list[bytes]:
        """The encoded blocks, handed over (the writer keeps none of them)."""
        blocks, self.ready = self.ready, []
        return blocks

    def close(self) -> list[bytes]:
        """Everything not yet taken, the last short block included."""
        self.flush()
        return self.take()
