"""Scenario ``iterations`` steps: a block of steps repeated N times with a mark at each
iteration's start and one after the last, its limits, and every mistake said with its place."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rokuprof.capture.vitals import MAX_LABEL as KEPT_LABEL
from rokuprof.capture.vitals import MAX_MARKS as KEPT_MARKS
from rokuprof.scenario import (
    Action,
    Iterations,
    Press,
    ScenarioError,
    Wait,
    iteration_mark,
    parse_iteration_mark,
    parse_scenario,
    parse_scenario_text,
)
from rokuprof.scenario.model import MAX_ITERATION_LABEL, MAX_ITERATIONS, MAX_LABEL, MAX_MARKS

LOOP = """
[[steps]]
wait = 1
[[steps]]
iterations = 3
mark = "open details"
[[steps.do]]
press = "Select"
[[steps.do]]
wait = 1.0
[[steps.do]]
press = "Back"
repeat = 2
interval = 0.25
[[steps.do]]
wait = 0.25
"""


def test_an_iterations_step_unrolls_with_a_mark_at_each_boundary() -> None:
    scenario = parse_scenario_text(LOOP, "s.toml")
    assert scenario.steps[1] == Iterations(
        "open details", 3, (Press("Select"), Wait(1.0), Press("Back", 2, 0.25), Wait(0.25))
    )
    assert scenario.planned_seconds() == 1 + 3 * 1.5
    assert scenario.presses() == 9
    assert scenario.marks() == 4
    marks = [(a.at, a.value) for a in scenario.actions() if a.kind == "mark"]
    assert marks == [
        (1.0, "open details #1"),
        (2.5, "open details #2"),
        (4.0, "open details #3"),
        (5.5, "open details #end"),
    ]
    first = list(scenario.actions())[:4]
    assert first == [
        Action(1.0, "mark", "open details #1"),
        Action(1.0, "keypress", "Select"),
        Action(2.0, "keypress", "Back"),
        Action(2.25, "keypress", "Back"),
    ]


@given(st.text(min_size=1, max_size=MAX_ITERATION_LABEL), st.integers(1, MAX_ITERATIONS))
def test_iteration_marks_read_back_as_written(label: str, number: int) -> None:
    for n in (number, None):
        mark = iteration_mark(label, n)
        assert parse_iteration_mark(mark) == (label, n)
        assert len(mark) <= MAX_LABEL or len(label) > MAX_ITERATION_LABEL


def test_plain_labels_are_not_iteration_marks() -> None:
    for label in ("browse", "take #0", "#3", "x #03", "x #-1", "x #end2", "x#2"):
        assert parse_iteration_mark(label) is None, label


def test_the_marks_fit_what_a_capture_keeps() -> None:
    assert MAX_MARKS == KEPT_MARKS  # a run keeps this many marks; the rest are only counted
    assert MAX_LABEL <= KEPT_LABEL
    longest = iteration_mark("m" * MAX_ITERATION_LABEL, MAX_ITERATIONS)
    assert len(longest) == MAX_LABEL
    most = parse_scenario(
        {"steps": [{"iterations": MAX_ITERATIONS, "mark": "m", "do": [{"press": "Up"}]}]}, "s"
    )
    assert most.marks() == MAX_MARKS


def steps(body: str, do: str = 'press = "Up"') -> str:
    return f"[[steps]]\n{body}\n[[steps.do]]\n{do}\n"


BAD = [
    (
        steps('iterations = 1\nmark = "x"'),
        "s.toml: step 1: iterations: must be from 2 to 999, not 1",
    ),
    (
        steps('iterations = 1000\nmark = "x"'),
        "s.toml: step 1: iterations: must be from 2 to 999, not 1000",
    ),
    (
        steps('iterations = 2.5\nmark = "x"'),
        "s.toml: step 1: iterations: must be an integer, not a float",
    ),
    (
        steps("iterations = 2"),
        's.toml: step 1: mark: missing: an iterations step names its marks (mark = "open details")',
    ),
    (
        steps(f'iterations = 2\nmark = "{"m" * 60}"'),
        "s.toml: step 1: mark: is 60 characters; an iterations step's at most 59 "
        "(its marks add #999)",
    ),
    (
        steps('iterations = 2\nmark = "x #end"'),
        's.toml: step 1: mark: ends like an iteration mark ("x #2", "x #end"); rename it',
    ),
    (steps('iterations = 2\nmark = ""'), "s.toml: step 1: mark: is empty"),
    (
        steps('iterations = 2\nmark = "x"\nrepeat = 2'),
        "s.toml: step 1: repeat: unknown key (an iterations step has iterations, mark, do)",
    ),
    (
        '[[steps]]\niterations = 2\nmark = "x"\n',
        "s.toml: step 1: do: no steps to repeat (add [[steps.do]] tables)",
    ),
    (
        '[[steps]]\niterations = 2\nmark = "x"\ndo = "Up"\n',
        "s.toml: step 1: do: must be a list of [[steps.do]] tables, not a string",
    ),
    (
        steps('iterations = 2\nmark = "x"', 'press = "Dwn"'),
        "s.toml: step 1, do 1: press: 'Dwn' is not an ECP key; did you mean 'Down'? (keys: "
        "Home, Rev, Fwd, Play, Select, Left, Right, Down, Up, Back, InstantReplay, Info, "
        "Backspace, Search, Enter, or Lit_<character>)",
    ),
    (
        steps('iterations = 2\nmark = "x"', 'iterations = 2\nmark = "y"'),
        "s.toml: step 1, do 1: iterations: iterations cannot be nested in iterations",
    ),
    (
        '[[steps]]\nwait = 1\ndo = [{ press = "Up" }]\n',
        "s.toml: step 1: do: only an iterations step has do (iterations = N)",
    ),
    (
        steps('iterations = 2\nmark = "x"') + steps('iterations = 3\nmark = "x"'),
        "s.toml: two iterations steps are marked 'x'; each needs its own label "
        "(their marks would mix)",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_every_iterations_mistake_names_the_file_the_step_and_the_key(
    text: str, message: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario_text(text, "s.toml")
    assert str(info.value) == message


def test_iterations_count_toward_the_scenario_limits() -> None:
    def loop(count: int, *do: dict) -> dict:
        return {"steps": [{"iterations": count, "mark": "m", "do": list(do)}]}

    with pytest.raises(ScenarioError) as info:
        parse_scenario(loop(100, {"wait": 3600}), "s")
    assert str(info.value).startswith("s: the waits and intervals add up to 360,000 s;")
    with pytest.raises(ScenarioError) as info:
        parse_scenario(loop(101, {"press": "Up", "repeat": 1000}), "s")
    assert (
        str(info.value) == "s: 101,000 key presses (repeats and typed characters); at most 100,000"
    )
    with pytest.raises(ScenarioError) as info:
        parse_scenario(loop(999, *[{"wait": 0.001}] * 10), "s")
    assert str(info.value) == "s: 10,990 steps with each iteration's; at most 10,000"
    with pytest.raises(ScenarioError) as info:
        parse_scenario({"steps": [*loop(999, {"press": "Up"})["steps"], {"mark": "after"}]}, "s")
    assert str(info.value) == (
        "s: 1,001 marks with each iteration's; a run keeps at most 1,000 (the rest would be lost)"
    )
