"""Scenario files: what parses, what each step becomes, and the exact message of every mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from rokuprof.scenario import (
    Action,
    Launch,
    Mark,
    Press,
    Scenario,
    ScenarioError,
    Text,
    Wait,
    load_scenario,
    parse_scenario,
    parse_scenario_text,
)

GOOD = """
[[steps]]
launch = { contentId = "1234", mediaType = "movie" }
[[steps]]
wait = 2
[[steps]]
press = "Down"
repeat = 3
interval = 0.5
[[steps]]
mark = "details open"
[[steps]]
press = "select"
[[steps]]
text = "é b"
[[steps]]
press = "Lit_x"
[[steps]]
wait = 1.25
"""


def test_a_scenario_parses_into_its_steps_and_actions() -> None:
    scenario = parse_scenario_text(GOOD, "s.toml")
    assert scenario == Scenario(
        (
            Launch({"contentId": "1234", "mediaType": "movie"}),
            Wait(2.0),
            Press("Down", 3, 0.5),
            Mark("details open"),
            Press("Select"),  # key names are matched without case, kept as Roku spells them
            Text("é b"),
            Press("Lit_x"),
            Wait(1.25),
        ),
        "s.toml",
    )
    assert scenario.planned_seconds() == 4.25
    assert scenario.presses() == 8
    assert list(scenario.actions()) == [
        Action(0.0, "launch", params={"contentId": "1234", "mediaType": "movie"}),
        Action(2.0, "keypress", "Down"),
        Action(2.5, "keypress", "Down"),
        Action(3.0, "keypress", "Down"),
        Action(3.0, "mark", "details open"),
        Action(3.0, "keypress", "Select"),
        Action(3.0, "keypress", "Lit_é"),
        Action(3.0, "keypress", "Lit_ "),
        Action(3.0, "keypress", "Lit_b"),
        Action(3.0, "keypress", "Lit_x"),
    ]


def test_load_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "scenario.toml"
    path.write_text(GOOD, encoding="utf-8")
    assert load_scenario(path) == parse_scenario_text(GOOD, str(path))


def steps(*tables: str) -> str:
    return "".join(f"[[steps]]\n{table}\n" for table in tables)


BAD = [
    # (TOML, the whole message)
    (
        steps('press = "Dwn"'),
        "s.toml: step 1: press: 'Dwn' is not an ECP key; did you mean 'Down'? (keys: Home, "
        "Rev, Fwd, Play, Select, Left, Right, Down, Up, Back, InstantReplay, Info, Backspace, "
        "Search, Enter, or Lit_<character>)",
    ),
    (
        steps("wait = 1", 'press = "Slect"'),
        "s.toml: step 2: press: 'Slect' is not an ECP key; did you mean 'Select'? (keys: Home, "
        "Rev, Fwd, Play, Select, Left, Right, Down, Up, Back, InstantReplay, Info, Backspace, "
        "Search, Enter, or Lit_<character>)",
    ),
    (
        steps('press = "Zzzzz"'),
        "s.toml: step 1: press: 'Zzzzz' is not an ECP key (keys: Home, Rev, Fwd, Play, Select, "
        "Left, Right, Down, Up, Back, InstantReplay, Info, Backspace, Search, Enter, or "
        "Lit_<character>)",
    ),
    (
        steps('press = "Home"'),
        "s.toml: step 1: press: 'Home' is not allowed: Home exits the app and ends the run; "
        "rokuprof exits it after the last step",
    ),
    (
        steps('press = "Lit_ab"'),
        "s.toml: step 1: press: 'Lit_ab': a Lit_ key is one character (Lit_a); type longer "
        'text with text = "..."',
    ),
    (
        steps('press = "Lit_\\t"'),
        "s.toml: step 1: press: 'Lit_\\t': '\\t' is not a printable character",
    ),
    (steps("press = 3"), "s.toml: step 1: press: must be a string, not an integer"),
    (
        steps('press = "Down"\nwait = 1'),
        "s.toml: step 1: wait: press and wait in one step: a step does one thing (make each "
        "its own [[steps]])",
    ),
    (
        steps("wait = 1\nrepeat = 2"),
        "s.toml: step 1: repeat: only a press step has repeat (this is a wait)",
    ),
    (
        steps('mark = "x"\ninterval = 2'),
        "s.toml: step 1: interval: only a press step has interval (this is a mark)",
    ),
    (
        steps('presss = "Down"'),
        "s.toml: step 1: presss: unknown key; did you mean 'press'? (a step has one of press, "
        "text, wait, launch, mark; a press may have repeat and interval)",
    ),
    (
        steps('press = "Up"\nrepeat = 0'),
        "s.toml: step 1: repeat: must be from 1 to 1000, not 0",
    ),
    (
        steps('press = "Up"\nrepeat = 1001'),
        "s.toml: step 1: repeat: must be from 1 to 1000, not 1001",
    ),
    (
        steps('press = "Up"\nrepeat = 2.0'),
        "s.toml: step 1: repeat: must be an integer, not a float",
    ),
    (
        steps('press = "Up"\nrepeat = 2\ninterval = 61'),
        "s.toml: step 1: interval: must be >= 0 and <= 60 seconds, not 61",
    ),
    (
        steps('press = "Up"\ninterval = "1"'),
        "s.toml: step 1: interval: must be a number of seconds, not a string",
    ),
    (steps("wait = 0"), "s.toml: step 1: wait: must be > 0 and <= 3600 seconds, not 0"),
    (steps("wait = -1"), "s.toml: step 1: wait: must be > 0 and <= 3600 seconds, not -1"),
    (steps("wait = 3601"), "s.toml: step 1: wait: must be > 0 and <= 3600 seconds, not 3601"),
    (steps("wait = nan"), "s.toml: step 1: wait: must be > 0 and <= 3600 seconds, not nan"),
    (steps("wait = true"), "s.toml: step 1: wait: must be a number of seconds, not a boolean"),
    (steps('text = ""'), "s.toml: step 1: text: is empty"),
    (steps('text = "a\\nb"'), "s.toml: step 1: text: '\\n' is not a printable character"),
    (steps("text = [1]"), "s.toml: step 1: text: must be a string, not an array"),
    (
        steps('launch = "1234"'),
        's.toml: step 1: launch: must be a table such as { contentId = "1" }, not a string',
    ),
    (
        steps("launch = { contentId = 1234 }"),
        "s.toml: step 1: launch.contentId: must be a string, not an integer",
    ),
    (
        steps('launch = { "content id" = "1" }'),
        "s.toml: step 1: launch.content id: a parameter name is a letter then letters, digits or _",
    ),
    (steps('mark = ""'), "s.toml: step 1: mark: is empty"),
    (steps(f'mark = "{"m" * 65}"'), "s.toml: step 1: mark: is 65 characters; at most 64"),
    (
        steps('mark = "a\\u0007"'),
        "s.toml: step 1: mark: has a character that is not printable",
    ),
    (
        steps("repeat = 2"),
        "s.toml: step 1: nothing to do: a step has one of press, text, wait, launch, mark",
    ),
    ("", 's.toml: no steps (add [[steps]] tables, e.g. press = "Down")'),
    ("steps = []", 's.toml: no steps (add [[steps]] tables, e.g. press = "Down")'),
    ('steps = "Down"', "s.toml: steps: must be a list of [[steps]] tables, not a string"),
    ("steps = [1]", "s.toml: step 1: must be a table ([[steps]]), not an integer"),
    (
        "[[step]]\npress = 'Down'",
        "s.toml: step: unknown key; did you mean 'steps'? (a scenario is a list of [[steps]])",
    ),
    (
        steps('"a\\nb" = 1'),
        "s.toml: step 1: 'a\\nb': unknown key (a step has one of press, text, wait, launch, "
        "mark; a press may have repeat and interval)",
    ),
    (
        f"{'k' * 100} = 1",
        f"s.toml: {'k' * 63}…: unknown key (a scenario is a list of [[steps]])",
    ),
    (
        "[[steps]]\npress = Down\n",
        "s.toml: not valid TOML: Invalid value (at line 2, column 9)",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_every_mistake_names_the_file_the_step_and_the_key(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario_text(text, "s.toml")
    assert str(info.value) == message


def test_the_limits_are_said() -> None:
    many = {"steps": [{"wait": 1}] * 10_001}
    with pytest.raises(ScenarioError, match=r"^s: 10,001 steps; at most 10,000$"):
        parse_scenario(many, "s")
    long = {"steps": [{"wait": 3600}] * 25}
    with pytest.raises(ScenarioError) as info:
        parse_scenario(long, "s")
    assert str(info.value) == (
        "s: the waits and intervals add up to 90,000 s; a scenario plans at most 86,400 s "
        "(24 hours)"
    )
    presses = {"steps": [{"press": "Up", "repeat": 1000}] * 101}
    with pytest.raises(ScenarioError) as info:
        parse_scenario(presses, "s")
    assert str(info.value) == (
        "s: 101,000 key presses (repeats and typed characters); at most 100,000"
    )
    with pytest.raises(ScenarioError, match=r"^s: step 1: text: is 1,001 characters; at most"):
        parse_scenario({"steps": [{"text": "a" * 1001}]}, "s")


def test_file_errors_are_scenario_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ScenarioError) as info:
        load_scenario(missing)
    assert str(info.value) == f"{missing}: cannot read: No such file or directory"
    with pytest.raises(ScenarioError, match=r": cannot read: Is a directory$"):
        load_scenario(tmp_path)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'[[steps]]\nmark = "caf\xe9"\n')
    with pytest.raises(ScenarioError) as info:
        load_scenario(latin)
    assert str(info.value) == f"{latin}: not UTF-8 text (line 2, byte 22); TOML files are UTF-8"
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (1 << 20) + b"\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(big)
    assert str(info.value) == f"{big}: larger than 1 MiB; not a scenario"
