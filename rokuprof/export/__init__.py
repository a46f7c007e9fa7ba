"""Exporters: a decoded ``.bsprof`` as the files other profilers' viewers read (pure core).

Every exporter is a function ``ExportInput -> bytes`` with no I/O and no clock, fed by the same
:class:`~rokuprof.export.model.ExportInput` (the profile tables' exact counters and the synthetic
timeline of the Sentry chunks), so every view agrees with ``inspect`` and with the chunks::

    inp = input_from_bytes(Path("run.bsprof").read_bytes())
    Path("run.pb.gz").write_bytes(export(inp, "pprof"))

:data:`FORMATS` lists the formats; :func:`export_parts` also serves ``sentry-v1``, which is
several files (a profile, its transaction and an envelope per segment of at most 30 s), and
``cpuprofile``, a file per thread.
:func:`export_pieces` gives a one-file format's bytes in pieces as they are made (the timeline
formats, whose files can be far larger than their input, are generators of blocks), for the
shells to write to a file or standard output without holding the whole file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from importlib import import_module

from rokuprof.export.model import (
    CallPath,
    ExportInput,
    Frame,
    Timeline,
    build_input,
    frame_label,
    function_key,
    input_from_bytes,
)
from rokuprof.export_names import FORMATS as FORMATS  # their home: export_names
from rokuprof.export_names import METRICS as METRICS
from rokuprof.export_names import ExporterInfo as ExporterInfo

#: A file's content: its bytes, or its bytes in pieces (joined, the same bytes).
Content = bytes | Iterable[bytes]


class UnknownFormat(ValueError):
    pass


def _exporter(fmt: str) -> Callable[..., bytes | dict[str, bytes]]:
    info = FORMATS.get(fmt)
    if info is None:
        raise UnknownFormat(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
    return import_module(f"rokuprof.export.{info.module}").export


def export_parts(inp: ExportInput, fmt: str, *, metric: str = "wall") -> dict[str, bytes]:
    """The files of one format: ``{relative name: bytes}``; ``{"": bytes}`` for a format that is
    one file."""
    options = {"metric": metric} if fmt == "folded" else {}
    out = _exporter(fmt)(inp, **options)
    return out if isinstance(out, dict) else {"": out}


def export_pieces(inp: ExportInput, fmt: str, *, metric: str = "wall") -> Iterator[bytes]:
    """A one-file format's bytes in pieces, made as they are asked for: the formats whose file
    can be large (``speedscope``, ``chrome-trace``, ``folded``) yield blocks of it as they are
    encoded, so that a writer never holds the whole file; the others yield it whole. The
    pieces joined are :func:`export`'s bytes."""
    info = FORMATS.get(fmt)
    if info is None or info.multi_file or info.per_thread:
        raise UnknownFormat(f"{fmt!r} is not a one-file export format")
    options = {"metric": metric} if fmt == "folded" else {}
    module = import_module(f"rokuprof.export.{info.module}")
    pieces = getattr(module, "pieces", None)
    if pieces is not None:
        yield from pieces(inp, **options)
    else:
        yield module.export(inp, **options)


def export_with_notes(
    inp: ExportInput, fmt: str, *, metric: str = "wall"
) -> tuple[dict[str, Content], list[str]]:
    """One format's files, as :func:`export_parts` names them, and what the format left out,
    one short sentence each (only ``sentry-v1`` leaves anything out: profiles Relay would
    refuse, lone samples). A one-file format's content is :func:`export_pieces`: write it
    piece by piece (``store.files.write_atomic_stream``)."""
    if fmt == "sentry-v1":
        from rokuprof.export.sentry_v1 import build

        v1 = build(inp)
        return v1.files(), v1.notes()
    info = FORMATS.get(fmt)
    if info is not None and info.per_thread:
        return dict(import_module(f"rokuprof.export.{info.module}").parts(inp)), []
    _exporter(fmt)  # an unknown format fails here, not when the pieces are written
    return {"": export_pieces(inp, fmt, metric=metric)}, []


def export(inp: ExportInput, fmt: str, *, metric: str = "wall") -> bytes:
    """One format as one file's bytes (``sentry-v1``: a JSON array of its profile payloads;
    ``cpuprofile``: a JSON array of its threads' profiles, in module-ID order)."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r} (one of {', '.join(METRICS)})")
    options = {"metric": metric} if fmt == "folded" else {}
    if FORMATS.get(fmt) and FORMATS[fmt].multi_file:
        from rokuprof.export.sentry_v1 import payloads_json

        return payloads_json(inp)
    out = _exporter(fmt)(inp, **options)
    if isinstance(out, dict):  # one file per thread
        return b"[" + b",".join(out.values()) + b"]"
    return out


__all__ = [
    "FORMATS",
    "METRICS",
    "CallPath",
    "Content",
    "ExportInput",
    "ExporterInfo",
    "Frame",
    "Timeline",
    "UnknownFormat",
    "build_input",
    "export",
    "export_parts",
    "export_pieces",
    "export_with_notes",
    "frame_label",
    "function_key",
    "input_from_bytes",
]
