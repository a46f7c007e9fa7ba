"""A side of a comparison as a series: one capture (a ``.bsprof`` file or a session directory)
or a directory of sessions (``profile --repeat`` writes one; any directory holding session
directories, at most :data:`MAX_DEPTH` levels down, is one).

Sessions are found by their archive (``capture.bsprof``); names starting with a dot and
symbolic links are skipped, as every walk of an output directory skips them; the runs are taken
in path order (a device's sessions sort by start time). At most :data:`MAX_RUNS` runs are read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rokuprof.export.aggregate import AnyInput
from rokuprof.store.layout import ARCHIVE_FILE
from rokuprof.verdict.series import Run, Series, run_of
from rokuprof.workflows.errors import Stop

MAX_DEPTH = 3  # OUT/series/<device>/<session>: a series directory, or a whole output directory
MAX_RUNS = 1000

#: Opens one capture given by name: ``(capture, how messages name it)``; raises :class:`Stop`.
LoadOne = Callable[[str, bool], tuple[AnyInput, str]]


def is_session(path: Path) -> bool:
    return path.is_dir() and (path / ARCHIVE_FILE).is_file()


def session_dirs(directory: Path, depth: int = MAX_DEPTH) -> list[Path]:
    """The session directories under ``directory`` (itself, when it is one), in path order."""
    if is_session(directory):
        return [directory]
    found: list[Path] = []
    if depth <= 0:
        return found
    try:
        children = sorted(directory.iterdir())
    except OSError:
        return found
    for child in children:
        if child.name.startswith(".") or child.is_symlink() or not child.is_dir():
            continue
        found.extend(session_dirs(child, depth - 1))
    return found


def series_paths(arg: str) -> list[str]:
    """What a ``--baseline`` (or a side of ``diff``) names, as captures: the file or session
    itself, or every session under a directory; :class:`Stop` when a directory holds none."""
    path = Path(arg)
    if arg == "-" or not path.is_dir() or is_session(path):
        return [arg]
    sessions = session_dirs(path)
    if not sessions:
        raise Stop(
            f"{arg} is a directory without a {ARCHIVE_FILE} (not a session) and holds no "
            f"session directory within {MAX_DEPTH} levels (not a series)"
        )
    if len(sessions) > MAX_RUNS:
        raise Stop(f"{arg} holds {len(sessions)} sessions: at most {MAX_RUNS} make a series")
    return [str(s) for s in sessions]


def load_runs(arg: str, load: LoadOne, quiet: bool = True) -> tuple[list[Run], AnyInput | None]:
    """The runs ``arg`` names (see :func:`series_paths`), each decoded by ``load``, and the
    decoded capture itself when it names just one (a one-against-one comparison draws its diff
    table from it)."""
    runs: list[Run] = []
    first = None
    for name in series_paths(arg):
        inp, label = load(name, quiet)
        runs.append(run_of(inp, label))
        first = inp if not runs[1:] else None
    return runs, first


def load_series(arg: str, load: LoadOne, quiet: bool = True) -> Series:
    """The series ``arg`` names (see :func:`series_paths`)."""
    runs, _ = load_runs(arg, load, quiet)
    return Series(arg, tuple(runs))
