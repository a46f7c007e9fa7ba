"""``--wall-unit`` is one fact (rokuprof/bsprof/wall_unit.py) and one option
(rokuprof/cli/wall_unit.py): every command that shows or converts wall times takes it alike."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rokuprof.bsprof.wall_unit import WALL_UNITS, units_per_second
from rokuprof.cli import app

#: The commands that show or convert wall times.
COMMANDS = ("inspect", "watch", "convert", "export", "report", "diff")


def _help_of_the_option(command: str) -> str:
    """``--wall-unit``'s entry in ``rokuprof COMMAND --help``, its lines joined."""
    lines = CliRunner().invoke(app, [command, "--help"]).output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("--wall-unit"))
    end = next(i for i in range(start, len(lines)) if "[default: " in lines[i])
    return " ".join(" ".join(lines[start : end + 1]).split())


def test_every_command_takes_the_same_option() -> None:
    entries = {command: _help_of_the_option(command) for command in COMMANDS}
    first = entries[COMMANDS[0]]
    assert first.startswith(f"--wall-unit [{'|'.join(WALL_UNITS)}] Unit of the .bsprof wall-time")
    assert "microseconds is the working assumption" in first and first.endswith("[default: us]")
    assert entries == dict.fromkeys(COMMANDS, first)


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_unit_is_a_usage_error(command: str) -> None:
    args = {"watch": ["127.0.0.1"], "diff": ["a.bsprof", "b.bsprof"]}.get(command, ["a.bsprof"])
    result = CliRunner().invoke(app, [command, *args, "--wall-unit", "minutes"])
    assert result.exit_code == 2 and "minutes" in result.output


def test_units_per_second() -> None:
    assert [units_per_second(u) for u in ("ns", "us", "ms", "s")] == [10**9, 10**6, 10**3, 1]
    with pytest.raises(
        ValueError, match=r"unknown wall-time unit 'minutes' \(one of ns, us, ms, s\)"
    ):
        units_per_second("minutes")
