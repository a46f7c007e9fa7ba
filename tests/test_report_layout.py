"""The report's and the A/B page's layout (issue 28, item 7: "pages lead with the answer"), in
headless Chromium at a laptop's 1366x768 and at 800x700 (the steps are
tests/viewers/report_layout.mjs): the chosen view's first rows are inside the viewport, idle
frames are hidden by default (the toggle shows them and the choice is kept), Bottom-up starts on
the top function that is not a wait, a thread has one colour by its name (the same on the report
and on the A/B page, though the thread's position differs), paths are shortened at ``/`` with the
whole path in the title, and the timeline collapses and stays so."""

from __future__ import annotations

import json
import subprocess

import pytest
from diff_helpers import diff_in
from hypothesis import given, settings
from hypothesis import strategies as st
from report_helpers import START_MS, make_session, run_cli, stream, vitals_lines

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import CALLS, CPU, MODULE, PATH, STRING, Footer
from rokuprof.simulator.app import AppConfig, SyntheticApp
from tests.viewers import REPO, VIEWERS, need_command
from tests.viewers.report import open_reports, problems

STEPS = VIEWERS / "report_layout.mjs"
LOADER, MAIN = "ContentLoaderTask", "main"
MAIN_BRS = "pkg:/source/main.brs"
DEEP = "pkg:/components/screens/home/widgets/PosterGridRenderer.brs"
LOADER_BRS = "pkg:/components/tasks/content/loaders/ContentLoaderTask.brs"
ONE_LONG_NAME = "pkg:/source/AnalyticsReportingForPlaybackSessionsAndAdBreaksHandler.brs"
#: path id -> (caller, function, file, thread of a root)
PATHS = {
    1: (0, "loaderMain", LOADER_BRS, LOADER),
    2: (1, "parseFeed", LOADER_BRS, None),
    3: (0, "main", MAIN_BRS, MAIN),
    4: (3, "waitPort", MAIN_BRS, None),
    5: (3, "renderHomeScreen", DEEP, None),
    6: (5, "reportImpression", ONE_LONG_NAME, None),
}
WALL_MS = {1: 1, 2: 9, 3: 1, 4: 30, 5: 12, 6: 4}  # per repetition; waitPort the most
REPS = 200


def planted(loader_module: int = 1) -> bytes:
    """Two threads (the loader's module ID first or second: its position), an idle waitPort on
    top, long and very long paths."""
    header = SyntheticApp(AppConfig(seed=3, name="Layout")).header(START_MS)
    names = sorted({f for _, f, _, _ in PATHS.values()} | {MAIN_BRS, DEEP, LOADER_BRS})
    names = sorted(set(names) | {ONE_LONG_NAME, LOADER, MAIN})
    sid = {name: i + 1 for i, name in enumerate(names)}
    entries: list = [(STRING, i, name) for name, i in sid.items()]
    main_module = 3 - loader_module
    entries += [(MODULE, loader_module, sid[LOADER]), (MODULE, main_module, sid[MAIN])]
    for pid, (caller, function, file, thread) in PATHS.items():
        module = (loader_module if thread == LOADER else main_module) if caller == 0 else 0
        entries.append((PATH, pid, caller, module, 1, sid[file], 10 * pid, sid[function]))
    for _ in range(REPS):
        entries += [(CPU, pid, 1, ms * 5, ms * 1000) for pid, ms in WALL_MS.items()]
    entries += [(CALLS, pid, REPS) for pid in PATHS]
    busy_ms = REPS * sum(WALL_MS.values())
    body = build_header(header) + encode_entries(entries, True) + END_MARKER
    return body + build_footer(Footer(START_MS + busy_ms + 1000))


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("layout")
    (tmp / "app.bsprof").write_bytes(stream(20.0, line_data=True, memory_ops=True))
    (tmp / "planted.bsprof").write_bytes(planted())
    (tmp / "swapped.bsprof").write_bytes(planted(loader_module=2))  # the loader second
    for name in ("app", "planted"):
        proc = run_cli(str(tmp / f"{name}.bsprof"), "-o", str(tmp / f"{name}.html"))
        assert proc.returncode == 0, proc.stderr
    # a profile session's page, as the demo leaves it: marks and the device's vitals too
    readings = [(t / 4, (t * 7) % 100, 2_000_000 + 1000 * t) for t in range(80)]
    session = make_session(
        tmp / "session",
        stream(20.0, line_data=True, memory_ops=True),
        marks=[("browse", 2.0), ("details", 9.0), ("play", 14.0)],
        vitals=vitals_lines(readings),
    )
    proc = run_cli(str(session), "-o", str(tmp / "session.html"))
    assert proc.returncode == 0, proc.stderr
    proc = diff_in(tmp, "planted.bsprof", "swapped.bsprof", "--html", "ab.html")
    assert proc.returncode == 0, proc.stderr
    names = ("app", "session", "planted", "ab")
    results = open_reports([tmp / f"{n}.html" for n in names], steps=STEPS)
    out = {}
    for name, result in zip(names, results, strict=True):
        assert problems(result) == [], (name, problems(result))
        out[name] = result["steps"]
    return out


def test_idle_is_hidden_by_default_and_shown_by_the_toggle(pages):
    for name in ("app", "planted"):
        idle = pages[name]["idle"]
        first, shown, kept = idle["initial"], idle["shown"], idle["reloaded"]
        assert "waitPort" in first["waits"]
        assert first["checked"] is True
        assert "waitPort" not in first["functions"] and first["functions"], first
        # Bottom-up starts on the top function that is not a wait, the Functions tab's first row
        assert first["selected"] == first["functions"][0], first
        assert shown["checked"] is False
        assert shown["functions"][0] == "waitPort", shown  # the most wall time, once shown
        assert shown["selected"] == first["selected"], shown  # still not the wait
        assert kept["checked"] is False and "waitPort" in kept["functions"]  # the choice is kept


def rgb(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.removeprefix("rgb(").removesuffix(")").split(","))


def test_a_thread_has_one_colour_by_its_name(pages):
    for name in ("app", "session", "planted", "ab"):
        for lane in pages[name]["lanes"]:  # the lane is drawn in its label's colour
            drawn, label = rgb(lane["drawn"]), rgb(lane["colour"])
            assert max(abs(a - b) for a, b in zip(drawn, label, strict=True)) <= 2, (name, lane)
    report = {lane["thread"]: lane["colour"] for lane in pages["planted"]["lanes"]}
    ab = {lane["thread"]: lane["colour"] for lane in pages["ab"]["lanes"]}
    # the loader is the first thread of the report and the second on the A/B page (B's order)
    assert list(report) == [LOADER, MAIN] and list(ab) == [MAIN, LOADER]
    assert report == ab
    assert report[LOADER] != report[MAIN]
    app = {lane["thread"]: lane["colour"] for lane in pages["app"]["lanes"]}
    assert len(app) == 4 and len(set(app.values())) == 4  # distinct on one page
    assert all(c.startswith("rgb(") for c in app.values())


def test_paths_are_shortened_at_slashes_with_the_whole_path_in_the_title(pages):
    for name in ("planted", "ab"):
        cells = pages[name]["paths"]["functions"] + pages[name]["paths"]["bottomup"]
        assert cells, name
        short = 0
        for cell in cells:
            whole, shown = cell["title"], cell["text"]
            assert whole.startswith("pkg:/"), cell
            if shown != whole:
                short += 1
                assert shown.startswith("…/") and whole.endswith(shown[1:]), cell
            # the file's name (and line) whole, nothing clipped by the cell
            assert shown.endswith(whole.rsplit("/", 1)[1]), cell
            assert cell["scroll"] <= cell["client"] + 1, cell
        assert short, name
        texts = {c["title"]: c["text"] for c in cells}
        assert texts[f"{ONE_LONG_NAME}:60"] == f"…/{ONE_LONG_NAME.rsplit('/', 1)[1]}:60"


def rows_on_screen(where: dict) -> bool:
    rows = where["rows"]
    return bool(rows) and all(r["seen"] and r["shown"] and not r.get("clipped") for r in rows)


def test_the_chosen_view_starts_on_the_first_screen(pages):
    """At 1366x768 each view's first rows (the flame graph's root row, a table's first three)
    are inside the window, not under anything; at 800x700 some of them are."""
    for name in ("app", "session", "ab"):
        for view, where in pages[name]["wide"].items():
            assert rows_on_screen(where), (name, view, where)
    for name in ("app", "session"):
        narrow = pages[name]["narrow"]
        assert rows_on_screen(narrow["flame"]), (name, narrow["flame"])
        for view in ("functions", "bottomup"):
            assert narrow[view]["rows"][0]["seen"] and narrow[view]["rows"][0]["shown"], narrow


def test_the_timeline_collapses_and_stays_collapsed(pages):
    for name in ("app", "session"):
        box = pages[name]["timeline"]
        assert box["initial"]["expanded"] == "true" and box["initial"]["canvasShown"]
        assert box["collapsed"]["expanded"] == "false" and not box["collapsed"]["canvasShown"]
        assert box["collapsed"]["height"] < 40 < box["initial"]["height"], box
        assert box["reloaded"] == box["collapsed"]  # the choice is kept
        assert (
            box["reopened"]["canvasShown"] and box["reopened"]["height"] == box["initial"]["height"]
        )


# ---------------------------------------------------------------- shortPath, the page's own code

FORMAT_JS = REPO / "rokuprof" / "export" / "report" / "assets" / "src" / "format.js"
SEGMENT = st.text(st.sampled_from("abcXYZ_.-09é"), min_size=1, max_size=30)


def short_paths(cases: list[tuple[str, int]]) -> list[str]:
    """The page's shortPath (imported from its module, format.js) on each ``(path, room)``, in
    one node process."""
    node = need_command("node", "apt-get install nodejs")
    script = f"import {{ shortPath }} from {json.dumps(FORMAT_JS.as_uri())};"
    script += "process.stdout.write(JSON.stringify(JSON.parse(process.argv[1])"
    script += ".map(([p, r]) => shortPath(p, r))));"
    proc = subprocess.run(
        [node, "--input-type=module", "-e", script, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(SEGMENT, min_size=1, max_size=8).map(lambda s: "pkg:/" + "/".join(s)),
            st.integers(min_value=1, max_value=60),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_short_paths_keep_whole_names_and_fit_when_they_can(cases):
    for (path, room), shown in zip(cases, short_paths(cases), strict=True):
        name = "/" + path.rsplit("/", 1)[1]
        if len(path) <= room:
            assert shown == path
            continue
        # "…" and a suffix of the path that starts at a "/": no name is cut
        assert shown.startswith("…/") and path.endswith(shown[1:]), (path, room, shown)
        assert shown.endswith(name)
        if len(name) + 1 <= room:  # it fits, and is the longest suffix that does
            assert len(shown) <= room
            longer = path[: len(path) - len(shown) + 1].rsplit("/", 1)  # the next slash left
            assert len(longer) == 1 or len(path) - len(longer[0]) + 1 > room
        else:
            assert shown == "…" + name  # the file's own name, whole, though longer than room
