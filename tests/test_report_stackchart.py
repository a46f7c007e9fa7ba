"""The report's stack chart in real headless Chromium: on a planted capture (a known function on a
known thread from 4 s to 6 s of a 10 s run) the frames under a time are the planted call path,
as the timeline's samples have it; hover shows the frame's function, ``file:line``, its duration
and figures; a click selects the function everywhere; wheel, keys and drag zoom and pan; a time
range dragged on the timeline is followed; the session's marks are drawn with their labels as
text; a hostile function name is text too; every interaction ends in a timed draw. A
screenshot is kept in ``test-artifacts/report/stack-chart.png`` (gitignored)."""

from __future__ import annotations

import math
import shutil

import pytest
from report_helpers import HOSTILE, HOSTILE_LABEL, START_MS, make_session

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import CALLS, CPU, MODULE, PATH, STRING, Footer
from rokuprof.export import export, input_from_bytes
from rokuprof.export.model import IDLE
from rokuprof.export.report.session import write_session_report
from rokuprof.simulator.app import AppConfig, SyntheticApp
from tests.viewers import REPO
from tests.viewers.report import model, open_reports, problems, steps_with

ARTIFACTS = REPO / "test-artifacts" / "report"
SAMPLE = REPO / "samples" / "cafe-tv-full.bsprof"
SECONDS = 10
STEPS = 80_000  # CPU entries per thread, 125 µs of wall each: 10 s
PLANTED = "plantedWork"
PLANT = (0.4, 0.6)  # the share of the main thread's entries (and so of the run) it takes
MAIN, RENDER = "MainThread", "RenderTask"
MAIN_FILE, RENDER_FILE = "pkg:/source/main.brs", "pkg:/components/Render.brs"
MARKS = [("launch", 1.0), (HOSTILE_LABEL, 5.0), ("end", 9.0)]


def planted_stream() -> bytes:
    """Two threads for 10 s: MainThread runs main > handleKey > idleLoop, except from 4 s to 6 s
    (the middle fifth of its entries, and so of the stream's bytes, which the converter spreads
    over the run) main > handleKey > plantedWork; RenderTask runs renderRoot > a hostile name
    throughout."""
    header = SyntheticApp(AppConfig(seed=3, line_data=False, memory_ops=False)).header(START_MS)
    names = [MAIN_FILE, MAIN, "main", "handleKey", "idleLoop", PLANTED, RENDER, "renderRoot"]
    entries: list = [(STRING, i, s) for i, s in enumerate([*names, HOSTILE, RENDER_FILE], 1)]
    entries += [(MODULE, 1, 2), (MODULE, 2, 7)]
    entries += [
        (PATH, 1, 0, 1, 0, 1, 1, 3),  # main
        (PATH, 2, 1, 0, 0, 1, 20, 4),  # handleKey
        (PATH, 3, 2, 0, 0, 1, 40, 5),  # idleLoop
        (PATH, 4, 2, 0, 0, 1, 60, 6),  # plantedWork
        (PATH, 5, 0, 2, 0, 10, 1, 8),  # renderRoot
        (PATH, 6, 5, 0, 0, 10, 30, 9),  # the hostile name
    ]
    a, b = (int(STEPS * share) for share in PLANT)
    idle, planted = (
        encode_entries([(CPU, p, 0, 50, 125), (CPU, 6, 0, 20, 125)], False) for p in (3, 4)
    )
    body = encode_entries(entries, False) + idle * a + planted * (b - a) + idle * (STEPS - b)
    body += encode_entries([(CALLS, 3, 400), (CALLS, 4, 100), (CALLS, 6, 600)], False)
    footer = build_footer(Footer(START_MS + SECONDS * 1000))
    return build_header(header) + body + END_MARKER + footer


def expected_frames(inp, module: int, seconds: float) -> list[tuple[str, str, int, float, float]]:
    """From the timeline's samples (what the chunks carry): the thread's frames at ``seconds``,
    root first, each ``(function, file, line, start, end)`` over the stretch of consecutive
    samples whose stacks share it and everything above it."""
    tl = inp.timeline
    runs = [r for r in tl.runs[module] if r[1] != IDLE]
    slot = seconds * tl.hz
    [i] = [k for k, (s, _, n) in enumerate(runs) if s <= slot < s + n]
    stack = lambda k: tuple(reversed(tl.stacks[runs[k][1]]))  # noqa: E731 - root first
    out = []
    for d in range(1, len(stack(i)) + 1):
        want = stack(i)[:d]
        lo = hi = i
        while (
            lo > 0
            and runs[lo - 1][0] + runs[lo - 1][2] == runs[lo][0]
            and stack(lo - 1)[:d] == want
        ):
            lo -= 1
        while (
            hi + 1 < len(runs)
            and runs[hi][0] + runs[hi][2] == runs[hi + 1][0]
            and stack(hi + 1)[:d] == want
        ):
            hi += 1
        f = inp.frames[want[-1]]
        end = runs[hi][0] + runs[hi][2]
        out.append((f.function, f.file, f.line, runs[lo][0] / tl.hz, end / tl.hz))
    return out


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The planted capture's session report (with marks) and the full sample's report, each
    driven through the stack chart (the sample's screenshot kept)."""
    directory = tmp_path_factory.mktemp("stack")
    data = planted_stream()
    planted = write_session_report(make_session(directory / "planted", data, marks=MARKS))
    sample = directory / "cafe-tv-full.html"
    sample.write_bytes(export(input_from_bytes(SAMPLE.read_bytes()), "report"))
    m = model(planted.read_text())
    thread = {m["strings"][name]: t for t, (_, name) in enumerate(m["threads"])}
    probes = {
        planted.stem: [
            {"thread": thread[MAIN], "seconds": 5.0},
            {"thread": thread[RENDER], "seconds": 5.0},
        ]
    }
    steps = steps_with(directory, "stack_chart.mjs", {"probes": probes, "shot": sample.stem})
    planted_page, sample_page = open_reports([planted, sample], steps=steps, shots=directory)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sample_page["shots"]["stack"], ARTIFACTS / "stack-chart.png")
    return {
        "planted": planted_page,
        "sample": sample_page,
        "input": input_from_bytes(data),
        "model": m,
        "thread": thread,
    }


def fmt_seconds(s: float) -> str:
    """The page's fmtSeconds (format.js), for durations under a minute."""

    def sig(v: float) -> str:
        a = abs(v)
        return f"{v:.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}"

    if s == 0:
        return "0 s"
    if abs(s) >= 1:
        return f"{sig(s)} s"
    if abs(s) >= 1e-3:
        return f"{sig(s * 1e3)} ms"
    return f"{sig(s * 1e6)} µs"


def span(window: dict) -> float:
    return window["t1"] - window["t0"]


def test_the_frames_under_a_time_are_the_planted_call_path(pages):
    result = pages["planted"]
    assert problems(result) == [] and len(result["requests"]) == 1
    main, render = result["steps"]["probes"]
    got = [(f["name"], f["file"], f["line"], f["start"], f["end"]) for f in main["stack"]]
    assert [g[0] for g in got] == ["main", "handleKey", PLANTED]
    assert got == expected_frames(pages["input"], 1, 5.0)
    assert [(f["name"], f["file"]) for f in render["stack"]] == [
        ("renderRoot", RENDER_FILE),
        (HOSTILE, RENDER_FILE),
    ]
    assert [
        g[:5]
        for g in ((f["name"], f["file"], f["line"], f["start"], f["end"]) for f in render["stack"])
    ] == expected_frames(pages["input"], 2, 5.0)
    # the planted function's frame is the middle fifth of the run, to the sample
    _, _, _, start, end = got[-1]
    assert (round(start), round(end)) == (4, 6)


def test_hover_shows_the_frame_its_place_duration_and_figures(pages):
    for probe in pages["planted"]["steps"]["probes"]:
        assert [t["depth"] for t in probe["tips"]] == list(range(1, len(probe["stack"]) + 1))
        for frame, hover in zip(probe["stack"], probe["tips"], strict=True):
            tip = hover["tip"]
            assert hover["hit"]["node"] == frame["node"]
            assert tip["name"] == frame["name"]
            assert tip["where"].startswith(f"{frame['file']}:{frame['line']} · ")
            start, end = frame["start"], frame["end"]
            run = f"{fmt_seconds(end - start)}, from {fmt_seconds(start)} to {fmt_seconds(end)}"
            assert tip["rows"]["frame"] == ["This frame", run]
            assert tip["rows"]["wall"][1].endswith(" self") and tip["rows"]["cpu"][1].endswith(
                " self"
            )


def test_a_hostile_name_is_text(pages):
    result = pages["planted"]
    [_, render] = result["steps"]["probes"]
    assert render["tips"][-1]["tip"]["name"] == HOSTILE
    assert result["steps"]["elements"] == 0 and result["dialogs"] == [] and result["scripts"] == 2


def test_a_click_selects_the_function_everywhere(pages):
    steps = pages["planted"]["steps"]
    m = pages["model"]
    names = [m["strings"][i] for i in m["functions"]["name"]]
    selected = steps["selected"]
    assert selected["chart"]["selected"] == names.index(PLANTED)
    assert selected["searchBox"] == PLANTED == selected["chart"]["search"]
    assert selected["picked"] == f"{PLANTED} {MAIN_FILE}:60 ×"
    assert selected["flameMatches"].startswith("1 function in 1 frame: ")
    assert steps["unselected"]["chart"]["selected"] == -1 and steps["unselected"]["searchBox"] == ""


def test_whole_run_is_aligned_with_the_timeline(pages):
    for result in (pages["planted"], pages["sample"]):
        steps = result["steps"]
        chart, align = steps["open"]["chart"], steps["align"]
        geo = align["timeline"]
        assert (chart["t0"], chart["t1"]) == (0, geo["slots"] / geo["hz"])
        assert chart["plot"] == geo["plot"]
        assert align["stackX"] + chart["left"] == align["timelineX"] + geo["left"]


def test_wheel_keys_and_drag_zoom_and_pan(pages):
    for result in (pages["planted"], pages["sample"]):
        acts = {a["what"]: a for a in result["steps"]["acts"]}
        slots_s = (
            result["steps"]["align"]["timeline"]["slots"]
            / result["steps"]["align"]["timeline"]["hz"]
        )
        wheel = acts["wheel in"]
        assert span(wheel["after"]) == pytest.approx(span(wheel["before"]) * math.exp(-0.8))
        mid = lambda w: (w["t0"] + w["t1"]) / 2  # noqa: E731 - the pointer is over the middle
        assert abs(mid(wheel["after"]) - mid(wheel["before"])) <= span(wheel["before"]) / 500
        out = acts["wheel out"]
        assert span(out["after"]) == pytest.approx(span(out["before"]) * math.exp(0.4))
        assert span(acts["key +"]["after"]) == pytest.approx(span(acts["key +"]["before"]) / 1.5)
        assert span(acts["key -"]["after"]) == pytest.approx(span(acts["key -"]["before"]) * 1.5)
        right = acts["key ArrowRight"]
        assert right["after"]["t0"] - right["before"]["t0"] == pytest.approx(
            0.1 * span(right["before"])
        )
        left = acts["key ArrowLeft"]
        assert left["after"]["t0"] == pytest.approx(right["before"]["t0"])
        drag = acts["drag"]
        plot = result["steps"]["open"]["chart"]["plot"]
        moved = drag["after"]["t0"] - drag["before"]["t0"]
        assert moved == pytest.approx(200 / plot * span(drag["before"]), rel=0.02)
        assert span(drag["after"]) == pytest.approx(span(drag["before"]))
        assert acts["fit"]["after"] == {"t0": 0, "t1": slots_s, "top": acts["fit"]["before"]["top"]}


def test_the_selected_time_range_is_followed(pages):
    for result in (pages["planted"], pages["sample"]):
        steps = result["steps"]
        rng, hz = steps["range"]["range"], steps["range"]["hz"]
        assert rng is not None
        after = steps["range"]["after"]
        assert (after["t0"], after["t1"]) == (rng[0] / hz, rng[1] / hz)
        zoomed = steps["rangeZoom"]["after"]
        assert rng[0] / hz < zoomed["t0"] < zoomed["t1"] < rng[1] / hz
        slots = steps["align"]["timeline"]["slots"]
        assert steps["rangeCleared"]["t0"] == 0 and steps["rangeCleared"]["t1"] == slots / hz


def test_marks_are_drawn_with_their_labels_as_text(pages):
    steps = pages["planted"]["steps"]
    chart, geo = steps["marksChart"], steps["align"]["timeline"]
    assert [(m["label"], m["at"], m["shown"], m["count"]) for m in steps["marks"]] == [
        (label, at, label, 1) for label, at in MARKS
    ]
    for mark in steps["marks"]:
        x = chart["left"] + mark["at"] * geo["hz"] / geo["slots"] * chart["plot"]
        assert abs(mark["x"] - x) <= 1, mark
    assert HOSTILE_LABEL in pages["planted"]["bodyText"]


def test_every_interaction_draws(pages):
    """Opening the chart and each interaction ended in a draw the page timed (how fast: the
    stack chart's rows of benchmarks/report.py, against the 100 ms budget of issue 22; not a
    bound on a shared machine's clock)."""
    for name, result in (("planted", pages["planted"]), ("sample", pages["sample"])):
        assert problems(result) == []
        opened = result["steps"]["open"]["chart"]
        times = [opened["lastMs"], *result["times"]]
        print(f"{name}: open {times[0]:.1f} ms, interactions max {max(times[1:]):.1f} ms")
        assert opened["drawn"] >= 1 and len(times) > 5, times
        assert all(isinstance(t, int | float) and t >= 0 for t in times), times
