"""The chunk JSON writer: byte for byte what json.dumps writes; validation on sample facts."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rokuprof import _native
from rokuprof.profile import engine
from rokuprof.sentry.chunkjson import _samples_text, chunk_json, dumps, samples_json
from rokuprof.sentry.validate import SampleFacts, validate_chunk

ORIGIN = 1_795_000_000.123
HZ = 101

tids = st.text(min_size=1, max_size=4) | st.integers(0, 2**32).map(str)
runs = st.lists(st.tuples(st.integers(0, 300), st.integers(0, 9), st.integers(1, 40)), max_size=8)
thread_runs = st.dictionaries(tids, runs, max_size=4).map(lambda d: list(d.items()))


def reference(threads, origin: float = ORIGIN, hz: int = HZ) -> list[dict]:
    """The samples as the builder used to make them: a dict per sample, sorted."""
    rows = sorted(
        (slot + i, tid, sid) for tid, rs in threads for slot, sid, n in rs for i in range(n)
    )
    return [
        {"timestamp": origin + slot / hz, "thread_id": tid, "stack_id": sid}
        for slot, tid, sid in rows
    ]


def disjoint(threads):
    """The runs of each thread moved so that no two share a slot (as the builder lays them)."""
    out = []
    for tid, rs in threads:
        slot, laid = 0, []
        for gap, sid, n in rs:
            slot += gap % 7
            laid.append((slot, sid, n))
            slot += n
        out.append((tid, laid))
    return out


@pytest.mark.usefixtures("engine_env")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(thread_runs)
def test_samples_are_written_as_json_dumps_writes_them(threads):
    for case in (disjoint(threads), threads):  # the grid, and overlapping runs (sorted)
        text = samples_json(case, ORIGIN, HZ).decode()
        assert text == dumps(reference(case))[1:-1]
        assert json.loads(f"[{text}]") == reference(case)


@pytest.mark.usefixtures("engine_env")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(thread_runs, st.integers(5, 2000))
def test_samples_far_apart_in_time_are_written_as_json_dumps_writes_them(threads, spread):
    """Runs spread over a span many times their samples (a long, mostly idle run: the writer
    then sorts the samples instead of filling the grid of the whole span) give the same text."""
    for case in (disjoint(threads), threads):
        far = [(tid, [(slot * spread, sid, n) for slot, sid, n in rs]) for tid, rs in case]
        text = samples_json(far, ORIGIN, HZ).decode()
        assert text == dumps(reference(far))[1:-1]
        assert json.loads(f"[{text}]") == reference(far)


origins = (
    st.floats(1.0, 1e15)
    | st.floats(-1e20, 1e20, allow_nan=False)
    | st.sampled_from([0.0, 1e-7, 0.5, 1e15 - 0.5, 1e15, 2.5e16, -3.0])
)


@pytest.mark.usefixtures("engine_env")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 5)), max_size=6), origins, st.data())
def test_timestamps_are_written_as_repr_writes_them_whatever_the_origin(runs, origin, data):
    """Times inside the range orjson writes as ``repr`` does and outside it (exponents, sign,
    zero) come out as json.dumps writes them, on the grid and on the sorted path."""
    hz = data.draw(st.sampled_from([1, 7, 101, 1000]))
    threads = disjoint([("1", [(gap, 0, n) for gap, n in runs])])
    for spread in (1, 500):
        far = [(tid, [(slot * spread, sid, n) for slot, sid, n in rs]) for tid, rs in threads]
        text = samples_json(far, origin, hz).decode()
        assert text == dumps(reference(far, origin, hz))[1:-1]


@pytest.mark.usefixtures("engine_env")
@pytest.mark.parametrize("origin", [0.0, 1e-7, 3e-5, 0.5, 1e15 - 0.5, 1e15, 2.5e16, -3.0, -1e-6])
def test_times_around_the_edges_of_the_orjson_range_are_written_as_repr(origin):
    for hz, runs in ((1, [(0, 0, 3)]), (101, [(0, 0, 2), (900, 1, 2)])):
        text = samples_json([("1", runs)], origin, hz).decode()
        assert text == dumps(reference([("1", runs)], origin, hz))[1:-1]


@pytest.mark.usefixtures("engine_env")
def test_runs_given_in_any_order_come_out_in_time_then_thread_order():
    threads = [("2", [(5, 1, 2), (0, 0, 1)]), ("10", [(1, 3, 5)]), ("1", [(6, 2, 1)])]
    samples = json.loads(b"[" + samples_json(threads, ORIGIN, HZ) + b"]")
    keys = [(round((s["timestamp"] - ORIGIN) * HZ), s["thread_id"]) for s in samples]
    # thread ids compare as strings: "10" before "2"
    expected = [(0, "2"), (1, "10"), (2, "10"), (3, "10"), (4, "10"), (5, "10"), (5, "2")]
    assert keys == [*expected, (6, "1"), (6, "2")]
    assert samples_json([], ORIGIN, HZ) == samples_json([("1", [])], ORIGIN, HZ) == b""


@pytest.mark.usefixtures("engine_env")
def test_a_timestamp_json_cannot_hold_is_refused():
    with pytest.raises(ValueError, match="not JSON compliant"):
        samples_json([("1", [(0, 0, 2)])], float("inf"), HZ)


odd_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@pytest.mark.usefixtures("engine_env")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(odd_text, odd_text, st.lists(st.lists(st.integers(0, 5), max_size=4), max_size=3))
def test_the_whole_chunk_is_json_dumps_byte_for_byte(name, path, stacks):
    head = {"version": "2", "platform": "brightscript", "release": name, "client_sdk": {"n": path}}
    profile = {
        "frames": [{"function": name, "abs_path": path, "in_app": True, "lineno": 7}],
        "stacks": stacks,
        "samples": [],
        "thread_metadata": {"1": {"name": name + '\x00\n\u2028"\\'}},
    }
    threads = [("1", [(0, 0, 3)]), ("2", [(1, 0, 2)])]
    measurements = {
        "memory_footprint": {"unit": "byte", "values": [{"timestamp": 1.5, "value": 9}]}
    }
    for m in (None, measurements):
        data = chunk_json(head, profile, samples_json(threads, ORIGIN, HZ), m)
        payload = {**head, "profile": {**profile, "samples": reference(threads)}}
        if m is not None:
            payload["measurements"] = m
        # json.dumps itself, not the writer's own helper (the head and tables go through orjson)
        expected = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        assert data == expected.encode("utf-8")


# -- the same rules on facts as on samples -----------------------------------------------------

samples = st.lists(
    st.tuples(st.integers(0, 8000), st.sampled_from("123"), st.integers(0, 4)), max_size=30
)


def facts_of(profile: dict) -> SampleFacts:
    """Facts as a builder knows them (here taken from the samples)."""
    stacks = profile["stacks"]
    busy: dict[str, int] = {}
    spans: dict[str, tuple[float, float]] = {}
    outside = 0
    for s in profile["samples"]:
        tid, ts, sid = s["thread_id"], s["timestamp"], s["stack_id"]
        if sid >= len(stacks):
            outside += 1
        elif stacks[sid]:
            busy[tid] = busy.get(tid, 0) + 1
        lo, hi = spans.get(tid, (ts, ts))
        spans[tid] = (min(lo, ts), max(hi, ts))
    return SampleFacts(len(profile["samples"]), busy, spans, outside)


@given(samples, st.booleans(), st.booleans())
def test_facts_give_the_problems_the_samples_give(rows, bad_id, bad_stack):
    payload = {
        "version": "2",
        "platform": "brightscript",
        "profiler_id": "0" * 32,
        "chunk_id": "x" if bad_id else "1" * 32,
        "client_sdk": {"name": "rokuprof", "version": "1"},
        "profile": {
            "frames": [{"function": "f"}],
            "stacks": [[], [0], [0, 0]] + ([[3]] if bad_stack else []),
            "samples": [
                {"timestamp": ORIGIN + slot / HZ, "thread_id": tid, "stack_id": sid}
                for slot, tid, sid in rows
            ],
            "thread_metadata": {},
        },
    }
    full = validate_chunk(payload)
    size = len(dumps(payload).encode())
    facts = facts_of(payload["profile"])
    short = validate_chunk(
        {**payload, "profile": {**payload["profile"], "samples": []}}, size=size, samples=facts
    )
    assert [p.reason for p in short] == [p.reason for p in full]
    # the same words, but for where the first bad sample is (facts do not say)
    assert [p.detail.split(" (first:")[0] for p in short] == [
        p.detail.split(" (first:")[0] for p in full
    ]


def test_a_non_finite_timestamp_in_the_facts_is_invalid_json():
    payload = {
        "version": "2",
        "platform": "brightscript",
        "profiler_id": "0" * 32,
        "chunk_id": "1" * 32,
        "client_sdk": {"name": "rokuprof", "version": "1"},
        "profile": {"frames": [], "stacks": [[]], "samples": [], "thread_metadata": {}},
    }
    facts = SampleFacts(2, {}, {"1": (ORIGIN, float("nan"))})
    (problem,) = validate_chunk(payload, size=100, samples=facts)
    assert problem.reason == "profiling_invalid_json" and "'1'" in problem.detail


@pytest.mark.usefixtures("native_engine")
@given(thread_runs, st.sampled_from([1, 3, 500]))
def test_the_native_writer_writes_the_python_writers_bytes(threads, spread):
    """The native core's writer against the Python one on the runs the builder lays (it must
    not decline them: that would hide it); runs it declines (two samples in one cell) are
    written in Python."""
    native = engine.native_function("samples_text")
    assert native is not None
    for case in (disjoint(threads), threads):
        far = [(t, [(slot * spread, sid, n) for slot, sid, n in rs]) for t, rs in case if rs]
        far.sort(key=lambda t: t[0])
        if not far:
            continue
        tails = [(f',"thread_id":{dumps(t)},"stack_id":'.encode(), rs) for t, rs in far]
        text = native(tails, ORIGIN, HZ)
        expected = _samples_text(far, ORIGIN, HZ).encode()
        if case is threads and text is None:
            continue  # overlapping runs: declined
        assert text == expected


def test_the_native_writer_declines_what_it_does_not_write():
    if not _native.built():
        pytest.skip("the native core is not built")
    write = _native._bsprof.samples_text
    tail = b',"thread_id":"1","stack_id":'
    assert (
        write([(tail, [(0, 1, 2)])], ORIGIN, HZ)
        == dumps(reference([("1", [(0, 1, 2)])]))[1:-1].encode()
    )
    for runs in (
        [(0, 1, 2), (1, 1, 1)],
        [(-1, 0, 1)],
        [(0, 0, 0)],
        [(0, -1, 1)],
        [(2**62, 0, 1)],
        ((0, 0, 1),),
        [(0, 0, True)],
    ):
        assert write([(tail, runs)], ORIGIN, HZ) is None, runs
    assert write([(tail, [(0, 0, 1)])], float("inf"), HZ) is None
    assert write([("1", [(0, 0, 1)])], ORIGIN, HZ) is None


@pytest.mark.usefixtures("native_engine")
def test_the_native_writer_orders_many_threads_by_a_sort():
    """More threads than it merges: the same bytes, ordered by a sort."""
    threads = sorted(
        ((str(t), [(t % 5 + 7 * i, i % 3, 1 + (t + i) % 4) for i in range(30)]) for t in range(40)),
        key=lambda t: t[0],
    )
    threads = disjoint(threads)
    tails = [(f',"thread_id":{dumps(t)},"stack_id":'.encode(), rs) for t, rs in threads]
    assert (
        engine.native_function("samples_text")(tails, ORIGIN, HZ)
        == dumps(reference(threads))[1:-1].encode()
    )


@pytest.mark.usefixtures("native_engine")
@pytest.mark.parametrize(
    "dumps_times", [lambda times: b"[1.5,2.5", lambda times: b"[]", lambda times: "[1.0]", None]
)
def test_the_native_writer_writes_times_itself_when_the_fast_writer_gives_other_text(
    dumps_times,
):
    runs = [(0, 1, 3), (9, 2, 1)]
    tails = [(b',"thread_id":"7","stack_id":', runs)]
    got = engine.native_function("samples_text")(tails, ORIGIN, HZ, dumps_times)
    assert got == dumps(reference([("7", runs)]))[1:-1].encode()
