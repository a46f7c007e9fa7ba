"""The report's and the A/B page's layout (issue 28, item 7: "pages lead with the answer"), in
headless Chromium at a laptop's 1366x768 and at 800x700 (the steps are
tests/viewers/report_layout.mjs): the chosen view's first rows are inside the viewport, idle
frames are hidden by default (the toggle shows them and the choice is kept), Bottom-up starts on
the top function that is not a wait, a thread has one colour by its name (the same on the report
and on the A/B page, though the thread's position differs), paths are shortened at ``/`` with the
whole path in the title, and the timeline collapses and stays so."""

from __future__ import annotations

import pytest
from diff_helpers import diff_in
from report_helpers import START_MS, run_cli, stream

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import CALLS, CPU, MODULE, PATH, STRING, Footer
from rokuprof.simulator.app import AppConfig, SyntheticApp
from tests.viewers import VIEWERS
from tests.viewers.report import open_reports, problems

STEPS = VIEWERS / "report_layout.mjs"
LOADER, MAIN = "ContentLoaderTask", "main"  # module 1 and 2: the loader is the first thread here
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


def planted() -> bytes:
    """Two threads, the loader first, an idle waitPort on top, long and very long paths."""
    header = SyntheticApp(AppConfig(seed=3, name="Layout")).header(START_MS)
    names = sorted({f for _, f, _, _ in PATHS.values()} | {MAIN_BRS, DEEP, LOADER_BRS})
    names = sorted(set(names) | {ONE_LONG_NAME, LOADER, MAIN})
    sid = {name: i + 1 for i, name in enumerate(names)}
    entries: list = [(STRING, i, name) for name, i in sid.items()]
    entries += [(MODULE, 1, sid[LOADER]), (MODULE, 2, sid[MAIN])]
    for pid, (caller, function, file, thread) in PATHS.items():
        module = (1 if thread == LOADER else 2) if caller == 0 else 0
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
    for name in ("app", "planted"):
        proc = run_cli(str(tmp / f"{name}.bsprof"), "-o", str(tmp / f"{name}.html"))
        assert proc.returncode == 0, proc.stderr
    proc = diff_in(tmp, "planted.bsprof", "planted.bsprof", "--html", "ab.html")
    assert proc.returncode == 0, proc.stderr
    names = ("app", "planted", "ab")
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
