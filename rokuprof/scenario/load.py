"""Read a scenario file: its errors (missing, unreadable, too big, not UTF-8) are
:class:`~rokuprof.scenario.model.ScenarioError` too."""

from __future__ import annotations

from pathlib import Path

from rokuprof.scenario.model import MAX_FILE_BYTES, Scenario, ScenarioError, parse_scenario_text
from rokuprof.units import size


def load_scenario(path: Path) -> Scenario:
    """The scenario in the TOML file ``path`` (errors name it as given)."""
    source = str(path)
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise ScenarioError(f"{source}: cannot read: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ScenarioError(
            f"{source}: larger than {size(MAX_FILE_BYTES, exact=True)}; not a scenario"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ScenarioError(
            f"{source}: not UTF-8 text (line {line}, byte {error.start + 1}); TOML files are UTF-8"
        ) from None
    return parse_scenario_text(text, source)
