"""Optional modules a dependency imports on every request, looked up once.

httpcore (under httpx) runs ``import sniffio`` each time it sets up a connection pool's lock, to
learn which async library runs it. Where sniffio is not installed (anyio no longer needs it),
each of those imports searches every ``sys.path`` entry again and fails: about a millisecond of
CPU a request, which a daemon asking ECP of thousands of devices spends on its event loop.
:func:`remember_missing` looks a module up once and, when it is absent, records that in
``sys.modules`` (``None``: Python's own mark for "this import fails"), so later imports fail at
once, as they would have anyway. Nothing changes where the module is installed.
"""

from __future__ import annotations

import functools
import importlib.util
import sys

#: What httpcore imports on each request when it is there (asyncio is then assumed without it).
PER_REQUEST = ("sniffio",)


@functools.cache
def remember_missing(names: tuple[str, ...] = PER_REQUEST) -> tuple[str, ...]:
    """Mark those of ``names`` that cannot be imported as missing; return them."""
    missing = []
    for name in names:
        if name in sys.modules:
            continue
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            sys.modules[name] = None  # type: ignore[assignment]  # "import fails", said once
            missing.append(name)
    return tuple(missing)
