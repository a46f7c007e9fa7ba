"""How chunks are made: :class:`ChunkSettings`, the one owner of the chunk rules, and the
limits they are checked against (pure: no I/O)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from rokuprof.sentry.sampling import DEFAULT_WALL_UNIT, SAMPLE_RATE_HZ, units_per_second
from rokuprof.sentry.validate import MAX_CHUNK_BYTES

#: The longest window of one chunk, as Sentry's SDKs cut them (Relay's own limit on a chunk's
#: sample span is :data:`~rokuprof.sentry.validate.MAX_SAMPLE_SPAN_SECONDS`, 66 s).
MAX_CHUNK_SECONDS = 60.0
#: The longest a window is held open for late data (:attr:`ChunkSettings.settle_seconds`).
MAX_SETTLE_SECONDS = 10.0
#: Default byte budget of one chunk (:attr:`ChunkSettings.max_chunk_bytes`): well under Relay's
#: 50 MiB, so a window with many busy threads is sent as several chunks instead of one rejected.
DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024
#: The smallest budget: one thread's window always goes into one chunk (at 101 Hz and 60 s,
#: at most 6,060 samples: about 0.5 MB, and its stacks), so a budget must hold one.
MIN_CHUNK_BYTES = 1024 * 1024
#: Default cap on the chunk bytes of one run (:attr:`ChunkSettings.max_session_chunk_bytes`).
DEFAULT_SESSION_CHUNK_BYTES = 1024 * 1024 * 1024


class ChunkSettingsError(ValueError):
    """Settings that break the chunk rules; ``problems`` lists every one as (field, rule)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{name} {rule}" for name, rule in problems))

    def named(self, names: Mapping[str, str]) -> list[str]:
        """One ``"<name>: <rule>"`` line per problem, each field named as its caller knows it
        (a config key, a command-line option); a field not in ``names`` keeps its own name."""
        return [f"{names.get(name, name)}: {rule}" for name, rule in self.problems]


@dataclass(frozen=True)
class ChunkSettings:
    """How chunks are made: the one owner of the chunk rules (the daemon's config, the commands
    and the capture build one and hand it on to the builder).

    ``wall_unit``: unit of the ``.bsprof`` wall-time field (``ns``, ``us``, ``ms`` or ``s``);
    Roku does not publish it, microseconds is the working assumption. ``chunk_seconds``: window
    of one chunk (at most 60, and room for two samples). ``release``: overrides
    ``<target name>@<target version>`` from the header. ``environment``: Sentry environment
    (``None`` leaves it out). ``max_backlog_seconds``: busy time a thread may have waiting
    beyond the wall time that has passed; more than that (a wrong wall unit, or a broken
    stream) is dropped and reported rather than laid out for hours. ``settle_seconds``: data
    arriving this long after a window ended may still be placed in it (it describes time before
    its arrival), so a window is cut that long after its end. ``max_chunk_bytes``: a window
    whose threads would make a larger chunk is sent as several chunks, each with some of its
    threads, and one thread's window that alone is larger in several spans of time.
    ``max_session_chunk_bytes``: the chunk bytes
    one run may produce; past it no more chunks are made (reported; the raw archive keeps
    everything).

    Every broken rule is reported at once (:class:`ChunkSettingsError`, a ``ValueError``), each
    as the field's name and its rule, so a caller can name the field its own way.
    """

    wall_unit: str = DEFAULT_WALL_UNIT
    chunk_seconds: float = MAX_CHUNK_SECONDS
    release: str | None = None
    environment: str | None = "production"
    hz: int = SAMPLE_RATE_HZ
    max_backlog_seconds: float = 3600.0
    settle_seconds: float = 1.0
    max_chunk_bytes: int = DEFAULT_CHUNK_BYTES
    max_session_chunk_bytes: int = DEFAULT_SESSION_CHUNK_BYTES

    def __post_init__(self) -> None:
        problems = chunk_problems(self)
        if problems:
            raise ChunkSettingsError(problems)


def chunk_problems(settings: ChunkSettings) -> list[tuple[str, str]]:
    """Every chunk rule ``settings`` breaks, as (field, rule ending in what it got)."""
    s = settings
    problems = []
    try:
        units_per_second(s.wall_unit if isinstance(s.wall_unit, str) else repr(s.wall_unit))
    except ValueError as exc:
        problems.append(("wall_unit", str(exc)))
    hz_ok = isinstance(s.hz, int) and not isinstance(s.hz, bool) and s.hz > 0
    if not hz_ok:
        problems.append(("hz", f"must be a whole number above 0, got {_got(s.hz)}"))
    if not (_number(s.chunk_seconds) and 0 < s.chunk_seconds <= MAX_CHUNK_SECONDS):
        problems.append(
            (
                "chunk_seconds",
                f"must be a number of seconds above 0 and at most {MAX_CHUNK_SECONDS:g} (the "
                f"longest Sentry chunk), got {_got(s.chunk_seconds)}",
            )
        )
    elif hz_ok and int(s.chunk_seconds * s.hz) < 2:
        problems.append(
            (
                "chunk_seconds",
                f"must hold two samples at {s.hz} Hz (at least {2 / s.hz:.3g} s), "
                f"got {_got(s.chunk_seconds)}",
            )
        )
    if not (_whole(s.max_chunk_bytes) and MIN_CHUNK_BYTES <= s.max_chunk_bytes <= MAX_CHUNK_BYTES):
        problems.append(
            (
                "max_chunk_bytes",
                f"must be a whole number of bytes from {MIN_CHUNK_BYTES} to {MAX_CHUNK_BYTES} "
                f"(Sentry's limit), got {_got(s.max_chunk_bytes)}",
            )
        )
    if not (_whole(s.max_session_chunk_bytes) and s.max_session_chunk_bytes > 0):
        problems.append(
            (
                "max_session_chunk_bytes",
                f"must be a whole number of bytes above 0, got {_got(s.max_session_chunk_bytes)}",
            )
        )
    if not (_number(s.max_backlog_seconds) and s.max_backlog_seconds > 0):
        problems.append(
            ("max_backlog_seconds", f"must be a number above 0, got {_got(s.max_backlog_seconds)}")
        )
    if not (_number(s.settle_seconds) and 0 <= s.settle_seconds <= MAX_SETTLE_SECONDS):
        problems.append(
            (
                "settle_seconds",
                f"must be a number from 0 to {MAX_SETTLE_SECONDS:g}, got {_got(s.settle_seconds)}",
            )
        )
    if s.release is not None and not (isinstance(s.release, str) and s.release.strip()):
        problems.append(("release", f"must be a non-empty name, got {_got(s.release)}"))
    environment = s.environment
    if environment is not None and not (
        isinstance(environment, str)
        and environment.strip()
        and not any(c in environment for c in "/\n\r\t")
    ):
        problems.append(
            (
                "environment",
                f"must be a non-empty name without slashes or newlines, got {_got(environment)}",
            )
        )
    return problems


def _number(value: object) -> bool:
    """A finite int or float (not a bool, nor an int too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _got(value: object) -> str:
    """A value as a rule's message shows it: numbers as written (61 and 61.0 alike), text
    quoted and cut short."""
    if _number(value):
        return f"{value:g}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
