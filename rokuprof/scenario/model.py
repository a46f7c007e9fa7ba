"""A scenario: the remote-control steps that drive one profiled run, read from TOML (pure).

A scenario file is a list of ``[[steps]]``; each step does exactly one thing::

    [[steps]]
    press = "Down"        # an ECP key (or Lit_<c>); repeat = N (1..1000), interval = S (0..60)
    [[steps]]
    text = "cats"         # typed as Lit_c, Lit_a, Lit_t, Lit_s
    [[steps]]
    wait = 2.5            # seconds (0 < S <= 3600)
    [[steps]]
    launch = { contentId = "1234", mediaType = "movie" }   # deep-link parameters
    [[steps]]
    mark = "details open" # a named moment of the run
    [[steps]]
    iterations = 8        # repeat the steps under ``do`` 8 times (2..999), a mark at each
    mark = "open details" # iteration's start: "open details #1" .. "open details #8", and
    [[steps.do]]          # "open details #end" after the last (rokuprof.verdict.leaks reads
    press = "Select"      # the live bytes at each, for the leak verdict)
    [[steps.do]]
    wait = 1.0

Every problem is a :class:`ScenarioError` naming the file, the step (1-based) and the key;
inside ``do``, the step and the inner step (``step 3, do 2``).

An ``iterations`` step (:class:`Iterations`) is the only step with steps of its own: they may
be any step but another ``iterations`` (no nesting). Its label is a mark's (at most
:data:`MAX_ITERATION_LABEL` characters, so that ``label #999`` fits :data:`MAX_LABEL`), unique
among the scenario's ``iterations`` steps and not ending in `` #<digits>`` or `` #end`` (no label
can be mistaken for an iteration mark; :mod:`rokuprof.verdict.leaks` owns the scheme and reads
the marks back). Its steps count once per iteration toward
:data:`MAX_STEPS`, :data:`MAX_PRESSES` and :data:`MAX_PLANNED_SECONDS`, its marks (``N + 1``)
and the plain marks toward :data:`MAX_MARKS`: the capture keeps that many marks a run
(:data:`rokuprof.capture.vitals.MAX_MARKS`; past it only counted), so a scenario that would
lose marks is refused before anything is installed.
The steps unfold into :class:`Action` values at planned offsets (:meth:`Scenario.actions`),
which the runner (:mod:`rokuprof.scenario.runner`) carries out on a clock. Everything here is
pure but :func:`load_scenario`, which reads the file (with the builtin ``open``: no I/O module
is imported).
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from rokuprof import tomltext
from rokuprof.bounded_read import read_capped
from rokuprof.units import size
from rokuprof.verdict.leaks import ITERATION_SUFFIX, iteration_mark, parse_iteration_mark

if TYPE_CHECKING:
    from pathlib import Path

#: The keys ``POST /keypress/<key>`` takes (besides ``Lit_<c>``), as Roku spells them.
_NAMES = "Home Rev Fwd Play Select Left Right Down Up Back InstantReplay Info Backspace"
ECP_KEYS = tuple(f"{_NAMES} Search Enter".split())
LITERAL = "Lit_"
#: Not allowed in a scenario: Home exits the app and so ends the run before the steps do
#: (rokuprof exits the app itself once the steps are done).
REFUSED_KEYS = {
    "Home": "Home exits the app and ends the run; rokuprof exits it after the last step"
}

ACTIONS = ("press", "text", "wait", "launch", "mark")
PRESS_OPTIONS = ("repeat", "interval")

MAX_STEPS = 10_000
MAX_REPEAT = 1000
MAX_INTERVAL = 60.0  # seconds between the presses of one step
MAX_WAIT = 3600.0  # seconds of one wait step
MAX_TEXT = 1000  # characters of one text step
MAX_LABEL = 64  # characters of a mark
MAX_PARAMS = 32  # deep-link parameters of one launch
MAX_PARAM_VALUE = 1024  # characters of one parameter value
MAX_PRESSES = 100_000  # key presses in all (repeats and typed characters count)
MAX_PLANNED_SECONDS = 24 * 3600.0  # the waits and intervals of the whole scenario
MAX_FILE_BYTES = 1 << 20
MIN_ITERATIONS = 2
#: one iterations step's marks (N + the end) fit the capture's MAX_MARKS alone
MAX_ITERATIONS = 999
#: marks of the whole scenario (each iteration's, each end, each mark step): what a capture
#: keeps a run (rokuprof.capture.vitals.MAX_MARKS; a test checks they agree)
MAX_MARKS = 1000
MAX_ITERATION_LABEL = MAX_LABEL - len(f"{ITERATION_SUFFIX}{MAX_ITERATIONS}")
ITERATION_KEYS = ("iterations", "mark", "do")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
_BY_LOWER = {key.lower(): key for key in ECP_KEYS}


class ScenarioError(ValueError):
    """A scenario that cannot run: the message names the file, the step and the key."""


@dataclass(frozen=True, slots=True)
class Press:
    key: str
    repeat: int = 1
    interval: float = 0.0


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Wait:
    seconds: float


@dataclass(frozen=True, slots=True)
class Launch:
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Mark:
    label: str


@dataclass(frozen=True, slots=True)
class Iterations:
    """``steps`` done ``count`` times, the mark ``iteration_mark(label, i)`` at the start of
    iteration ``i`` and ``iteration_mark(label, None)`` after the last; ``steps`` holds no
    :class:`Iterations`."""

    label: str
    count: int
    steps: tuple[Press | Text | Wait | Launch | Mark, ...]


Step = Press | Text | Wait | Launch | Mark | Iterations


@dataclass(frozen=True, slots=True)
class Action:
    """One thing to do ``at`` seconds after the scenario starts."""

    at: float
    kind: Literal["keypress", "launch", "mark"]
    value: str = ""  # the key (keypress) or the label (mark)
    params: Mapping[str, str] | None = None  # launch only


@dataclass(frozen=True, slots=True)
class Scenario:
    steps: tuple[Step, ...]
    source: str

    def planned_seconds(self) -> float:
        """The time the waits and press intervals take (key presses themselves count as 0)."""
        at = 0.0
        for step in self.steps:
            at += _step_seconds(step)
        return at

    def presses(self) -> int:
        """Key presses in all: repeats and typed characters count (once per iteration)."""
        return sum(_step_presses(step) for step in self.steps)

    def unrolled_steps(self) -> int:
        """Steps as they run: an iterations step's steps once per iteration, plus its marks."""
        return sum(_step_count(step) for step in self.steps)

    def marks(self) -> int:
        """The marks the scenario makes: mark steps, and ``N + 1`` per iterations step."""
        return sum(_step_marks(step) for step in self.steps)

    def actions(self) -> Iterator[Action]:
        """The steps as actions at their planned offsets, in order: a step starts where the
        waits and intervals before it end (the same sums as :meth:`planned_seconds`)."""
        at = 0.0
        for step in self.steps:
            if isinstance(step, Iterations):
                for number in range(1, step.count + 1):
                    yield Action(at, "mark", iteration_mark(step.label, number))
                    for inner in step.steps:
                        yield from _actions(inner, at)
                        at += _step_seconds(inner)
                yield Action(at, "mark", iteration_mark(step.label, None))
                continue
            yield from _actions(step, at)
            at += _step_seconds(step)


def _actions(step: Step, at: float) -> Iterator[Action]:
    match step:
        case Press(key, repeat, interval):
            for i in range(repeat):
                yield Action(at + i * interval, "keypress", key)
        case Text(text):
            for char in text:
                yield Action(at, "keypress", LITERAL + char)
        case Launch(params):
            yield Action(at, "launch", params=params)
        case Mark(label):
            yield Action(at, "mark", label)


def _step_seconds(step: Step) -> float:
    if isinstance(step, Wait):
        return step.seconds
    if isinstance(step, Press):
        return step.interval * (step.repeat - 1)
    if isinstance(step, Iterations):
        return step.count * sum(map(_step_seconds, step.steps))
    return 0.0


def _step_presses(step: Step) -> int:
    if isinstance(step, Press):
        return step.repeat
    if isinstance(step, Text):
        return len(step.text)
    if isinstance(step, Iterations):
        return step.count * sum(map(_step_presses, step.steps))
    return 0


def _step_count(step: Step) -> int:
    if isinstance(step, Iterations):
        return step.count * (len(step.steps) + 1) + 1
    return 1


def _step_marks(step: Step) -> int:
    if isinstance(step, Iterations):
        return step.count * (1 + sum(map(_step_marks, step.steps))) + 1
    return int(isinstance(step, Mark))


#: How TOML calls a Python value's type, first match wins (a bool is an int to Python).
_TOML_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a float"),
    (str, "a string"),
    (dict, "a table"),
    (list, "an array"),
)


def _kind(value: object) -> str:
    """How TOML calls the type of ``value``."""
    return next((kind for cls, kind in _TOML_KINDS if isinstance(value, cls)), "a date or time")


def _shown(key: str) -> str:
    """A key as an error shows it: on one line (repr when not printable), at most 64 chars."""
    shown = key if key.isprintable() else repr(key)
    return shown if len(shown) <= 64 else shown[:63] + "…"


def _closest(word: str, choices: tuple[str, ...] | list[str]) -> str:
    """`` (did you mean 'X'?)`` for the closest choice, or nothing when none is close."""
    lowered = {choice.lower(): choice for choice in choices}
    near = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return f"; did you mean {lowered[near[0]]!r}?" if near else ""


class _Step:
    """Checks one step's table; every error names the file, the step and the key."""

    def __init__(self, source: str, number: int, inner: int | None = None) -> None:
        self.source = source
        self.step_number = number
        self.where = f"{source}: step {number}" + ("" if inner is None else f", do {inner}")
        self.inner = inner is not None

    def fail(self, key: str, problem: str) -> ScenarioError:
        return ScenarioError(f"{self.where}: {_shown(key)}: {problem}")

    def number(self, key: str, value: object, low: float, high: float, *, zero: bool) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number of seconds, not {_kind(value)}")
        low_ok = value >= low if zero else value > low
        if not (math.isfinite(value) and low_ok and value <= high):
            bound = ">=" if zero else ">"
            raise self.fail(key, f"must be {bound} {low:g} and <= {high:g} seconds, not {value}")
        return float(value)

    def string(self, key: str, value: object) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, not {_kind(value)}")
        return value

    def key(self, value: object) -> str:
        name = self.string("press", value)
        if name[: len(LITERAL)].lower() == LITERAL.lower():
            char = name[len(LITERAL) :]
            if len(char) != 1:
                raise self.fail(
                    "press",
                    f"{name!r}: a {LITERAL} key is one character (Lit_a); "
                    'type longer text with text = "..."',
                )
            if not char.isprintable():
                raise self.fail("press", f"{name!r}: {char!r} is not a printable character")
            return LITERAL + char
        canonical = _BY_LOWER.get(name.lower())
        if canonical is None:
            raise self.fail(
                "press",
                f"{name!r} is not an ECP key{_closest(name, ECP_KEYS)} "
                f"(keys: {', '.join(ECP_KEYS)}, or {LITERAL}<character>)",
            )
        if canonical in REFUSED_KEYS:
            raise self.fail("press", f"{canonical!r} is not allowed: {REFUSED_KEYS[canonical]}")
        return canonical

    def press(self, table: dict[str, object]) -> Press:
        key = self.key(table["press"])
        repeat = table.get("repeat", 1)
        if isinstance(repeat, bool) or not isinstance(repeat, int):
            raise self.fail("repeat", f"must be an integer, not {_kind(repeat)}")
        if not 1 <= repeat <= MAX_REPEAT:
            raise self.fail("repeat", f"must be from 1 to {MAX_REPEAT}, not {repeat}")
        interval = self.number("interval", table.get("interval", 0.0), 0, MAX_INTERVAL, zero=True)
        return Press(key, repeat, interval)

    def text(self, value: object) -> Text:
        text = self.string("text", value)
        if not text:
            raise self.fail("text", "is empty")
        if len(text) > MAX_TEXT:
            raise self.fail("text", f"is {len(text):,} characters; at most {MAX_TEXT:,}")
        bad = next((c for c in text if not c.isprintable()), None)
        if bad is not None:
            raise self.fail("text", f"{bad!r} is not a printable character")
        return Text(text)

    def launch(self, value: object) -> Launch:
        if not isinstance(value, dict):
            raise self.fail(
                "launch", f'must be a table such as {{ contentId = "1" }}, not {_kind(value)}'
            )
        if len(value) > MAX_PARAMS:
            raise self.fail("launch", f"has {len(value)} parameters; at most {MAX_PARAMS}")
        params: dict[str, str] = {}
        for name, param in value.items():
            if not _IDENTIFIER.match(name):
                raise self.fail(
                    f"launch.{name}", "a parameter name is a letter then letters, digits or _"
                )
            text = self.string(f"launch.{name}", param)
            if len(text) > MAX_PARAM_VALUE:
                raise self.fail(f"launch.{name}", f"is longer than {MAX_PARAM_VALUE} characters")
            params[name] = text
        return Launch(params)

    def mark(self, value: object) -> Mark:
        label = self.string("mark", value)
        if not label.strip():
            raise self.fail("mark", "is empty")
        if len(label) > MAX_LABEL:
            raise self.fail("mark", f"is {len(label)} characters; at most {MAX_LABEL}")
        if not label.isprintable():
            raise self.fail("mark", "has a character that is not printable")
        return Mark(label)

    def iterations(self, table: dict[str, object]) -> Iterations:
        if self.inner:
            raise self.fail("iterations", "iterations cannot be nested in iterations")
        for key in table:
            if key not in ITERATION_KEYS:
                raise self.fail(
                    key,
                    f"unknown key{_closest(key, ITERATION_KEYS)} (an iterations step has "
                    f"{', '.join(ITERATION_KEYS)})",
                )
        count = table["iterations"]
        if isinstance(count, bool) or not isinstance(count, int):
            raise self.fail("iterations", f"must be an integer, not {_kind(count)}")
        if not MIN_ITERATIONS <= count <= MAX_ITERATIONS:
            raise self.fail(
                "iterations", f"must be from {MIN_ITERATIONS} to {MAX_ITERATIONS}, not {count}"
            )
        if "mark" not in table:
            raise self.fail(
                "mark", 'missing: an iterations step names its marks (mark = "open details")'
            )
        label = self.mark(table["mark"]).label
        if len(label) > MAX_ITERATION_LABEL:
            raise self.fail(
                "mark",
                f"is {len(label)} characters; an iterations step's at most "
                f"{MAX_ITERATION_LABEL} (its marks add {ITERATION_SUFFIX.strip()}{MAX_ITERATIONS})",
            )
        if parse_iteration_mark(label) is not None:
            raise self.fail("mark", 'ends like an iteration mark ("x #2", "x #end"); rename it')
        raw = table.get("do")
        if raw is None or raw == []:
            raise self.fail("do", "no steps to repeat (add [[steps.do]] tables)")
        if not isinstance(raw, list):
            raise self.fail("do", f"must be a list of [[steps.do]] tables, not {_kind(raw)}")
        if len(raw) > MAX_STEPS:
            raise self.fail("do", f"{len(raw):,} steps; at most {MAX_STEPS:,}")
        inner = tuple(
            _Step(self.source, self.step_number, k).parse(step) for k, step in enumerate(raw, 1)
        )
        return Iterations(label, count, inner)  # type: ignore[arg-type]  # no Iterations inside

    def parse(self, table: object) -> Step:
        if not isinstance(table, dict):
            raise ScenarioError(f"{self.where}: must be a table ([[steps]]), not {_kind(table)}")
        if "iterations" in table:
            return self.iterations(table)
        if "do" in table:
            raise self.fail("do", "only an iterations step has do (iterations = N)")
        known = (*ACTIONS, *PRESS_OPTIONS)
        for key in table:
            if key not in known:
                raise self.fail(
                    key,
                    f"unknown key{_closest(key, known)} (a step has one of "
                    f"{', '.join(ACTIONS)}; a press may have {' and '.join(PRESS_OPTIONS)})",
                )
        actions = [key for key in ACTIONS if key in table]
        if not actions:
            raise ScenarioError(
                f"{self.where}: nothing to do: a step has one of {', '.join(ACTIONS)}"
            )
        if len(actions) > 1:
            raise self.fail(
                actions[1],
                f"{' and '.join(actions)} in one step: a step does one thing "
                "(make each its own [[steps]])",
            )
        action = actions[0]
        if action != "press":
            for option in PRESS_OPTIONS:
                if option in table:
                    raise self.fail(option, f"only a press step has {option} (this is a {action})")
            value = table[action]
            if action == "wait":
                return Wait(self.number("wait", value, 0, MAX_WAIT, zero=False))
            return getattr(self, action)(value)
        return self.press(table)


def parse_scenario(data: Mapping[str, object], source: str) -> Scenario:
    """The scenario of a parsed TOML document (``source`` names it in errors)."""
    for key in data:
        if key != "steps":
            raise ScenarioError(
                f"{source}: {_shown(key)}: unknown key{_closest(key, ['steps'])} "
                "(a scenario is a list of [[steps]])"
            )
    raw = data.get("steps")
    if raw is None or raw == []:
        raise ScenarioError(f'{source}: no steps (add [[steps]] tables, e.g. press = "Down")')
    if not isinstance(raw, list):
        raise ScenarioError(
            f"{source}: steps: must be a list of [[steps]] tables, not {_kind(raw)}"
        )
    if len(raw) > MAX_STEPS:
        raise ScenarioError(f"{source}: {len(raw):,} steps; at most {MAX_STEPS:,}")
    steps = tuple(_Step(source, n).parse(table) for n, table in enumerate(raw, 1))
    scenario = Scenario(steps, source)
    labels = [step.label for step in steps if isinstance(step, Iterations)]
    if len(set(labels)) < len(labels):
        twice = next(label for label in labels if labels.count(label) > 1)
        raise ScenarioError(
            f"{source}: two iterations steps are marked {_shown(twice)!r}; "
            "each needs its own label (their marks would mix)"
        )
    unrolled = scenario.unrolled_steps()
    if unrolled > MAX_STEPS:
        raise ScenarioError(
            f"{source}: {unrolled:,} steps with each iteration's; at most {MAX_STEPS:,}"
        )
    marks = scenario.marks()
    if marks > MAX_MARKS:
        raise ScenarioError(
            f"{source}: {marks:,} marks with each iteration's; a run keeps at most "
            f"{MAX_MARKS:,} (the rest would be lost)"
        )
    planned = scenario.planned_seconds()
    if planned > MAX_PLANNED_SECONDS:
        raise ScenarioError(
            f"{source}: the waits and intervals add up to {planned:,.0f} s; "
            f"a scenario plans at most {MAX_PLANNED_SECONDS:,.0f} s (24 hours)"
        )
    presses = scenario.presses()
    if presses > MAX_PRESSES:
        raise ScenarioError(
            f"{source}: {presses:,} key presses (repeats and typed characters); "
            f"at most {MAX_PRESSES:,}"
        )
    return scenario


def parse_scenario_text(text: str, source: str) -> Scenario:
    """The scenario of a TOML text; bad TOML says where (tomllib's line and column)."""
    try:
        data = tomltext.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{source}: not valid TOML: {error}") from None
    return parse_scenario(data, source)


def load_scenario(path: Path) -> Scenario:
    """The scenario in the TOML file ``path`` (errors name it as given): the one function
    here that reads a file (missing, unreadable, too big, not UTF-8: ScenarioError too)."""
    source = str(path)
    data = read_capped(
        path,
        MAX_FILE_BYTES,
        unreadable=lambda why: ScenarioError(f"{source}: cannot read: {why}"),
        too_big=lambda: ScenarioError(
            f"{source}: larger than {size(MAX_FILE_BYTES, exact=True)}; not a scenario"
        ),
    )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ScenarioError(
            f"{source}: not UTF-8 text (line {line}, byte {error.start + 1}); TOML files are UTF-8"
        ) from None
    return parse_scenario_text(text, source)
