"""Chunk settings from command-line options: a broken rule is a usage error naming the option.

The rules are :class:`~rokuprof.sentry.chunk.ChunkSettings`' own; a command only builds the
settings inside :func:`chunk_options`::

    with chunk_options():
        settings = ChunkSettings(chunk_seconds=chunk_seconds, environment=environment)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.options import choice
from rokuprof.sentry.chunk import ChunkSettingsError
from rokuprof.sentry.sampling import DEFAULT_WALL_UNIT, WALL_UNITS

#: How the commands spell each chunk setting.
OPTION_NAMES = {
    "chunk_seconds": "--chunk-seconds",
    "environment": "--environment",
    "release": "--release",
    "wall_unit": "--wall-unit",
}

#: ``--wall-unit``, the same in every command that reads a capture into samples.
WallUnit = choice("WallUnit", *WALL_UNITS)
WallUnitOption = Annotated[
    WallUnit,
    typer.Option(
        "--wall-unit",
        help="Unit of the .bsprof wall-time field (not published by Roku; microseconds is the "
        "working assumption).",
    ),
]
DEFAULT_UNIT = WallUnit(DEFAULT_WALL_UNIT)


@contextmanager
def chunk_options() -> Iterator[None]:
    """End the command with a usage error (exit 2) listing every broken chunk rule, each named
    by its option, when settings built inside break them."""
    try:
        yield
    except ChunkSettingsError as exc:
        exits.fail("; ".join(exc.named(OPTION_NAMES)))
