"""nflxprofile exports (FlameScope): PyPI ``nflxprofile``'s own classes parse them with every
required field, node hit counts add up to the samples, times are seconds within the run, and its
``tree`` output gives inspect's time per function within one sample period per call path.
"""

from __future__ import annotations

import pytest

from tests.viewers import nflx
from tests.viewers.expected import SAMPLE_PERIOD_US, differences
from tests.viewers.samples import VIEWER_SAMPLES, expected, load, write_export


@pytest.fixture(scope="module", params=VIEWER_SAMPLES)
def exported(request, tmp_path_factory):
    nflx.classes()
    directory = tmp_path_factory.mktemp("nflxprofile")
    return request.param, write_export(request.param, "nflxprofile", directory, ".nflxprofile")


def test_classes_parse_it_with_every_required_field(exported):
    name, path = exported
    profile = nflx.load(path)
    header, footer = load(name).reader.header, load(name).reader.footer
    assert profile.nodes[0].function_name == "root"
    assert len(profile.samples) == len(profile.time_deltas) > 0
    assert sum(n.hit_count for n in profile.nodes.values()) == len(profile.samples)
    assert all(s in profile.nodes for s in profile.samples)
    assert all(d >= 0 for d in profile.time_deltas)
    # Seconds since the epoch, inside the run.
    assert profile.start_time == pytest.approx(header.start_ms / 1000)
    assert profile.end_time == pytest.approx(footer.end_ms / 1000)
    assert profile.start_time + sum(profile.time_deltas) <= profile.end_time + 1e-6


def test_flame_graph_tree_gives_our_time_per_function(exported, tmp_path):
    name, path = exported
    counts = nflx.tree_counts(nflx.tree(path, tmp_path / "tree.json"), thread_depth=1)
    want = expected(name)
    assert {thread for thread, _ in counts} == want.threads()
    by_function = lambda k: (k[0], k[1])  # noqa: E731 - the tree has no file names
    problems = []
    for column, index in (("self", 0), ("total", 1)):
        got = {k: v[index] * SAMPLE_PERIOD_US for k, v in counts.items() if v[index]}
        ours = want.by(by_function, "wall", column)
        paths = want.by(by_function, "paths", column)
        tolerance = lambda k, paths=paths: SAMPLE_PERIOD_US * paths.get(k, 1)  # noqa: E731
        problems += [f"{column} {p}" for p in differences(got, ours, tolerance)]
    assert problems == []


def test_harness_refuses_a_profile_missing_a_required_field(tmp_path):
    pb = nflx.classes()
    profile = pb.Profile()
    profile.nodes[0].function_name = "root"  # no hit_count: required
    path = tmp_path / "partial.nflxprofile"
    path.write_bytes(profile.SerializePartialToString())
    with pytest.raises(AssertionError, match="hit_count"):
        nflx.load(path)
    from google.protobuf.message import EncodeError

    with pytest.raises(EncodeError, match="hit_count"):
        profile.SerializeToString()


def test_harness_refuses_a_truncated_profile(exported, tmp_path):
    _, path = exported
    cut = tmp_path / "cut.nflxprofile"
    cut.write_bytes(path.read_bytes()[:-7])
    from google.protobuf.message import DecodeError

    with pytest.raises(DecodeError, match="Error parsing message"):
        nflx.load(cut)
