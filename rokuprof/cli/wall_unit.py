"""``--wall-unit``: one option, the same name, choices, default and help in every command that
shows or converts wall times (``inspect``, ``watch``, ``convert``, ``export``, ``report``,
``diff``). The choices and the default are :mod:`rokuprof.bsprof.wall_unit`'s."""

from __future__ import annotations

from typing import Annotated

import typer

from rokuprof.bsprof.wall_unit import DEFAULT_WALL_UNIT, WALL_UNITS
from rokuprof.cli.options import choice

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
