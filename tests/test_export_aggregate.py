"""The aggregate outputs made from the tables alone (:mod:`rokuprof.export.aggregate`) are the
outputs made through the laid-out timeline: the same pprof bytes (after gunzip), the same folded
text for every metric, the same ``diff --json`` and gate verdict, on the samples and on
generated streams (with and without a usable footer), on both engines."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import any_streams, streams
from typer.testing import CliRunner

from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import CPU, Footer
from rokuprof.cli import app
from rokuprof.cli.root import EXIT_INCOMPLETE, EXIT_OK
from rokuprof.export import METRICS, export, input_from_bytes
from rokuprof.export.aggregate import AggregateInput, aggregates_from_bytes
from rokuprof.export.diff import compare
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.verdict.judge import judge, judge_models
from rokuprof.verdict.rules import Rules
from rokuprof.verdict.series import Series, run_of
from rokuprof.workflows.gate import gate_status

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SAMPLE_FILES = sorted(p.name for p in SAMPLES.glob("*.bsprof"))
START_MS = 1_795_273_445_000
runner = CliRunner()


def outputs(inp) -> dict[str, object]:
    return {
        "pprof": gzip.decompress(export(inp, "pprof")),
        **{f"folded {m}": export(inp, "folded", metric=m) for m in METRICS},
    }


def diff_json(a, b, per_second: bool) -> str:
    comparison = compare(a, b, per_second=per_second)
    judged = judge(Series("a", (run_of(a, "a"),)), Series("b", (run_of(b, "b"),)))
    return json.dumps([comparison.to_json(None), judged.to_json()])


def assert_same(data: bytes, wall_unit: str = "us") -> None:
    chunk_settings = ChunkSettings(wall_unit=wall_unit)
    timeline = input_from_bytes(data, settings=chunk_settings)
    tables = aggregates_from_bytes(data, chunk_settings)
    assert isinstance(tables, AggregateInput)
    assert outputs(tables) == outputs(timeline)
    assert tables.run == timeline.run
    assert tables.summary.timing == timeline.summary.timing
    assert tables.summary.warnings == timeline.summary.warnings
    for per_second in (False, True):
        assert diff_json(tables, tables, per_second) == diff_json(timeline, timeline, per_second)


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_samples_aggregate_as_the_timeline_path(name, engine_env):
    assert_same((SAMPLES / name).read_bytes())


@pytest.mark.parametrize("wall_unit", ["ns", "ms"])
def test_wall_units_aggregate_as_the_timeline_path(wall_unit, engine_env):
    assert_same((SAMPLES / "cafe-tv-full.bsprof").read_bytes(), wall_unit)


def test_diff_of_two_samples_is_the_timeline_paths(engine_env):
    a, b = (SAMPLES / "cafe-tv-full.bsprof").read_bytes(), (SAMPLES / "cafe-tv-long.bsprof")
    b = b.read_bytes()
    for per_second in (False, True):
        got = diff_json(aggregates_from_bytes(a), aggregates_from_bytes(b), per_second)
        assert got == diff_json(input_from_bytes(a), input_from_bytes(b), per_second)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(streams(max_actions=60), st.none() | st.integers(-5, 400_000))
def test_generated_streams_aggregate_as_the_timeline_path(engine_env, spec, run_ms):
    """A footer at, before or after the start (an implausible one is ignored: the run's length
    is then its busiest thread's wall time, found from the tables alone)."""
    header = dataclasses.replace(spec.header, start_ms=START_MS)
    footer = Footer(START_MS + run_ms) if run_ms is not None else None
    entries = [(*e[:4], e[4] % 3_000_000) if e[0] == CPU else e for e in spec.entries]
    assert_same(build_stream(header, entries, footer))


@settings(max_examples=30, deadline=None)
@given(any_streams())
def test_raw_generated_streams_aggregate_as_the_timeline_path(data):
    """Whatever the stream says (times far off, huge walls), and cut short or corrupt: the same
    outputs of what was read, the same status and problem."""
    assert_same(data)


def test_pprof_names_threads_in_module_order_however_they_were_met():
    inp = aggregates_from_bytes((SAMPLES / "cafe-tv-full.bsprof").read_bytes())
    assert len(inp.threads) > 1
    shuffled = dataclasses.replace(inp, threads=dict(reversed(inp.threads.items())))
    assert list(shuffled.threads) != list(inp.threads)
    assert export(shuffled, "pprof") == export(inp, "pprof")


@pytest.mark.parametrize("name", ["cafe-tv-cut-short", "cafe-tv-corrupt", "cafe-tv-full"])
def test_export_command_writes_the_timeline_paths_bytes(tmp_path, name):
    """``export -f pprof,folded`` (the tables alone) and ``-f pprof,speedscope`` (laid out)
    write the same pprof, the timeline path's; an input cut short still exits 3 and says so."""
    source = SAMPLES / f"{name}.bsprof"
    inp = input_from_bytes(source.read_bytes())
    for formats in ("pprof,folded", "pprof,speedscope"):
        out = tmp_path / formats
        out.mkdir()
        result = runner.invoke(app, ["export", str(source), "-f", formats, "-o", str(out)])
        assert result.exit_code == (EXIT_OK if name == "cafe-tv-full" else EXIT_INCOMPLETE)
        assert (out / f"{name}.pb.gz").read_bytes() == export(inp, "pprof")
        if "folded" in formats:
            assert (out / f"{name}.folded").read_bytes() == export(inp, "folded")
        if name != "cafe-tv-full":
            assert "exported what was read" in result.stderr


def test_diff_command_json_and_gate_are_the_timeline_paths():
    a, b = SAMPLES / "cafe-tv-full.bsprof", SAMPLES / "cafe-tv-long.bsprof"
    args = ["diff", str(a), str(b), "--json", "--per-second", "--fail-over", "1", "--top", "0"]
    result = runner.invoke(app, args)
    got = json.loads(result.stdout)
    comparison = compare(
        input_from_bytes(a.read_bytes()), input_from_bytes(b.read_bytes()), per_second=True
    )
    want = comparison.to_json(None)
    for side in ("a", "b"):
        assert got[side] == {**want[side], "input": str(a if side == "a" else b)}
    assert got["functions"] == want["functions"]
    assert got["lines"] == want["lines"] and got["leak_sites"] == want["leak_sites"]
    # the verdicts (and the gate) judge the same figures the timeline path counts
    ia, ib = input_from_bytes(a.read_bytes()), input_from_bytes(b.read_bytes())
    judgements = judge_models(
        Series("a", (run_of(ia, str(a)),)), Series("b", (run_of(ib, str(b)),)), Rules(fail_over=1)
    )
    assert got["verdicts"] == {model: j.to_json() for model, j in judgements.items()}
    failed = list(dict.fromkeys(v.key for j in judgements.values() for v in j.of("regressed")))
    assert [(f["module"], f["function"], f["file"]) for f in got["fail_over"]["failed"]] == failed
    assert result.exit_code == gate_status(judgements)
