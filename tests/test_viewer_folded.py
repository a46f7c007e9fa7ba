"""Folded-stack exports, every metric: the speedscope app imports them and its Sandwich view shows
exactly our integer totals per function, and per thread (the root frames).

speedscope drops a bad line without a word, so the totals are the test, not "it loaded".
"""

from __future__ import annotations

import re

import pytest
from export_checks import LOUD_FOLDED, loud_capture

from rokuprof.export import export, input_from_bytes
from tests.viewers import speedscope
from tests.viewers.expected import differences
from tests.viewers.samples import expected, write_export

pytestmark = pytest.mark.slow

#: (sample, metric) pairs; the CPU-only sample has no memory figures.
CASES = [("cafe-tv-full", m) for m in ("wall", "cpu", "calls", "alloc_bytes", "live_bytes")]
CASES.append(("cafe-tv-cpu-only", "wall"))
LABEL = re.compile(r"^(?P<function>.*) \((?P<file>.*):(?P<line>\d+)\)$")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("folded")
    out = {
        (name, metric): write_export(name, "folded", directory, f".{metric}.folded", metric=metric)
        for name, metric in CASES
    }
    # One line's count spoilt: speedscope skips it silently, so only the totals can tell.
    good = out[("cafe-tv-full", "wall")].read_text().splitlines()
    spoilt = directory / "spoilt.folded"
    spoilt.write_text("\n".join([f"{good[0]}x", *good[1:]]) + "\n")
    out["spoilt"] = spoilt
    loud = loud_capture(directory / "loud.bsprof").read_bytes()
    out["loud"] = directory / "loud.folded"
    out["loud"].write_bytes(export(input_from_bytes(loud), "folded"))
    return out


@pytest.fixture(scope="module")
def pages(files):
    return dict(zip(files, speedscope.open_files(list(files.values())), strict=True))


def sandwich_problems(page, name, metric):
    """Differences between a folded file's Sandwich table and our figures."""
    want = expected(name)
    (profile,) = page.profiles
    functions, threads = {}, {}
    for row in profile.rows:
        value_total, _ = speedscope.figure(row.total, "none")
        value_self, _ = speedscope.figure(row.self, "none")
        m = LABEL.match(row.name)
        if m:
            functions[(m["function"], m["file"])] = (value_self, value_total)
        else:
            threads[row.name] = (value_self, value_total)
    problems = []
    kinds = ("self",) if metric == "calls" else ("self", "total")
    for column in kinds:
        index = 0 if column == "self" else 1
        got = {k: v[index] for k, v in functions.items() if v[index]}
        ours = want.by(lambda k: k[1:], metric, column)
        problems += [f"{column} {p}" for p in differences(got, ours)]
    # A thread is the root of its stacks: its total is the thread's sum, its self nothing.
    ours = want.by(lambda k: k[0], metric)
    problems += [f"thread {p}" for p in differences({t: v[1] for t, v in threads.items()}, ours)]
    problems += [f"thread self {t}" for t, v in threads.items() if v[0]]
    return problems


@pytest.mark.parametrize(("name", "metric"), CASES)
def test_speedscope_imports_folded_stacks(pages, files, name, metric):
    page = pages[(name, metric)]
    assert page.problems() == []
    assert page.importer == "Importing as collapsed stack format"
    for line in files[(name, metric)].read_text().splitlines():
        assert re.fullmatch(r"[^;\n]+(;[^;\n]+)+ [1-9]\d*", line), line


@pytest.mark.parametrize(("name", "metric"), CASES)
def test_sandwich_totals_equal_ours_exactly(pages, name, metric):
    assert sandwich_problems(pages[(name, metric)], name, metric) == []


def test_harness_catches_a_line_speedscope_skipped(pages):
    page = pages["spoilt"]
    assert page.problems() == []  # speedscope says nothing...
    assert sandwich_problems(page, "cafe-tv-full", "wall")  # ...but the totals differ


def test_escaped_control_characters_are_plain_text_in_speedscope(pages, files):
    """Names full of terminal controls, written as \\xNN: speedscope reads every line (the
    totals hold) and shows the escapes as the names' text."""
    assert files["loud"].read_text().splitlines() == LOUD_FOLDED
    (profile,) = pages["loud"].profiles
    frames = {frame for line in LOUD_FOLDED for frame in line.rpartition(" ")[0].split(";")}
    assert {row.name for row in profile.rows} == frames
    table = speedscope.sandwich(profile, "none")
    thread, leaf = LOUD_FOLDED[1].rpartition(" ")[0].split(";")[::2]
    assert (table[thread][0][0], table[leaf][1][0]) == (4000, 2500)  # total, self
