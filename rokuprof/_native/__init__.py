"""The native core: the ``.bsprof`` body loop and the profile tables in C.

``bsprof_core.c`` is plain C (no Python API); ``_bsprof.c`` wraps it for Python and
:mod:`rokuprof._native.reader` gives it the :class:`~rokuprof.profile.reader.ProfileReader`
interface. ``pip install .`` builds it when a C compiler is available (see ``setup.py``);
otherwise, or with ``ROKUPROF_PURE_PYTHON=1`` in the environment, rokuprof uses the pure-Python
decoder and tables, which give identical results.
"""

from __future__ import annotations

import os

try:
    from rokuprof._native import _bsprof
except ImportError as error:  # not built (no compiler at install time)
    _bsprof = None
    _import_error: str | None = str(error)
else:
    _import_error = None

PURE_PYTHON_VARIABLE = "ROKUPROF_PURE_PYTHON"


def built() -> bool:
    """True when the extension was built and imports."""
    return _bsprof is not None


def disabled() -> bool:
    """True when ``ROKUPROF_PURE_PYTHON`` asks for the pure-Python path (any value but empty
    or ``0``)."""
    return os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0")


def active() -> bool:
    """True when new readers use the native core."""
    return built() and not disabled()


def describe() -> str:
    """Which core new readers use, and why, in a few words (for ``rokuprof --version``)."""
    if active():
        return "native (C)"
    if built():
        return f"pure Python ({PURE_PYTHON_VARIABLE} is set)"
    return "pure Python (the native core is not built)"


def reader_class() -> type | None:
    """The native :class:`~rokuprof.profile.reader.ProfileReader` subclass, or ``None`` when
    the pure-Python path is in use."""
    if not active():
        return None
    from rokuprof._native.reader import NativeProfileReader

    return NativeProfileReader
