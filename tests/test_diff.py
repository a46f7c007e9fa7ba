"""``rokuprof diff``: two generated runs of the simulator's app with planted differences."""

from __future__ import annotations

import json
import math
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from diff_helpers import (
    ADDED_FN,
    BUILD_A,
    BUILD_B,
    JSON_FILE,
    LEAKING,
    REMOVED_FN,
    SLOWER,
    run_cli,
    stream,
)

from rokuprof.export import input_from_bytes
from rokuprof.export.diff import (
    ADDED,
    CHANGED,
    METRICS,
    REMOVED,
    SAME,
    SELF_METRICS,
    compare,
    function_figures,
)
from rokuprof.profile.functions import aggregate_functions
from rokuprof.verdict.judge import judge
from rokuprof.verdict.rules import Rules
from rokuprof.verdict.series import Series, run_of
from rokuprof.views.text import printable


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("diff")
    a, b = tmp / "a.bsprof", tmp / "b.bsprof"
    a.write_bytes(stream(20.0, **BUILD_A))
    b.write_bytes(stream(20.0, **BUILD_B))
    return a, b


def run_json(*args: str) -> dict:
    proc = run_cli(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# -- the pure core ------------------------------------------------------------------------------


def test_finds_exactly_the_planted_differences_at_the_top(planted: tuple[Path, Path]) -> None:
    a, b = (input_from_bytes(p.read_bytes()) for p in planted)
    comparison = compare(a, b)
    top = comparison.functions[:4]
    assert {d.key for d in top} == {SLOWER, ADDED_FN, REMOVED_FN, LEAKING}
    by_key = {d.key: d for d in comparison.functions}

    slower = by_key[SLOWER]
    assert slower.status == CHANGED
    assert slower.growth("self_wall") == pytest.approx(100.0)
    assert slower.delta("calls") == 0 and slower.delta("self_alloc_bytes") == 0

    assert by_key[ADDED_FN].status == ADDED and by_key[ADDED_FN].a is None
    assert by_key[ADDED_FN].after("self_wall") > 0
    assert by_key[REMOVED_FN].status == REMOVED and by_key[REMOVED_FN].b is None
    assert by_key[REMOVED_FN].before("self_wall") > 0

    leak = by_key[LEAKING]
    assert leak.delta("self_wall") == 0 and leak.delta("self_alloc_bytes") == 0
    assert leak.delta("self_live_bytes") > 10 * leak.before("self_live_bytes") > 0

    # Nothing else changed in its own figures; callers' totals did (and only those).
    for d in comparison.functions[4:]:
        assert d.score == 0 and all(d.delta(m) == 0 for m in SELF_METRICS), d
    callers = {d.function for d in comparison.functions[4:] if d.status == CHANGED}
    assert "parseValue" in callers and "onPlaybackStarted" in callers and "eventLoop" in callers
    poster = next(d for d in comparison.functions if d.function == "drawPoster")  # decodeImage's
    assert [m for m in METRICS if poster.delta(m)] == ["total_live_bytes"]  # caller
    assert comparison.count(SAME) > 0


def test_figures_are_inspects(planted: tuple[Path, Path]) -> None:
    data = planted[1].read_bytes()
    inp = input_from_bytes(data)
    figures = function_figures(inp)
    functions = aggregate_functions(inp.reader.tables)
    assert len(figures) == len(functions)
    for f in functions:
        mine = figures[(f.module, f.function, f.file)]
        assert (mine.self_wall, mine.total_wall, mine.self_cpu, mine.total_cpu, mine.calls) == (
            f.self_wall,
            f.total_wall,
            f.self_cpu,
            f.total_cpu,
            f.calls,
        )
    # Live bytes: the live heap's allocating paths, by leaf function.
    tables = inp.reader.tables
    live: dict[tuple[str, str, str], int] = defaultdict(int)
    for pid, _, size in tables.leak_sites():
        stack = tables.stack(pid)
        if stack:
            leaf = stack[0]
            module = tables.module_name(stack[-1].module)
            live[(module, tables.string(leaf.function_id), tables.string(leaf.file_id))] += size
    assert {k: f.self_live_bytes for k, f in figures.items() if f.self_live_bytes} == live
    assert sum(f.self_alloc_bytes for f in figures.values()) == tables.totals().alloc_bytes


def test_per_second_divides_by_each_runs_length() -> None:
    short, long = input_from_bytes(stream(6.0)), input_from_bytes(stream(12.0))
    raw = {d.key: d for d in compare(short, long).functions}
    rated = compare(short, long, per_second=True)
    assert (rated.a.seconds, rated.b.seconds) == (6.0, 12.0)
    assert rated.a.timing == rated.b.timing == "footer"
    for d in rated.functions:
        for m in ("self_wall", "total_cpu", "calls", "self_alloc_bytes"):
            assert d.before(m) == pytest.approx(raw[d.key].before(m) / 6.0)
            assert d.after(m) == pytest.approx(raw[d.key].after(m) / 12.0)
    # The same app for twice as long: the busiest function's rate hardly moves, its count doubles.
    busiest = max(rated.functions, key=lambda d: d.after("self_wall"))
    assert abs(busiest.growth("self_wall")) < 25 < raw[busiest.key].growth("self_wall")


def test_per_second_without_a_footer_uses_the_busiest_threads_time() -> None:
    inp = input_from_bytes(stream(6.0, footer=False))
    comparison = compare(inp, inp, per_second=True)
    busy: dict[int, int] = defaultdict(int)
    for p in inp.paths:
        busy[p.thread] += p.wall
    assert comparison.a.timing == "busiest thread"
    assert comparison.a.seconds == pytest.approx(max(busy.values()) / 1e6)
    assert all(d.status == SAME for d in comparison.functions)


def test_verdicts_honour_the_floor_and_the_share(planted: tuple[Path, Path]) -> None:
    """parseString (twice as slow: CPU and wall doubled) regresses on its operation count even
    one run against one; the new function is under 5 % of the run: --min-share skips it."""
    a, b = (input_from_bytes(p.read_bytes()) for p in planted)
    runs = Series("a", (run_of(a, "a"),)), Series("b", (run_of(b, "b"),))
    judged = judge(*runs, Rules(fail_over=50, counter_over=50))
    regressed = {v.key for v in judged.of("regressed")}
    assert SLOWER in regressed and ADDED_FN in regressed  # new: from nothing
    assert next(v for v in judged.verdicts if v.key == ADDED_FN).change() == "new"
    assert SLOWER not in {v.key for v in judge(*runs, Rules(counter_over=150)).of("regressed")}
    comparison = compare(a, b)
    added = next(d for d in comparison.functions if d.key == ADDED_FN)
    added_share = 100 * added.after("self_wall") / comparison.b.totals.self_wall
    assert 0 < added_share < 5
    floor = Rules(fail_over=50, counter_over=50, min_share=5)
    assert ADDED_FN not in {v.key for v in judge(*runs, floor).verdicts}
    assert math.isinf(added.growth())


# -- the command --------------------------------------------------------------------------------


def test_table_in_a_pipe_lists_the_planted_functions_first_unwrapped(
    planted: tuple[Path, Path],
) -> None:
    proc = run_cli(*map(str, planted))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and "\x1b" not in proc.stdout
    rows = [line for line in proc.stdout.splitlines() if line.startswith("│")]
    names = [row.split("│")[1].strip() for row in rows]
    assert set(names[:4]) == {"parseString", "loadSubtitles", "registryWrite", "decodeImage"}
    assert all(JSON_FILE in row or "pkg:/" in row for row in rows)  # every column, even at 80
    assert len({len(row) for row in rows}) == 1  # one line per row, none wrapped
    by_name = dict(zip(names, rows, strict=True))
    assert "new" in by_name["loadSubtitles"] and "gone" in by_name["registryWrite"]
    assert "+100.0%" in by_name["parseString"] and "+2.6" in by_name["parseString"]
    assert "MiB" in by_name["decodeImage"].split("│")[-3]  # Δ live
    assert "1 only in B (new), 1 only in A (gone)" in proc.stdout


def test_json_has_the_documented_shape(planted: tuple[Path, Path]) -> None:
    report = run_json(*map(str, planted), "--top", "0")
    assert set(report) == {
        "per_second",
        "sort",
        "a",
        "b",
        "summary",
        "functions",
        "lines",
        "leak_sites",
        "verdicts",
    }
    assert report["a"]["input"] == str(planted[0]) and report["a"]["seconds"] == 20.0
    assert report["summary"]["added"] == 1 and report["summary"]["removed"] == 1
    assert report["summary"]["functions"] == len(report["functions"])
    first = report["functions"][:4]
    assert {(f["module"], f["function"], f["file"]) for f in first} == {
        SLOWER,
        ADDED_FN,
        REMOVED_FN,
        LEAKING,
    }
    added = next(f for f in first if f["status"] == "added")
    assert added["a"] is None and added["delta"]["self_wall"] == added["b"]["self_wall"] > 0
    slower = next(f for f in first if f["function"] == "parseString")
    assert slower["self_wall_growth_pct"] == 100.0
    assert slower["delta"]["self_wall"] == slower["b"]["self_wall"] - slower["a"]["self_wall"]
    top3 = run_json(*map(str, planted), "--top", "3", "--sort", "self_live_bytes")
    assert len(top3["functions"]) == 3 and top3["sort"] == "self_live_bytes"
    assert top3["functions"][0]["function"] == "decodeImage"


def test_json_has_the_lines_and_leak_sites_that_changed(planted: tuple[Path, Path]) -> None:
    report = run_json(*map(str, planted), "--top", "0")
    a, b = (input_from_bytes(p.read_bytes()) for p in planted)
    lines = {(r["module"], r["function"], r["file"], r["line"]): r for r in report["lines"]}
    # every line of the function made twice as slow: twice the CPU and wall, and first
    slower = [r for k, r in lines.items() if k[:3] == SLOWER]
    assert slower and report["lines"][0]["function"] == "parseString"
    for r in slower:
        assert r["status"] == "changed" and r["growth_pct"]["wall"] == 100.0
        assert r["delta"]["wall"] == r["b"]["wall"] - r["a"]["wall"] == r["a"]["wall"]
    assert {r["status"] for k, r in lines.items() if k[:3] == ADDED_FN} == {"added"}
    assert {r["status"] for k, r in lines.items() if k[:3] == REMOVED_FN} == {"removed"}
    moved = {k[:3] for k, r in lines.items() if r["status"] != "same"}
    assert moved == {SLOWER, ADDED_FN, REMOVED_FN}
    # the lines add up to each capture's line figures
    for side, inp in (("a", a), ("b", b)):
        want = sum(w for p in inp.paths for _, _, w in p.line_cpu)
        assert sum(r[side]["wall"] for r in report["lines"] if r[side]) == want
    # the leak: decodeImage's call path leaves far more live in B; loadSubtitles's is new
    sites = report["leak_sites"]
    leak = sites[0]
    assert (leak["module"], leak["path"][-1]["function"]) == (LEAKING[0], LEAKING[1])
    assert (
        leak["status"] == "changed" and leak["delta"]["live_bytes"] > 10 * leak["a"]["live_bytes"]
    )
    assert leak["delta"]["live_count"] == leak["b"]["live_count"] - leak["a"]["live_count"] > 0
    statuses = {(s["path"][-1]["function"], s["status"]) for s in sites if s["status"] != "same"}
    assert statuses == {("decodeImage", "changed"), ("loadSubtitles", "added")}
    for side, inp in (("a", a), ("b", b)):
        assert sum(s[side]["live_bytes"] for s in sites if s[side]) == sum(
            p.live_bytes for p in inp.paths
        )
    assert len(run_json(*map(str, planted), "--top", "3")["lines"]) == 3


def test_per_second_option(tmp_path: Path) -> None:
    a, b = tmp_path / "short.bsprof", tmp_path / "long.bsprof"
    a.write_bytes(stream(6.0))
    b.write_bytes(stream(12.0))
    report = run_json(str(a), str(b), "--per-second", "--top", "0")
    assert report["per_second"] is True
    assert (report["a"]["seconds"], report["b"]["seconds"]) == (6.0, 12.0)
    counts = run_json(str(a), str(b), "--top", "0")
    raw = {(f["module"], f["function"], f["file"]): f for f in counts["functions"]}
    for f in report["functions"]:
        before = raw[(f["module"], f["function"], f["file"])]
        if f["a"] is not None:  # None: a function that only appears after 6 s
            assert f["a"]["self_wall"] == pytest.approx(before["a"]["self_wall"] / 6.0)
        assert f["b"]["calls"] == pytest.approx(before["b"]["calls"] / 12.0, abs=1e-6)
    table = run_cli(str(a), str(b), "--per-second")
    assert table.returncode == 0 and "figures per second of run" in table.stdout
    assert "ms/s" in table.stdout


def test_fail_over_exit_status(planted: tuple[Path, Path]) -> None:
    a, b = map(str, planted)
    proc = run_cli(a, b, "--fail-over", "50")
    assert proc.returncode == 1, proc.stderr
    verdict = proc.stdout.split("--fail-over 50 %: failed: ")[1].splitlines()[0]
    assert "loadSubtitles CPU operations new (" in verdict, verdict
    assert "parseString CPU operations +" in verdict, verdict
    # loadSubtitles is new (unbounded growth) but under 5 % of the run: --min-share skips it.
    # parseString's CPU operations (a counter) doubled: past any --counter-over under 100 %.
    floors = ("--counter-over", "150", "--min-share", "5")
    # decodeImage leaks: live bytes x64, but a byte figure needs runs to tell noise from change
    undecided = run_cli(a, b, "--fail-over", "150", *floors)
    assert undecided.returncode == 4, undecided.stdout
    assert "--fail-over 150 %: undecided: decodeImage live bytes +" in undecided.stdout
    assert run_cli(a, b, "--fail-over", "10000", *floors).returncode == 0
    assert run_cli(a, b, "--fail-over", "150", "--counter-over", "99").returncode == 1
    report = json.loads(run_cli(a, b, "--fail-over", "99", "--min-share", "5", "--json").stdout)
    assert report["fail_over"]["failed"] == [
        dict(zip(("module", "function", "file"), SLOWER, strict=True))
    ]
    assert run_cli(a, a, "--fail-over", "0").returncode == 0  # a run against itself


def test_inputs_from_stdin_and_a_session_directory(planted: tuple[Path, Path], tmp_path) -> None:
    a, b = planted
    session = tmp_path / "session"
    session.mkdir()
    (session / "capture.bsprof").write_bytes(b.read_bytes())
    proc = run_cli("-", str(session), "--json", "--top", "0", stdin=a.read_bytes())
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["a"]["input"] == "standard input"
    assert report["b"]["input"] == str(session / "capture.bsprof")
    direct = run_json(str(a), str(b), "--top", "0")
    assert report["functions"] == direct["functions"]


def test_an_incomplete_input_is_compared_with_a_warning(planted, tmp_path: Path) -> None:
    a, b = planted
    cut = tmp_path / "cut.bsprof"
    cut.write_bytes(b.read_bytes()[: b.stat().st_size // 2])
    proc = run_cli(str(a), str(cut))
    assert proc.returncode == 3
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"warning: {cut}: ") and line.endswith("compared what was read")
    assert "incomplete" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("{missing}", "{a}"), "cannot read {missing}"),
        (("{a}", "{junk}"), "{junk} is not a .bsprof"),
        (("-", "-"), "only one of A and B can be standard input"),
        (("{a}", "{tmp}"), "is a directory without a capture.bsprof"),
        (("{a}", "{a}", "--html", "{tmp}/no/such/dir/x.html"), "cannot write"),
        (("{a}", "{a}", "--html", "{tmp}"), "it is a directory"),
        (("{a}", "{a}", "--top", "-1"), "--top"),
        (("{a}",), "Missing argument"),
    ],
)
def test_bad_inputs_exit_2_with_one_line(planted, tmp_path: Path, args, message) -> None:
    junk = tmp_path / "junk.bsprof"
    junk.write_bytes(b"PK\x03\x04 not a profile")
    names = {"a": planted[0], "missing": tmp_path / "missing.bsprof", "junk": junk}
    names["tmp"] = tmp_path
    proc = run_cli(*(arg.format(**names) for arg in args))
    assert proc.returncode == 2, proc
    [line] = proc.stderr.splitlines()
    assert line.startswith("error: ") and message.format(**names) in line, line
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert not list(tmp_path.glob("**/*.html"))


def test_device_text_is_shown_literally(tmp_path: Path) -> None:
    hostile = "[/]reg\x1b]0;pwned\x07\u202e"
    names = (("registryWrite", hostile), ("pkg:/source/main.brs", "pkg:/[bold]m\x9b.brs"))
    a, b = tmp_path / "a.bsprof", tmp_path / "b.bsprof"
    a.write_bytes(stream(6.0, names=names))
    b.write_bytes(stream(6.0, names=names, slower=(("registryWrite", 3.0),)))
    proc = run_cli(str(a), str(b))
    assert proc.returncode == 0, proc.stderr
    assert printable(hostile) in proc.stdout and printable("pkg:/[bold]m\x9b.brs") in proc.stdout
    assert "\x1b" not in proc.stdout and "\x9b" not in proc.stdout and "\u202e" not in proc.stdout
    report = run_json(str(a), str(b))
    assert report["functions"][0]["function"] == hostile  # the exact text in JSON


def _table(proc: subprocess.CompletedProcess[str]) -> tuple[list[str], list[list[str]]]:
    """The table's header cells and each row's cells (a pipe: one line a row)."""
    lines = [line for line in proc.stdout.splitlines() if line.startswith("┃")]
    header = [cell.strip() for cell in lines[0].split("┃")[1:-1]]
    rows = [
        [cell.strip() for cell in line.split("│")[1:-1]]
        for line in proc.stdout.splitlines()
        if line.startswith("│")
    ]
    return header, rows


@pytest.mark.parametrize("sort", ["change", "total_cpu", "calls", "self_alloc_bytes"])
def test_the_table_shows_the_figure_it_is_ranked_by(planted: tuple[Path, Path], sort) -> None:
    """Whatever ``--sort`` says, a column shows the figure the rows are ordered by, and its
    values (as the JSON has them) run from the largest down."""
    a, b = map(str, planted)
    proc = run_cli(a, b, "--sort", sort, "--top", "8")
    assert proc.returncode == 0, proc.stderr
    header, rows = _table(proc)
    column = header.index("Δ share of run" if sort == "change" else f"Δ {sort}")
    report = run_json(a, b, "--sort", sort, "--top", "8")
    shown = [row[column] for row in rows]
    want = [f["score"] if sort == "change" else abs(f["delta"][sort]) for f in report["functions"]]
    want = [f for f in want if f] or want
    assert len(shown) == len(rows) > 1 and all(shown)
    if sort == "change":
        assert shown == [f"{f['score'] * 100:.1f}%" for f in report["functions"]][: len(shown)]
    assert want == sorted(want, reverse=True)


def test_two_different_apps_are_compared_with_a_warning(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.bsprof", tmp_path / "b.bsprof", tmp_path / "c.bsprof"
    a.write_bytes(stream(5.0, **BUILD_A))
    b.write_bytes(stream(5.0, name="Other App", **BUILD_B))
    c.write_bytes(stream(5.0, **BUILD_B))
    proc = run_cli(str(a), str(b))
    assert proc.returncode == 0, proc.stderr
    assert "warning: A and B are different apps (Café TV, Other App)" in proc.stdout
    assert "different apps" not in run_cli(str(a), str(c)).stdout  # the same app: no warning
