"""Chunk settings from command-line options: a broken rule is a usage error naming the option.

The rules are :class:`~rokuprof.sentry.settings.ChunkSettings`' own; a command only builds the
settings inside :func:`chunk_options`::

    with chunk_options():
        settings = ChunkSettings(chunk_seconds=chunk_seconds, environment=environment)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rokuprof.cli import exits
from rokuprof.cli.wall_unit import DEFAULT_UNIT as DEFAULT_UNIT  # the option's home: wall_unit
from rokuprof.cli.wall_unit import WallUnit as WallUnit
from rokuprof.cli.wall_unit import WallUnitOption as WallUnitOption
from rokuprof.sentry.settings import ChunkSettingsError

#: How the commands spell each chunk setting.
OPTION_NAMES = {
    "chunk_seconds": "--chunk-seconds",
    "environment": "--environment",
    "release": "--release",
    "wall_unit": "--wall-unit",
}


@contextmanager
def chunk_options() -> Iterator[None]:
    """End the command with a usage error (exit 2) listing every broken chunk rule, each named
    by its option, when settings built inside break them."""
    try:
        yield
    except ChunkSettingsError as exc:
        exits.fail("; ".join(exc.named(OPTION_NAMES)))
