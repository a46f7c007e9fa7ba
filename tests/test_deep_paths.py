"""Deep call chains cost what they send: stacks are folded to ``Limits.max_stack_depth`` frames,
the same way on both cores and in every output (issue 18, row 1)."""

from __future__ import annotations

import json

from rokuprof.bsprof.model import Limits
from rokuprof.export.folded import stacks as folded_stacks
from rokuprof.export.model import build_input
from rokuprof.path_model import FOLDED_FUNCTION, FOLDED_PATH, RESERVED_STRINGS
from rokuprof.profile.engine import PURE, PURE_PYTHON_VARIABLE, Engine
from rokuprof.profile.functions import aggregate_functions
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.report import inspect_report
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.simulator.worst_cases import deep_chain

FOLDED = RESERVED_STRINGS[FOLDED_FUNCTION]


def use(engine: Engine, monkeypatch) -> None:
    """Every reader made from now on in the test (converters' included) uses ``engine``."""
    if engine is PURE:
        monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")
    else:
        monkeypatch.delenv(PURE_PYTHON_VARIABLE, raising=False)


def reader_of(data: bytes, limits: Limits | None = None) -> ProfileReader:
    return ProfileReader.from_bytes(data, limits)


def converted(data: bytes) -> OfflineConverter:
    converter = OfflineConverter(new_id=lambda: "0" * 32)
    converter.feed(data)
    converter.close()
    return converter


def test_a_deep_stack_keeps_its_leaf_frames_and_one_marked_frame(engine_env):
    limits = Limits(max_stack_depth=8)
    reader = reader_of(deep_chain(20), limits)
    tables = reader.tables
    assert [n.id for n in tables.stack(8)] == list(range(8, 0, -1))  # exactly the limit: whole
    stack = tables.stack(20)
    assert [n.id for n in stack] == [*range(20, 13, -1), FOLDED_PATH]
    marker = stack[-1]
    assert tables.string(marker.function_id) == FOLDED
    assert tables.module_name(marker.module) == "main"
    assert marker.depth == 12  # the first folded node, path 13, is 12 below the root
    assert tables.deep_paths == 12  # paths 9..20 are deeper than 8 frames
    assert reader.warnings == [
        "call paths deeper than 8 frames: each stack shows its leaf-most 7 frames and one "
        "'[deeper frames folded]' frame for the rest (limit)"
    ]


def test_every_stack_of_a_10_000_deep_chain_is_bounded(engine_env):
    reader = reader_of(deep_chain(10_000))
    tables = reader.tables
    limit = tables.limits.max_stack_depth
    lengths = [len(tables.stack(pid)) for pid in range(1, 10_001)]
    assert max(lengths) == limit
    assert sum(lengths) == sum(min(d, limit) for d in range(1, 10_001))
    assert tables.deep_paths == 10_000 - limit


def test_both_cores_give_the_same_inspect_report_of_a_deep_chain(native_engine, monkeypatch):
    data = deep_chain(2_000, seconds=40.0, wall_us=20_000)
    reports = []
    for engine in (PURE, native_engine):
        use(engine, monkeypatch)
        reports.append(inspect_report(reader_of(data), top=50))
    assert reports[0] == reports[1]
    functions = {f["function"]: f for f in reports[0]["functions"]}
    assert set(functions) == {"recurse", FOLDED}
    assert functions[FOLDED]["self_wall"] == 0
    # every path below the limit has the marker on its stack, and counts once there
    limit = Limits().max_stack_depth
    assert functions[FOLDED]["total_wall"] == (2_000 - limit) * 20_000


def test_functions_count_the_marker_once_per_stack(engine_env):
    reader = reader_of(deep_chain(300, wall_us=1_000), Limits(max_stack_depth=10))
    functions = {f.function: f for f in aggregate_functions(reader.tables)}
    assert functions["recurse"].total_wall == 300 * 1_000
    assert functions[FOLDED].total_wall == (300 - 10) * 1_000


def test_chunks_and_exports_show_the_marker_frame(engine_env):
    data = deep_chain(400, seconds=20.0, wall_us=40_000)
    chunks = list(converted(data).chunks())
    assert chunks
    limit = Limits().max_stack_depth
    for chunk in chunks:
        profile = chunk.payload["profile"]
        frames = profile["frames"]
        assert max(len(s) for s in profile["stacks"]) <= limit
        marked = [s for s in profile["stacks"] if s and frames[s[-1]]["function"] == FOLDED]
        assert marked and all(len(s) == limit for s in marked)
        assert all(frames[s[-1]]["in_app"] is False for s in marked)
    lines = list(folded_stacks(build_input(converted(data))))
    assert len(lines) == 400
    assert max(len(line.split(";")) for line in lines) == limit + 1  # thread name + frames
    assert sum(line.split(";")[1].startswith(FOLDED) for line in lines) == 400 - limit


def test_the_same_bytes_give_the_same_chunks_on_both_cores(native_engine, monkeypatch):
    data = deep_chain(500, seconds=20.0, wall_us=40_000)
    out = []
    for engine in (PURE, native_engine):
        use(engine, monkeypatch)
        out.append([json.loads(c.data) for c in converted(data).chunks()])
    assert out[0] == out[1]
