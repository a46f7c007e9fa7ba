"""A session's marks and device vitals in the report: read from ``session.json`` and
``vitals.jsonl`` (real files), checked and bounded into the model, a note for what was skipped;
``write_session_report``, ``rokuprof report SESSION``, ``rokuprof export SESSION -f report`` and
the end-of-run ``report`` export make the same page; a plain capture's page does not change."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from report_helpers import (
    HOSTILE_LABEL,
    START,
    make_session,
    run_cli,
    stream,
    vitals_lines,
)

from rokuprof.capture.exports import export_session
from rokuprof.export import export, input_from_bytes
from rokuprof.export.report.session import (
    MAX_RECORD_BYTES,
    REPORT_FILE,
    load_session_capture,
    read_extras,
    write_session_report,
)
from rokuprof.export.report.timeline_extras import (
    MAX_LABEL,
    MAX_LINE,
    MAX_POINTS,
    VitalsReader,
    read_marks,
    timeline_extras,
)
from tests.viewers.report import model


def run_export(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", "export", *args],
        capture_output=True,
        timeout=120,
        check=False,
    )


CAPTURE = stream(6.0)  # 607 slots at 101 Hz: the timeline spans 607/101 s from START
SPAN = 607 / 101


def extras_of(session) -> dict | None:
    return read_extras(session, load_session_capture(session))


def test_marks_and_vitals_reach_the_model_in_seconds_since_the_run_start(tmp_path):
    readings = [(t / 2, 10 + t, 1_000_000 + 4096 * t) for t in range(12)]
    session = make_session(
        tmp_path / "s",
        CAPTURE,
        marks=[("home", 1.0), (HOSTILE_LABEL, 2.25), ("", 3.5)],
        vitals=vitals_lines(readings),
    )
    path = write_session_report(session)
    assert path == session / REPORT_FILE
    got = model(path.read_text())["session"]
    assert got == {
        "marks": [[1.0, "home"], [2.25, HOSTILE_LABEL], [3.5, "(unnamed)"]],
        "cpu": [x for t, cpu, _ in readings for x in (t, cpu)],
        "mem": [x for t, _, mem in readings for x in (t, mem)],
        "readings": 12,
        "notes": [],
    }
    assert HOSTILE_LABEL not in path.read_text()  # embedded as data, < and > escaped
    assert not list(session.glob("*.tmp"))


def test_bad_lines_are_skipped_and_said_once(tmp_path):
    good = vitals_lines([(1.0, 20, 5000), (2.0, None, 6000), (3.0, 30, None)])
    bad = [
        "not json at all",
        "[1, 2, 3]",  # JSON, not an object
        json.dumps({"time": "soon", "cpu_percent": 1, "mem_bytes": 1}),
        json.dumps({"cpu_percent": 1, "mem_bytes": 1}),  # no time
        f'{{"time": {START + 1}, "cpu_percent": NaN, "mem_bytes": 1}}',
        '{"time": Infinity, "cpu_percent": 1, "mem_bytes": 1}',
        json.dumps({"time": START + 1, "cpu_percent": "12", "mem_bytes": 1}),
        json.dumps({"time": START + 1, "cpu_percent": True, "mem_bytes": 1}),
        json.dumps({"time": START + 1, "cpu_percent": 1, "mem_bytes": -5}),
        json.dumps({"time": START + 1, "cpu_percent": 1, "mem_bytes": 10**400}),  # no float
        json.dumps({"time": 10**400, "cpu_percent": 1, "mem_bytes": 1}),
        json.dumps({"time": START - 30, "cpu_percent": 1, "mem_bytes": 1}),  # before the run
        json.dumps({"time": START + 60, "cpu_percent": 1, "mem_bytes": 1}),  # after it
        "",  # blank lines are nothing
        "[" * 100_000,  # deeper than the parser goes
        "x" * (3 * MAX_LINE),  # longer than a line is read
    ]
    torn = json.dumps({"time": START + 4, "cpu_percent": 9, "mem_bytes": 9})[:-9]
    session = make_session(
        tmp_path / "s",
        CAPTURE,
        marks=[
            ("ok", 0.5),
            {"label": 7, "time": START + 1},
            {"label": "no time"},
            "not a mark",
            {"label": "late", "time": START + 99},
            {"label": "nan", "time": float("nan")},
            {"label": "huge", "time": 10**400},
        ],
        vitals=good + "\n".join(bad) + "\n" + torn,
    )
    got = extras_of(session)
    assert got["marks"] == [[0.5, "ok"]]
    assert got["cpu"] == [1.0, 20, 3.0, 30] and got["mem"] == [1.0, 5000, 2.0, 6000]
    assert got["readings"] == 3
    assert got["notes"] == [
        "session.json: 5 marks without a label and a time skipped",
        "session.json: 1 mark outside the run skipped",
        "vitals.jsonl: 14 lines skipped (3 not JSON, 1 cut off at the end, 10 not a reading)",
        "vitals.jsonl: 2 readings outside the run skipped",
    ]
    page = write_session_report(session).read_text()
    assert all(note in page for note in got["notes"])


def test_times_a_second_outside_the_run_are_drawn_at_its_edges(tmp_path):
    session = make_session(
        tmp_path / "s",
        CAPTURE,
        marks=[("early", -0.5), ("late", SPAN + 0.75)],
        vitals=vitals_lines([(-0.25, 1, 2), (SPAN + 0.99, 3, 4), (SPAN + 1.01, 5, 6)]),
    )
    got = extras_of(session)
    edge = round(SPAN, 3)
    assert got["marks"] == [[0.0, "early"], [edge, "late"]]
    assert got["cpu"] == [0.0, 1, edge, 3]
    assert got["notes"] == ["vitals.jsonl: 1 reading outside the run skipped"]


def test_a_long_run_is_drawn_with_at_most_max_points_keeping_its_peaks(tmp_path):
    n = 20_000
    readings = [(i * SPAN / n, i % 50, 1000 + i) for i in range(n)]
    readings[12_345] = (readings[12_345][0], 97, 9_999_999)  # the peak, in one reading
    readings[777] = (readings[777][0], 0, 3)  # the lowest memory
    session = make_session(tmp_path / "s", CAPTURE, vitals=vitals_lines(readings))
    got = extras_of(session)
    cpu, mem = got["cpu"][1::2], got["mem"][1::2]
    assert len(cpu) <= MAX_POINTS and len(mem) <= MAX_POINTS
    assert max(cpu) == 97 and max(mem) == 9_999_999 and min(mem) == 3
    times = got["cpu"][0::2]
    assert times == sorted(times)
    assert got["readings"] == n
    assert got["notes"] == [
        f"CPU: 20,000 readings drawn as {len(cpu):,} points "
        "(the lowest and highest of each stretch of time)",
        f"memory: 20,000 readings drawn as {len(mem):,} points "
        "(the lowest and highest of each stretch of time)",
    ]


def test_thinning_keeps_each_buckets_lowest_and_highest():
    vitals = VitalsReader(origin=100.0, span=10.0, limit=4)  # 2 buckets of 5 s
    for i, cpu in enumerate([5, 9, 1, 7, 3, 2, 8, 4, 6, 0]):
        vitals.feed(json.dumps({"time": 100 + i, "cpu_percent": cpu, "mem_bytes": None}).encode())
    vitals.finish()
    assert vitals.cpu.result() == [(1, 9), (2, 1), (6, 8), (9, 0)]
    assert vitals.mem.result() == [] and vitals.readings == 10


def test_without_a_run_start_nothing_can_be_placed():
    vitals = VitalsReader(origin=None, span=10.0)
    vitals.feed(b'{"time": 5, "cpu_percent": 1, "mem_bytes": 2}\n')
    record = {"marks": [{"label": "a", "time": 5}]}
    assert timeline_extras(record, vitals, None, 10.0)["notes"] == [
        "session.json: 1 mark with no run start to place skipped",
        "vitals.jsonl: 1 reading with no run start to place skipped",
    ]


def test_marks_are_bounded_and_their_labels_cut():
    record = {
        "marks": [{"label": "x" * 500, "time": 10.0}]
        + [{"label": f"m{i}", "time": 10 + i / 100} for i in range(30)],
        "marks_dropped": 7,
    }
    marks, notes = read_marks(record, 10.0, 5.0, limit=20)
    assert len(marks) == 20 and marks[0] == [0.0, "x" * (MAX_LABEL - 1) + "…"]
    assert [m[1] for m in marks[1:]] == [f"m{i}" for i in range(19)]
    assert notes == [
        "session.json: 11 more marks not drawn (the report draws the first 20)",
        "session.json: 7 more marks past the capture's limit, not kept",
    ]
    assert read_marks({"marks": "oops"}, 10.0, 5.0) == (
        [],
        ["session.json: its marks are not a list (skipped)"],
    )


def test_a_broken_session_json_and_unavailable_vitals_are_said(tmp_path):
    session = make_session(tmp_path / "s", CAPTURE)
    (session / "session.json").write_text('{"marks": [')
    assert extras_of(session)["notes"] == ["session.json: not JSON; no marks drawn"]
    (session / "session.json").write_bytes(b" " * (MAX_RECORD_BYTES + 1))
    assert extras_of(session)["notes"] == ["session.json: larger than 16 MiB; no marks drawn"]
    why = "the device has no CPU or memory figures for this app"
    make_session(session, CAPTURE, record={"vitals": {"readings": 0, "unavailable": why}})
    assert extras_of(session) == {
        "marks": [],
        "cpu": [],
        "mem": [],
        "readings": 0,
        "notes": [f"no device vitals: {why}"],
    }


def test_a_session_without_marks_or_vitals_makes_the_plain_page(tmp_path):
    session = make_session(tmp_path / "s", CAPTURE, vitals="")
    assert extras_of(session) is None
    plain = export(input_from_bytes(CAPTURE), "report")
    assert write_session_report(session).read_bytes() == plain
    (session / "session.json").unlink()
    (session / "vitals.jsonl").unlink()
    assert write_session_report(session).read_bytes() == plain


def test_report_command_and_write_session_report_make_the_same_page(tmp_path):
    session = make_session(
        tmp_path / "s",
        CAPTURE,
        marks=[("a", 1.0)],
        vitals=vitals_lines([(1.0, 5, 6)]) + "{torn",
    )
    done = run_cli(str(session))
    assert done.returncode == 0, done.stderr
    assert (session / "capture.report.html").read_bytes() == (
        write_session_report(session).read_bytes()
    )
    # a plain .bsprof beside it: no session, no marks
    capture = tmp_path / "run.bsprof"
    capture.write_bytes(CAPTURE)
    assert run_cli(str(capture)).returncode == 0
    assert "session" not in model((tmp_path / "run.report.html").read_text())


def test_write_session_report_without_a_capture_raises_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_session_report(tmp_path)


def test_reading_stops_after_max_lines_and_says_so():
    vitals = VitalsReader(origin=0.0, span=10.0, max_lines=3)
    for i in range(3):
        vitals.feed(json.dumps({"time": i, "cpu_percent": i, "mem_bytes": None}).encode() + b"\n")
    assert not vitals.cut and vitals.notes() == []
    vitals.feed(b'{"time": 3, "cpu_percent": 3, "mem_bytes": null}\n')
    vitals.finish()
    assert vitals.cut and vitals.cpu.result() == [(0, 0), (1, 1), (2, 2)]
    assert vitals.notes() == ["vitals.jsonl: only its first 3 lines were read"]


def test_the_end_of_run_report_export_draws_the_sessions_marks_and_vitals(tmp_path):
    session = make_session(
        tmp_path / "s", CAPTURE, marks=[("a", 1.0)], vitals=vitals_lines([(1.0, 5, 6)])
    )
    outcome = export_session(session, ["report", "folded"])
    assert outcome.errors == {} and outcome.written["report"]["file"] == "capture.report.html"
    page = (session / "capture.report.html").read_bytes()
    assert page == write_session_report(session).read_bytes()
    assert model(page.decode())["session"]["marks"] == [[1.0, "a"]]


def test_export_command_of_a_session_draws_its_marks_too(tmp_path):
    session = make_session(tmp_path / "s", CAPTURE, marks=[("a", 1.0)])
    done = run_export(str(session), "-f", "report,folded")
    assert done.returncode == 0, done.stderr
    page = (session / "capture.report.html").read_bytes()
    assert page == write_session_report(session).read_bytes()
    piped = run_export(str(session), "-f", "report", "-o", "-")
    assert piped.returncode == 0 and piped.stdout == page


def test_text_that_is_not_utf8_is_replaced_not_a_traceback(tmp_path):
    why = "no figures \ud800 here"  # json.dumps writes the lone surrogate as \ud800: valid JSON
    session = make_session(
        tmp_path / "s",
        CAPTURE,
        marks=[("a\udfffb", 1.0)],
        record={"vitals": {"readings": 0, "unavailable": why}},
    )
    got = model(write_session_report(session).read_text())["session"]
    assert got["marks"] == [[1.0, "a\ufffdb"]]
    assert got["notes"] == ["no device vitals: no figures \ufffd here"]


def test_a_fifo_or_a_directory_in_place_of_the_files_is_said_not_waited_on(tmp_path):
    session = make_session(tmp_path / "s", CAPTURE, marks=[("a", 1.0)])
    os.mkfifo(session / "vitals.jsonl")  # nobody writes it: reading it would wait forever
    assert extras_of(session)["notes"] == [
        "vitals.jsonl: cannot be read (not a regular file); no vitals drawn"
    ]
    (session / "vitals.jsonl").unlink()
    (session / "vitals.jsonl").mkdir()
    (session / "session.json").unlink()
    os.mkfifo(session / "session.json")
    assert extras_of(session)["notes"] == [
        "session.json: cannot be read (not a regular file); no marks drawn",
        "vitals.jsonl: cannot be read (not a regular file); no vitals drawn",
    ]
