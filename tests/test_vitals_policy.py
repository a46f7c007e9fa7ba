"""Device vitals and marks, the pure parts: where and when to ask chanperf, the summary, the
marks, the measurements waiting for a chunk, the ECP XML (issue 21 D)."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rokuprof.capture.config import CaptureConfig
from rokuprof.capture.machine import Received, RunMachine, RunPlan
from rokuprof.capture.vitals import (
    CONSOLE,
    CONSOLE_RETRY,
    ECP,
    LIMITED,
    NOT_AVAILABLE,
    NOT_AVAILABLE_INTERVAL,
    Marks,
    Outcome,
    Reading,
    SideData,
    VitalsState,
)
from rokuprof.device.chanperf import chanperf_from_xml
from rokuprof.sentry.side_measurements import (
    APP_MEMORY_MEASUREMENT,
    MAX_MARK_NAME,
    Measure,
    SideValues,
    mark_measure,
    mark_name,
    vitals_measures,
)

T0 = 1_800_000_000.0
R = Outcome.READING


def reading(t: float, cpu: int | None = 5, mem: int | None = 1 << 20) -> Reading:
    return Reading(t, cpu, mem)


# -- where and when ------------------------------------------------------------------------

#: (use_console, use_ecp, [(now, source asked, outcome, reading cpu or None)], the delays
#: answered, the summary at the end)
CASES = {
    "console readings": (
        True,
        True,
        [(0, CONSOLE, R, 7), (1, CONSOLE, R, 9), (2, CONSOLE, R, 3)],
        [1.0, 1.0, 1.0],
        {"source": "console", "readings": 3, "max_cpu_percent": 9, "unavailable": None},
    ),
    "not available: asked again in 10 s": (
        True,
        True,
        [(0, CONSOLE, Outcome.NOT_AVAILABLE, None), (10, CONSOLE, Outcome.NOT_AVAILABLE, None)],
        [NOT_AVAILABLE_INTERVAL, NOT_AVAILABLE_INTERVAL],
        {"source": None, "readings": 0, "max_cpu_percent": None, "unavailable": NOT_AVAILABLE},
    ),
    "console unreachable: ECP at once, the console again 30 s later": (
        True,
        True,
        [
            (0, CONSOLE, Outcome.UNREACHABLE, None),
            (0, ECP, R, 4),
            (1, ECP, R, 6),
            (CONSOLE_RETRY, CONSOLE, R, 2),
            (CONSOLE_RETRY + 1, CONSOLE, R, 2),
        ],
        [0.0, 1.0, 1.0, 1.0, 1.0],
        {"source": "console", "readings": 4, "max_cpu_percent": 6, "unavailable": None},
    ),
    "console unreachable, ECP limited: the console only": (
        True,
        True,
        [
            (0, CONSOLE, Outcome.UNREACHABLE, None),
            (0, ECP, Outcome.LIMITED, None),
            (CONSOLE_RETRY, CONSOLE, Outcome.UNREACHABLE, None),
            (CONSOLE_RETRY + 1, CONSOLE, Outcome.UNREACHABLE, None),
        ],
        [0.0, CONSOLE_RETRY, 1.0, 1.0],
        {
            "source": None,
            "readings": 0,
            "unavailable": f"{LIMITED}; the debug console cannot be reached (x)",
        },
    ),
    "no console, ECP limited: no more questions": (
        False,
        True,
        [(0, ECP, Outcome.LIMITED, None)],
        [None],
        {"source": None, "readings": 0, "max_cpu_percent": None, "unavailable": LIMITED},
    ),
    "a failed answer: asked again after the interval, same place": (
        True,
        True,
        [(0, CONSOLE, Outcome.FAILED, None), (1, CONSOLE, R, 1)],
        [1.0, 1.0],
        {"source": "console", "readings": 1, "max_cpu_percent": 1, "unavailable": None},
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_where_and_when_to_ask(case: str) -> None:
    use_console, use_ecp, steps, delays, summary = CASES[case]
    state = VitalsState(1.0, use_console, use_ecp)
    got = []
    for now, source, outcome, cpu in steps:
        assert state.route(T0 + now) == source, (now, source)
        r = None if cpu is None else reading(T0 + now, cpu)
        got.append(state.answered(source, outcome, T0 + now, r, why="x"))
    assert got == delays
    assert {k: state.summary()[k] for k in summary} == summary


def test_nowhere_to_ask_without_console_and_ecp() -> None:
    assert VitalsState(1.0, use_console=False, use_ecp=False).route(T0) is None


def test_a_reading_clears_why_there_were_none_and_maxima_ignore_missing_figures() -> None:
    state = VitalsState(1.0)
    state.answered(CONSOLE, Outcome.NOT_AVAILABLE, T0)
    assert state.unavailable == NOT_AVAILABLE
    state.answered(CONSOLE, R, T0 + 10, reading(T0 + 10, None, 3000))
    state.answered(CONSOLE, R, T0 + 11, reading(T0 + 11, 12, None))
    state.answered(CONSOLE, Outcome.UNREACHABLE, T0 + 12, why="gone")  # readings came: no why
    assert state.summary() == {
        "source": "console",
        "readings": 2,
        "max_cpu_percent": 12,
        "max_mem_bytes": 3000,
        "unavailable": None,
    }
    assert state.last == reading(T0 + 11, 12, None)


def test_a_reading_is_one_json_line() -> None:
    line = Reading(T0 + 0.12345, 7, 15_519_744).line()
    assert line.endswith("\n") and line.count("\n") == 1
    assert json.loads(line) == {"time": T0 + 0.123, "cpu_percent": 7, "mem_bytes": 15_519_744}
    assert json.loads(Reading(T0, None, None).line())["cpu_percent"] is None


# -- marks ---------------------------------------------------------------------------------


def test_marks_are_bounded_and_counted() -> None:
    marks = Marks(T0, limit=2)
    assert marks.add("home", T0 + 1.5) == {"label": "home", "time": T0 + 1.5, "offset": 1.5}
    assert marks.add("x" * 500, T0 + 2) is not None
    assert marks.add("late", T0 + 3) is None
    record = marks.record()
    assert [m["label"] for m in record["marks"]] == ["home", "x" * 200]
    assert record["marks_dropped"] == 1
    record["marks"].clear()  # a copy: the machine's record does not share the list
    assert len(marks.items) == 2


def test_side_data_before_a_session_changes_nothing_after_sets_the_record() -> None:
    machine = RunMachine(RunPlan("s", "p", {}, T0, CaptureConfig("h")))
    assert machine.handle(SideData({"vitals": {"readings": 1}})) == []
    machine.handle(Received(b"x", T0))  # the session opens (the bytes are not a profile)
    assert machine.record.vitals is None
    assert machine.handle(SideData({"marks": [{"label": "a"}], "marks_dropped": 2})) == []
    assert machine.record.marks == [{"label": "a"}] and machine.record.marks_dropped == 2
    assert machine.record.to_json()["marks_dropped"] == 2


# -- measurements --------------------------------------------------------------------------


@given(st.text(max_size=300))
def test_a_mark_name_is_safe_and_bounded(label: str) -> None:
    name = mark_name(label)
    assert re.fullmatch(r"mark\.[A-Za-z0-9_.-]+", name) and len(name) <= MAX_MARK_NAME


def test_mark_names_and_values() -> None:
    assert mark_name("details screen/ä 1") == "mark.details_screen_1"
    assert mark_name("") == mark_name("///") == "mark.mark"
    assert mark_measure("a", T0 + 1.25, T0) == Measure(
        "mark.a", "nanosecond", 1_250_000_000, T0 + 1.25
    )
    assert mark_measure("a", T0 - 1, T0).value == 0
    assert vitals_measures(T0, 7, None) == [Measure("cpu_usage", "percent", 7, T0)]


def test_side_values_wait_bounded_and_rename_the_memory_beside_the_heap() -> None:
    side = SideValues(max_values=2, max_names=2)
    for i in range(3):
        side.add(Measure("cpu_usage", "percent", i, T0 + i))
    side.add(Measure("memory_footprint", "byte", 10, T0), heap=True)
    side.add(Measure("mark.x", "nanosecond", 1, T0))  # a third name: over the bound
    side.add(Measure("cpu_usage", "percent", math.nan, T0))
    assert len(side) == 3 and side.dropped == 3
    assert side.take() == {
        APP_MEMORY_MEASUREMENT: {"unit": "byte", "values": [{"timestamp": T0, "value": 10}]},
        "cpu_usage": {
            "unit": "percent",
            "values": [{"timestamp": T0 + 1, "value": 1}, {"timestamp": T0 + 2, "value": 2}],
        },
    }
    assert side.take() is None and len(side) == 0


# -- the ECP XML ---------------------------------------------------------------------------

FULL = (
    '<chanperf><plugin id="dev"><cpu-percent><user>1</user><sys>6</sys></cpu-percent>'
    "<memory><anon>2785280</anon><file>12689408</file><shared>45056</shared>"
    "<used>15519744</used></memory></plugin><status>OK</status></chanperf>"
)

XML_CASES = {
    "ours": (FULL, (15156, 7)),
    "unknown elements ignored": (
        '<chanperf><fw>14</fw><plugin id="dev"><gpu>3</gpu><cpu-percent><user>2</user>'
        "<idle>90</idle></cpu-percent><memory><used>2048</used><swap>x</swap></memory>"
        "</plugin><status>OK</status></chanperf>",
        (2, 2),
    ),
    "a total wins; memory from its parts": (
        "<chanperf><plugin><cpu-percent><total>9</total><user>1</user></cpu-percent>"
        "<memory><anon>1024</anon><file>2048</file></memory></plugin></chanperf>",
        (3, 9),
    ),
    "missing figures are None": ("<chanperf><plugin/></chanperf>", (None, None)),
    "garbage numbers are None": (
        "<chanperf><plugin><cpu-percent><user>nan</user><sys>1e999</sys></cpu-percent>"
        "<memory><used>lots</used></memory></plugin></chanperf>",
        (None, None),
    ),
}


@pytest.mark.parametrize("case", XML_CASES, ids=list(XML_CASES))
def test_chanperf_xml_is_read_tolerantly(case: str) -> None:
    text, (mem_kib, cpu) = XML_CASES[case]
    perf = chanperf_from_xml(ET.fromstring(text))
    assert perf is not None and (perf.mem_kib, perf.cpu_percent) == (mem_kib, cpu)


@pytest.mark.parametrize(
    "text",
    [
        "<chanperf><status>FAILED</status><error>mem and cpu data not available</error></chanperf>",
        "<chanperf><status>OK</status></chanperf>",
    ],
)
def test_chanperf_xml_without_data_is_none(text: str) -> None:
    assert chanperf_from_xml(ET.fromstring(text)) is None
