"""Folded stacks: ``thread;root;...;leaf N`` per distinct stack, ``N`` an integer (flamegraph.pl,
speedscope, Pyroscope).

``N`` is the exact self value of the call paths with that stack for one metric: wall time, CPU,
calls, allocated bytes, or live bytes at the end. A frame is named ``function (file:line)`` so
that functions of the same name in different files stay apart; ``;`` inside names becomes
``_``, and every control character (U+0000-U+001F, U+007F-U+009F: line breaks, tabs, escape
sequences) becomes ``\\xNN``, always, so the output is plain text for the folded readers and
never drives a terminal it is printed to; a function or file name longer than
:data:`~rokuprof.export.names.NAME_LIMIT` characters is cut with an ellipsis, so that no line
grows with the length of names. Stacks whose value is 0 are left out. Made from the tables alone
(:class:`~rokuprof.export.aggregate.AggregateInput`): no timeline.
"""

from __future__ import annotations

from collections.abc import Iterator

from rokuprof.export.aggregate import AnyInput
from rokuprof.export.model import Frame, frame_label
from rokuprof.export.names import drawn

_FIELDS = {
    "wall": "wall",
    "cpu": "cpu",
    "calls": "calls",
    "alloc_bytes": "alloc_bytes",
    "live_bytes": "live_bytes",
}
_CONTROLS = [*range(0x20), *range(0x7F, 0xA0)]
_CLEAN = str.maketrans({";": "_"} | {chr(c): f"\\x{c:02x}" for c in _CONTROLS})


def clean(name: str) -> str:
    return name.translate(_CLEAN)


def stacks(inp: AnyInput, metric: str = "wall") -> dict[str, int]:
    """``{folded stack: value}`` in first-seen order."""
    try:
        attr = _FIELDS[metric]
    except KeyError:
        raise ValueError(f"unknown metric {metric!r} (one of {', '.join(_FIELDS)})") from None
    labels = [
        clean(frame_label(Frame(drawn(f.function), drawn(f.file), f.line))) for f in inp.frames
    ]
    threads = {t: clean(drawn(name)) for t, name in inp.threads.items()}
    out: dict[str, int] = {}
    for p in inp.paths:
        value = getattr(p, attr)
        if not value:
            continue
        key = ";".join([threads[p.thread], *(labels[f] for f in reversed(p.frames))])
        out[key] = out.get(key, 0) + value
    return out


def export(inp: AnyInput, metric: str = "wall") -> bytes:
    return b"".join(pieces(inp, metric))


def pieces(inp: AnyInput, metric: str = "wall", block: int = 1 << 16) -> Iterator[bytes]:
    """:func:`export`'s lines in blocks of UTF-8 of about ``block`` characters."""
    lines: list[str] = []
    size = 0
    for k, v in stacks(inp, metric).items():
        line = f"{k} {v}\n"
        lines.append(line)
        size += len(line)
        if size >= block:
            yield "".join(lines).encode("utf-8")
            lines.clear()
            size = 0
    if lines:
        yield "".join(lines).encode("utf-8")
