"""Scenarios: the remote-control steps that drive a profiled run (``rokuprof profile
--scenario FILE``). The model is pure (but for ``load_scenario``, which reads the file); the
runner presses the keys.

Names load on first use, so importing :mod:`rokuprof.scenario.model` loads no asyncio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rokuprof._lazy import lazy_names

if TYPE_CHECKING:
    from rokuprof.scenario.model import (
        ECP_KEYS,
        Action,
        Iterations,
        Launch,
        Mark,
        Press,
        Scenario,
        ScenarioError,
        Step,
        Text,
        Wait,
        iteration_mark,
        load_scenario,
        parse_iteration_mark,
        parse_scenario,
        parse_scenario_text,
    )
    from rokuprof.scenario.runner import Remote, run_scenario

_HOMES = {
    **dict.fromkeys(
        [
            "ECP_KEYS",
            "Action",
            "Iterations",
            "Launch",
            "Mark",
            "Press",
            "Scenario",
            "ScenarioError",
            "Step",
            "Text",
            "Wait",
            "iteration_mark",
            "load_scenario",
            "parse_iteration_mark",
            "parse_scenario",
            "parse_scenario_text",
        ],
        "model",
    ),
    "Remote": "runner",
    "run_scenario": "runner",
}

__all__ = [
    "ECP_KEYS",
    "Action",
    "Iterations",
    "Launch",
    "Mark",
    "Press",
    "Remote",
    "Scenario",
    "ScenarioError",
    "Step",
    "Text",
    "Wait",
    "iteration_mark",
    "load_scenario",
    "parse_iteration_mark",
    "parse_scenario",
    "parse_scenario_text",
    "run_scenario",
]

__getattr__ = lazy_names(__name__, _HOMES)
