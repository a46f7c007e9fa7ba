"""The A/B page leads with the gate's verdict (issue 28, item 2): ``rokuprof diff A B
--fail-over PCT --html`` run as a process, the page opened in headless Chromium at 1366x768, and
the text visible within that first screen read (not the DOM): a failed gate names the function
that grew, a passed gate says it passed, and without ``--fail-over`` there is no verdict. The
verdict is the one the command's exit status follows, in the words the command prints. Right
under it: the top regressions and improvements with their figures, and, for captures of two
different apps, the command's warning."""

from __future__ import annotations

import re

import pytest
from diff_helpers import BUILD_A, BUILD_B, diff_in, stream

from tests.viewers import VIEWERS
from tests.viewers.report import open_reports

STEPS = VIEWERS / "report_first_screen.mjs"


@pytest.fixture(scope="module")
def screens(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff-verdict")
    a, b = tmp / "main.bsprof", tmp / "branch.bsprof"
    other = tmp / "other.bsprof"
    a.write_bytes(stream(20.0, **BUILD_A))
    b.write_bytes(stream(20.0, version="2.5.0", **BUILD_B))
    other.write_bytes(stream(20.0, name="Other App", **BUILD_B))
    runs = {
        "failed": ("--fail-over", "20"),
        "passed": ("--fail-over", "20", "--min-share", "100"),
        "none": (),
        "apps": (),
    }
    out = {}
    for name, extra in runs.items():
        second = other if name == "apps" else b
        proc = diff_in(tmp, str(a), str(second), "--html", f"{name}.html", *extra)  # full paths
        out[name] = {"status": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}
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


def test_the_verdicts_show_with_or_without_a_gate(screens):
    # every function judged per figure, right under the gate's line: on every page
    for name in ("failed", "passed", "none"):
        text = visible(screens[name]["screen"])
        assert "Verdicts" in text, text[:2000]
        verdicts = text.split("Verdicts", 1)[1].split("Top regressions", 1)[0]
        if name == "passed":  # --min-share 100: no function judged
            assert "passed: 1 run vs 1 baseline run; nothing judged" in verdicts, verdicts
        else:
            assert "parseString" in verdicts and "regressed" in verdicts, verdicts


def test_the_title_names_the_captures_not_their_paths(screens):
    for name, run in screens.items():
        title = run["screen"]["title"]
        second = "other.bsprof" if name == "apps" else "branch.bsprof"
        assert "main.bsprof" in title and second in title, title
        assert "/" not in title, title


def test_the_verdict_states_the_time_change_as_the_command_does(screens):
    run = screens["failed"]
    line = visible(run["screen"]).split("--fail-over 20 %: failed:")[1].splitlines()[0]
    # parseString, twice as slow in B: its CPU operations (a counter) +100 %, from what to what
    said = re.search(r"parseString CPU operations \+(\d+\.\d) % \(([\d,]+) vs ([\d,]+)\)", line)
    assert said, line
    assert 95.0 <= float(said[1]) <= 105.0, line
    after, before = (int(said[i].replace(",", "")) for i in (2, 3))
    assert 1.95 <= after / before <= 2.05, line
    # the command prints the very same line (one owner of the words)
    assert f"--fail-over 20 %: failed:{line}" in run["stdout"], run["stdout"]


def first_screen_rows(text: str, heading: str) -> list[str]:
    """The lines of the visible text from a list's heading to the next heading."""
    after = text.split(heading, 1)[1]
    return after.split("Top ", 1)[0].splitlines() if "Top " in after else after.splitlines()


def test_the_first_screen_names_the_top_regression_and_improvement(screens):
    for name in ("failed", "none"):
        text = visible(screens[name]["screen"])
        assert "Top regressions" in text and "Top improvements" in text, text[:2000]
        grew = "\n".join(first_screen_rows(text, "Top regressions"))
        shrank = "\n".join(first_screen_rows(text, "Top improvements"))
        # parseString doubled and decodeImage leaks in B; registryWrite is gone from B
        assert "parseString" in grew and "json.brs" in grew, grew
        assert "decodeImage" in grew and "Self live at end" in grew, grew
        # each with the figure it is ranked by: A, B, Δ and Δ% (parseString: twice the work)
        row = grew.split("parseString", 1)[1].split("\n")[1:7]
        assert re.fullmatch(r"json\.brs:\d+", row[0]) and row[1] in ("Self wall", "Self CPU"), row
        assert row[4].startswith("+") and row[5] == "+100.0%", row
        assert "registryWrite" in shrank and "gone" in shrank, shrank
        assert re.search(r"−\d", shrank), shrank


def test_a_top_regression_opens_in_functions_with_its_figure(screens):
    clicked = screens["failed"]["screen"]["click"]
    assert clicked["function"] == "decodeImage", clicked  # the leak ranks first
    assert clicked["tab"] == "tab-functions" and clicked["inView"], clicked
    assert clicked["figure"] == "self_live_bytes", clicked  # the figure it is ranked by
    assert clicked["rows"] == ["decodeImage"], clicked


def test_two_different_apps_are_compared_under_the_commands_warning(screens):
    warning = "warning: A and B are different apps (Café TV, Other App)"
    assert warning in screens["apps"]["stdout"]
    assert warning in visible(screens["apps"]["screen"])
    for name in ("failed", "passed", "none"):
        assert "different apps" not in visible(screens[name]["screen"])
