"""Body engines of :class:`~rokuprof.profile.reader.ProfileReader`, and which one it uses.

An engine decodes a stream's body and counts it into tables: :data:`PURE` (the Python body
loop, :class:`~rokuprof.profile.counting_body.CountingBody`, counting into
:class:`~rokuprof.profile.tables.ProfileTables`) or the native core (C, decoding and
counting in one pass; :func:`native`). Both give identical answers. :func:`select` picks the
engine of new readers; it is the only place that reads ``ROKUPROF_PURE_PYTHON``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rokuprof import _native
from rokuprof.bsprof.decoder import BodyEngine
from rokuprof.bsprof.model import Limits
from rokuprof.profile.counting_body import CountingBody
from rokuprof.profile.protocol import TablesView
from rokuprof.profile.tables import ProfileTables

if _native.built():
    from rokuprof._native.reader import NativeBody

#: Set (to anything but empty or ``0``) to make new readers use the pure-Python engine.
PURE_PYTHON_VARIABLE = "ROKUPROF_PURE_PYTHON"


@dataclass(frozen=True)
class Engine:
    """A named way to read a body: ``open(limits)`` gives a body engine and the tables it
    fills as it is fed."""

    name: str  # "native" or "pure"
    open: Callable[[Limits], tuple[BodyEngine, TablesView]]


def _open_pure(limits: Limits) -> tuple[BodyEngine, TablesView]:
    tables = ProfileTables(limits)
    return CountingBody(limits, tables), tables


def _open_native(limits: Limits) -> tuple[BodyEngine, TablesView]:
    body = NativeBody(limits)
    return body, body.tables


PURE = Engine("pure", _open_pure)
NATIVE = Engine("native", _open_native)


def native() -> Engine | None:
    """The native engine, or ``None`` when the extension is not built (``pip install .`` builds
    it when a C compiler is available)."""
    return NATIVE if _native.built() else None


def select(environ: Mapping[str, str] | None = None) -> Engine:
    """The engine new readers use: the native one when it is built, unless
    ``ROKUPROF_PURE_PYTHON`` is set to anything but empty or ``0`` (in ``environ``, by default
    the process environment)."""
    env = os.environ if environ is None else environ
    if env.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return PURE
    return native() or PURE


def native_function(name: str) -> Callable[..., Any] | None:
    """The native core's function ``name`` (a C twin of a Python routine, giving the same
    results: the chunk samples' writer, the sampler's step) when new readers use the native
    engine, else ``None``: the pure-Python engine uses no C at all."""
    if select() is PURE or _native._bsprof is None:
        return None
    return getattr(_native._bsprof, name)


def describe(environ: Mapping[str, str] | None = None) -> str:
    """Which engine new readers use, and why, in a few words (for ``rokuprof --version``)."""
    if select(environ) is not PURE:
        return "native (C)"
    if _native.built():
        return f"pure Python ({PURE_PYTHON_VARIABLE} is set)"
    return "pure Python (the native core is not built)"
