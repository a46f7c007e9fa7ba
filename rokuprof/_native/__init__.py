"""The native core: the ``.bsprof`` body loop and the profile tables in C.

``bsprof_core.c`` is plain C (no Python API); ``_bsprof.c`` wraps it for Python and
:mod:`rokuprof._native.reader` makes it a body engine with its tables. ``pip install .`` builds
it when a C compiler is available (see ``setup.py``). Which engine a reader uses is decided in
:mod:`rokuprof.profile.engine` alone; both give identical results.
"""

from __future__ import annotations

try:
    from rokuprof._native import _bsprof
except ImportError as error:  # not built (no compiler at install time)
    _bsprof = None
    _import_error: str | None = str(error)
else:
    _import_error = None


def built() -> bool:
    """True when the extension was built and imports."""
    return _bsprof is not None
