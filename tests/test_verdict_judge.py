"""The verdicts from planted series (issue 32's "done when"): counters judged before clocks, a
clock's change inside its noise raises no alarm, a large one does, one run against one is
enough for a counter; every verdict explained in one line; the invariants hold on generated
series (a series against itself is the same, swapping the sides swaps the direction, a
common scale changes nothing)."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.export.diff import Figures
from rokuprof.verdict.judge import (
    IMPROVED,
    REGRESSED,
    SAME,
    UNKNOWN,
    gate_line,
    judge,
    judge_models,
)
from rokuprof.verdict.rules import Rules
from rokuprof.verdict.series import Run, Series
from rokuprof.verdict.summary import junit, markdown, md_text, spread_markdown

WORK = ("app", "work", "pkg:/source/work.brs")
REST = ("app", "rest", "pkg:/source/rest.brs")


def run(cpu: float, wall: float, *, alloc: float = 0, live: float = 0, model: str = "4800X") -> Run:
    """A run where ``work`` has the figures given and ``rest`` a steady share beside it."""
    figures = {
        WORK: Figures(self_cpu=cpu, self_wall=wall, self_alloc_bytes=alloc, self_live_bytes=live),
        REST: Figures(self_cpu=400_000, self_wall=4_000_000, self_alloc_bytes=1 << 20),
    }
    return Run("run", figures, 30.0, model)


def series(
    n: int,
    cpu: float,
    wall: float,
    *,
    seed: int,
    cpu_noise: float = 0.002,
    wall_noise: float = 0.05,
    **extra: float,
) -> Series:
    """``n`` runs: CPU operations steady to ``cpu_noise``, wall time scattered by
    ``wall_noise`` (uniform, relative), as a device's counter and clock are."""
    rng = random.Random(seed)
    return Series(
        f"s{seed}",
        tuple(
            run(
                cpu * rng.uniform(1 - cpu_noise, 1 + cpu_noise),
                wall * rng.uniform(1 - wall_noise, 1 + wall_noise),
                **extra,
            )
            for _ in range(n)
        ),
    )


def verdict(j, metric: str, key=WORK):
    [found] = [v for v in j.verdicts if v.metric == metric and v.key == key]
    return found


def test_cpu_up_6_percent_with_wall_inside_its_noise_regresses_on_cpu_only() -> None:
    base = series(5, 50_000, 1_000_000, seed=1)
    new = series(5, 53_000, 1_000_000, seed=2)
    j = judge(base, new, Rules(fail_over=10))
    assert verdict(j, "self_cpu").outcome == REGRESSED
    assert verdict(j, "self_wall").outcome == SAME
    assert j.outcome == REGRESSED
    line = verdict(j, "self_cpu").line()
    assert re.fullmatch(
        r"work: CPU operations \+6\.\d % \(5[23],\d{3} vs (49|50),\d{3}, medians\), "
        r"all 5 runs above every baseline run, p = 0\.0\d\d → regressed",
        line,
    ), line


def test_wall_up_3_percent_inside_its_noise_raises_no_alarm() -> None:
    for seed in range(20):
        base = series(5, 50_000, 1_000_000, seed=seed)
        new = series(5, 50_000, 1_030_000, seed=seed + 100)
        j = judge(base, new, Rules(fail_over=10))
        assert verdict(j, "self_wall").outcome == SAME, verdict(j, "self_wall").line()
        assert j.outcome == "passed"


def test_wall_up_60_percent_regresses() -> None:
    base = series(5, 50_000, 1_000_000, seed=3)
    new = series(5, 50_000, 1_600_000, seed=4)
    j = judge(base, new, Rules(fail_over=10))
    wall = verdict(j, "self_wall")
    assert wall.outcome == REGRESSED
    assert verdict(j, "self_cpu").outcome == SAME
    # five runs each, every one above the baseline's: the smallest two-sided p of 5 vs 5
    assert abs(wall.p - 2 / 252) < 1e-12
    assert "all 5 runs above every baseline run, p = 0.008 → regressed" in wall.line()


def test_one_run_against_one_run_with_cpu_up_6_percent_regresses() -> None:
    j = judge(series(1, 50_000, 1e6, seed=5), series(1, 53_000, 1e6, seed=6))
    cpu = verdict(j, "self_cpu")
    assert cpu.outcome == REGRESSED
    assert "1 run vs 1 run" in cpu.line() and ", medians" not in cpu.line()


def test_one_run_against_one_with_wall_up_60_percent_is_unknown_not_regressed() -> None:
    """A clock needs runs: one against one cannot tell noise from change."""
    j = judge(series(1, 50_000, 1e6, seed=7), series(1, 50_000, 1.6e6, seed=8))
    wall = verdict(j, "self_wall")
    assert wall.outcome == UNKNOWN
    assert wall.line().endswith("→ unknown (p ≥ 0.01: more runs can tell)")
    assert j.outcome == UNKNOWN


def test_a_counter_change_inside_a_noisy_counters_spread_is_the_same() -> None:
    base = series(7, 50_000, 1e6, seed=9, cpu_noise=0.2)
    new = series(7, 53_000, 1e6, seed=10, cpu_noise=0.2)
    cpu = verdict(judge(base, new), "self_cpu")
    assert cpu.outcome == SAME and "noise" in cpu.reason, cpu.line()


def test_bytes_are_judged_like_clocks() -> None:
    base = series(5, 50_000, 1e6, seed=11, alloc=100_000, live=10_000)
    leaky = series(5, 50_000, 1e6, seed=12, alloc=100_000, live=500_000)
    j = judge(base, leaky)
    assert verdict(j, "self_live_bytes").outcome == REGRESSED
    assert verdict(j, "self_alloc_bytes").outcome == SAME
    one = judge(Series("a", base.runs[:1]), Series("b", leaky.runs[:1]))
    assert verdict(one, "self_live_bytes").outcome == UNKNOWN


def test_a_function_under_min_share_is_not_judged() -> None:
    base = series(3, 100, 100, seed=13)
    new = series(3, 1000, 1000, seed=14)
    j = judge(base, new, Rules(min_share=1.0))
    assert all(v.key != WORK for v in j.verdicts)
    assert any(v.key == WORK for v in judge(base, new, Rules(min_share=0.0)).verdicts)


def test_a_new_function_is_said_new() -> None:
    base = Series(
        "a", tuple(Run("r", {REST: Figures(self_cpu=1e6, self_wall=1e6)}, 30) for _ in range(3))
    )
    new = series(3, 500_000, 500_000, seed=15)
    cpu = verdict(judge(base, new), "self_cpu")
    assert cpu.outcome == REGRESSED and "CPU operations new (" in cpu.line()


def test_runs_of_different_lengths_are_judged_per_second() -> None:
    base = series(3, 50_000, 1e6, seed=16)
    longer = Series("b", tuple(Run("r", r.figures, 60.0, r.model) for r in base.runs))
    j = judge(base, longer)
    assert j.per_second and "per second" in j.headline()
    assert verdict(j, "self_cpu").outcome == IMPROVED  # the same work in twice the time


def test_each_device_model_is_judged_against_its_own_baseline_runs() -> None:
    base = Series(
        "base",
        series(3, 50_000, 1e6, seed=17).runs + series(3, 90_000, 2e6, seed=18, model="3930X").runs,
    )
    new = Series(
        "new",
        series(3, 50_000, 1e6, seed=19).runs + series(3, 96_000, 2e6, seed=20, model="3930X").runs,
    )
    judgements = judge_models(base, new)
    assert list(judgements) == ["4800X", "3930X"]
    assert judgements["4800X"].outcome == "passed"
    assert verdict(judgements["3930X"], "self_cpu").outcome == REGRESSED
    assert "3 run(s) vs 3 baseline run(s)" in judgements["3930X"].headline()
    # a model the baseline never ran on is judged against all of it, and says so
    other = Series("new", series(2, 50_000, 1e6, seed=25, model="4670X").runs)
    [(model, alone)] = judge_models(base, other).items()
    assert model == "4670X" and len(alone.baseline.runs) == 6
    assert alone.headline().endswith("; no baseline run on 4670X: judged against every model's)")


def test_the_gate_line_says_failed_undecided_or_passed() -> None:
    base = series(5, 50_000, 1e6, seed=21)
    failed = {"m": judge(base, series(5, 60_000, 1e6, seed=22))}
    assert gate_line(failed, 10).startswith("--fail-over 10 %: failed: work CPU operations +")
    unknown = {"m": judge(Series("a", base.runs[:1]), series(1, 50_000, 2e6, seed=23))}
    assert gate_line(unknown, 10).startswith("--fail-over 10 %: undecided: work self wall time")
    same = {"m": judge(base, series(5, 50_000, 1e6, seed=24))}
    assert gate_line(same, 10) == "--fail-over 10 %: passed: no verdict regressed or unknown"


# -- invariants on generated series ------------------------------------------------------------

figures = st.floats(min_value=1_000, max_value=1e9, allow_nan=False)
noise = st.floats(min_value=0.0, max_value=0.3)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 8),
    m=st.integers(1, 8),
    cpu=figures,
    wall=figures,
    seed=st.integers(0, 1 << 30),
    wall_noise=noise,
    factor=st.floats(min_value=0.2, max_value=5.0),
)
def test_invariants_on_generated_series(n, m, cpu, wall, seed, wall_noise, factor) -> None:
    a = series(n, cpu, wall, seed=seed, wall_noise=wall_noise)
    b = series(m, cpu * factor, wall * factor, seed=seed + 1, wall_noise=wall_noise)
    # A series against itself: nothing moved.
    assert all(v.outcome == SAME for v in judge(a, a).verdicts)
    # Swapping the sides swaps regressed and improved and keeps unknown, wherever both ways
    # see a change (the floor is a share of the baseline, so near it one way may say same).
    forth, back = judge(a, b), judge(b, a)
    swap = {REGRESSED: IMPROVED, IMPROVED: REGRESSED, UNKNOWN: UNKNOWN}
    by_key = {(v.key, v.metric): v.outcome for v in back.verdicts}
    for v in forth.verdicts:
        reverse = by_key.get((v.key, v.metric), SAME)
        if v.outcome != SAME and reverse != SAME:
            assert reverse == swap[v.outcome], v.line()
    # One unit or another (every figure scaled alike) gives the same verdicts.
    scaled = Series(
        "x",
        tuple(
            Run(r.label, {k: f.scaled(1000.0) for k, f in r.figures.items()}, r.seconds, r.model)
            for r in b.runs
        ),
    )
    base_scaled = Series(
        "y",
        tuple(
            Run(r.label, {k: f.scaled(1000.0) for k, f in r.figures.items()}, r.seconds, r.model)
            for r in a.runs
        ),
    )
    assert [v.outcome for v in judge(base_scaled, scaled).verdicts] == [
        v.outcome for v in forth.verdicts
    ]
    # A counter is never unknown; every verdict is one line naming its outcome.
    for v in forth.verdicts:
        assert not (v.counter and v.outcome == UNKNOWN)
        assert "\n" not in v.line() and f"→ {v.outcome}" in v.line()


# -- CI outputs ---------------------------------------------------------------------------------

HOSTILE = ("app", '<b>**x**</b>|`y`\x1b[31m\n& "q"', "pkg:/<x>.brs")


def hostile_judgement():
    def hrun(cpu: float) -> Run:
        return Run("r", {HOSTILE: Figures(self_cpu=cpu, self_wall=1e6)}, 30.0, "4800X<>")

    return {"4800X<>": judge(Series("a", (hrun(50_000),)), Series("b", (hrun(60_000),)))}


def test_junit_is_well_formed_and_names_a_regression_as_a_failure() -> None:
    root = ET.fromstring(junit(hostile_judgement()))
    assert root.tag == "testsuites" and root.get("failures") == "1"
    [suite] = root
    cases = list(suite)
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 1
    assert failed[0].get("name").startswith("<b>**x**</b>|`y`\ufffd[31m")  # control shown, not kept
    assert "→ regressed" in failed[0].find("failure").get("message")


def test_markdown_shows_names_literally() -> None:
    md = markdown(hostile_judgement())
    assert "<b>" not in md and "\\<b\\>" in md
    assert "\x1b" not in md and "**x**" not in md
    assert "❌ regressed" in md
    # the table rows stay rows: no raw pipe inside a cell
    for row in (line for line in md.splitlines() if line.startswith("| ")):
        cells = re.split(r"(?<!\\)\|", row)
        assert len(cells) == 8, row


def test_a_series_without_baseline_summarises_its_busiest_functions() -> None:
    runs = series(4, 50_000, 1_000_000, seed=26).runs
    hostile = Run("r", {**runs[0].figures, HOSTILE: Figures(self_cpu=9, self_wall=9e6)}, 30.0)
    md = spread_markdown(Series("s", (*runs[1:], hostile)))
    rows = [line for line in md.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| function |")
    # by median self wall: rest (4 s) first, then work (~1 s); the hostile name, in one run of
    # four, has a median of 0 and comes last, escaped
    assert [r.split(" | ")[0] for r in rows[1:3]] == ["| rest", "| work"]
    assert "\\<b\\>" in rows[-1] and "\x1b" not in md


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("describe: +6.0 % (1 vs 2)", "describe: +6.0 % (1 vs 2)"),  # words stay as written
        ("# title", "\\# title"),
        ("1. item", "1\\. item"),
        ("12) item", "12\\) item"),
        ("- item", "\\- item"),
        ("a_b*c`d[e](f)", "a\\_b\\*c\\`d\\[e\\](f)"),
    ],
)
def test_markdown_escapes_what_would_start_markup(name: str, shown: str) -> None:
    assert md_text(name) == shown
