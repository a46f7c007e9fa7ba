"""The unit of the ``.bsprof`` wall-time field: its possible values and the working assumption.

Roku does not publish the unit; microseconds is the assumption every command starts from, and
``--wall-unit`` (the same choices in each command that shows or converts wall times) changes it.
"""

from __future__ import annotations

#: The possible units of the ``.bsprof`` wall-time field, as units per second.
WALL_UNITS: dict[str, int] = {"ns": 1_000_000_000, "us": 1_000_000, "ms": 1_000, "s": 1}

#: The working assumption for the wall-time unit (Roku does not publish it).
DEFAULT_WALL_UNIT = "us"


def units_per_second(wall_unit: str) -> int:
    """Units per second of a wall unit name (``ns``, ``us``, ``ms`` or ``s``)."""
    try:
        return WALL_UNITS[wall_unit]
    except KeyError:
        choices = ", ".join(WALL_UNITS)
        raise ValueError(f"unknown wall-time unit {wall_unit!r} (one of {choices})") from None
