"""The A/B page leads with the gate's verdict (issue 28, item 2): ``rokuprof diff A B
--fail-over PCT --html`` run as a process, the page opened in headless Chromium at 1366x768, and
the text visible within that first screen read (not the DOM): a failed gate names the function
that grew, a passed gate says it passed, and without ``--fail-over`` there is no verdict. The
verdict is the one the command's exit status follows."""

from __future__ import annotations

import pytest
from diff_helpers import BUILD_A, BUILD_B, diff_in, stream

from tests.viewers import VIEWERS
from tests.viewers.report import open_reports

STEPS = VIEWERS / "report_first_screen.mjs"


@pytest.fixture(scope="module")
def screens(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff-verdict")
    a, b = tmp / "main.bsprof", tmp / "branch.bsprof"
    a.write_bytes(stream(20.0, **BUILD_A))
    b.write_bytes(stream(20.0, version="2.5.0", **BUILD_B))
    runs = {
        "failed": ("--fail-over", "20"),
        "passed": ("--fail-over", "20", "--min-share", "100"),
        "none": (),
    }
    out = {}
    for name, extra in runs.items():
        proc = diff_in(tmp, str(a), str(b), "--html", f"{name}.html", *extra)  # full paths
        out[name] = {"status": proc.returncode, "stdout": proc.stdout}
    results = open_reports([tmp / f"{name}.html" for name in runs], steps=STEPS)
    for name, result in zip(runs, results, strict=True):
        out[name]["screen"] = result.get("steps", result)
    return out


def visible(screen) -> str:
    return screen["visible"] if "visible" in screen else str(screen)


def test_a_failed_gate_leads_the_page_and_names_the_function(screens):
    run = screens["failed"]
    assert run["status"] == 1
    text = visible(run["screen"])
    assert "--fail-over 20 %: failed:" in text
    assert "parseString" in text.split("--fail-over 20 %: failed:")[1].splitlines()[0]


def test_a_passed_gate_says_so(screens):
    run = screens["passed"]
    assert run["status"] == 0
    assert "--fail-over 20 %: passed" in visible(run["screen"])


def test_no_verdict_without_a_gate(screens):
    assert "--fail-over" not in visible(screens["none"]["screen"])


def test_the_title_names_the_captures_not_their_paths(screens):
    for run in screens.values():
        title = run["screen"]["title"]
        assert "main.bsprof" in title and "branch.bsprof" in title, title
        assert "/" not in title, title
