"""pprof exports read by ``go tool pprof``: every figure equals ``inspect``'s, exactly."""

from __future__ import annotations

import gzip

import pytest

from tests.viewers import pprof
from tests.viewers.samples import VIEWER_SAMPLES, expected, write_export

#: pprof sample type -> (our figure, -top unit kind)
SAMPLE_TYPES = {
    "cpu": ("cpu", "count"),
    "wall": ("wall", "time"),
    "calls": ("calls", "count"),
    "alloc_objects": ("alloc_count", "count"),
    "alloc_space": ("alloc_bytes", "bytes"),
    "inuse_objects": ("live_count", "count"),
    "inuse_space": ("live_bytes", "bytes"),
}


@pytest.fixture(scope="module", params=VIEWER_SAMPLES)
def exported(request, tmp_path_factory):
    pprof.go()
    name = request.param
    path = write_export(name, "pprof", tmp_path_factory.mktemp("pprof"), ".pb.gz")
    return name, path


def test_raw_samples_carry_our_figures_per_thread_and_function(exported):
    name, path = exported
    want = expected(name)
    profile = pprof.raw(path)

    assert [t.split("/")[0] for t in profile.sample_types] == list(SAMPLE_TYPES)
    assert profile.default_type == "wall"
    assert len(profile.mappings) == 1
    assert {s.labels["thread"][0] for s in profile.samples if "thread" in s.labels} == (
        want.threads()
    )
    assert all(len(s.labels.get("thread", [])) == 1 for s in profile.samples)

    for sample_type, (metric, _) in SAMPLE_TYPES.items():
        got = profile.function_totals(sample_type)
        flat = {k: v[0] for k, v in got.items() if v[0]}
        assert flat == want.by(lambda k: k, metric), sample_type
        if metric != "calls":  # inspect has no "total calls"
            cum = {k: v[1] for k, v in got.items() if v[1]}
            assert cum == want.by(lambda k: k, metric, "total"), sample_type


def test_locations_sit_at_source_lines_inside_their_functions(exported):
    name, path = exported
    profile = pprof.raw(path)
    lines = [line for loc in profile.locations.values() for line in loc]
    assert lines
    assert all(line.file.startswith("pkg:/") for line in lines)
    assert all(line.start_line >= 1 and line.line >= line.start_line for line in lines)
    if name == "cafe-tv-full":  # line data: more than one line per function somewhere
        per_function = {}
        for line in lines:
            per_function.setdefault((line.function, line.file), set()).add(line.line)
        assert max(len(v) for v in per_function.values()) > 1


@pytest.mark.parametrize("sample_type", list(SAMPLE_TYPES))
def test_top_per_function_equals_ours(exported, sample_type):
    name, path = exported
    metric, kind = SAMPLE_TYPES[sample_type]
    want = expected(name)
    got = pprof.top(path, sample_type, kind)
    flat = {fn: f for fn, (f, _) in got.items() if f}
    assert flat == want.by(lambda k: k[1], metric)
    if metric != "calls":
        cum = {fn: c for fn, (_, c) in got.items() if c}
        assert cum == want.by(lambda k: k[1], metric, "total")


def test_traces_label_every_sample_with_its_thread(exported):
    name, path = exported
    traces = pprof.traces(path)
    assert len(traces) == len(pprof.raw(path).samples)
    assert {t.labels.get("thread") for t in traces} == expected(name).threads()
    assert all(t.stack for t in traces)


# -- the harness itself can fail -------------------------------------------------------------

STRINGS = ["", "wall", "microseconds", "Main", "pkg:/source/main.brs"]


def test_harness_reads_a_hand_made_profile(tmp_path):
    pprof.go()
    path = tmp_path / "good.pb"
    path.write_bytes(pprof.encode_profile(STRINGS, [(1, 2)], [([1], [5])], [(3, 4)], [(1, 2)]))
    profile = pprof.raw(path)
    assert profile.function_totals("wall") == {("", "Main", "pkg:/source/main.brs"): [5, 5]}


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (
            lambda: pprof.encode_profile(STRINGS, [(1, 2)], [([7], [5])], [(3, 4)], [(1, 2)]),
            "sample has nil location",
        ),
        (
            lambda: pprof.encode_profile(
                STRINGS, [(1, 2), (1, 2)], [([1], [5])], [(3, 4)], [(1, 2)]
            ),
            "mismatch: sample has 1 values vs. 2 types",
        ),
        (
            lambda: pprof.encode_profile(["x", *STRINGS[1:]], [(1, 2)], [([1], [5])]),
            "unrecognized profile format",
        ),
        (
            lambda: gzip.compress(pprof.encode_profile(STRINGS, [(1, 2)], [([1], [5])]))[:-9],
            "unexpected EOF",
        ),
    ],
    ids=["dangling-location", "values-vs-types", "string-0", "truncated-gzip"],
)
def test_harness_fails_on_a_broken_profile(tmp_path, broken, message):
    pprof.go()
    path = tmp_path / "broken.pb.gz"
    path.write_bytes(broken())
    result = pprof.run(path, "-raw")
    assert result.returncode == 1 and result.stdout == ""
    assert message in result.stderr
    with pytest.raises(AssertionError, match="exited 1"):
        pprof.raw(path)
