"""Reading a small input file (a scenario, an ignore file, a file being packaged) that may be
larger than it should be: at most one byte past its limit is read, and the two ways it can fail
(unreadable, too big) become the caller's own error."""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike


def read_capped(
    path: str | PathLike[str],
    limit: int,
    *,
    unreadable: Callable[[str], Exception],
    too_big: Callable[[], Exception],
) -> bytes:
    """The bytes of ``path``. Raises ``unreadable(reason)`` when it cannot be opened or read
    (``reason`` is the system's words, e.g. "No such file or directory") and ``too_big()`` when
    it holds more than ``limit`` bytes; neither chains the OSError."""
    try:
        with open(path, "rb") as file:
            data = file.read(limit + 1)
    except OSError as error:
        raise unreadable(str(error.strerror or error)) from None
    if len(data) > limit:
        raise too_big()
    return data
