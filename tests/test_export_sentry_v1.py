"""Sentry V1 export: how idle time and segment borders reach Sentry, and the V1 validator's
model of Relay (idle samples trimmed at a thread's edges, lone-sample threads dropped, 30 s from
the profile's timestamp). Timelines are laid out by hand on a real sample's input."""

from __future__ import annotations

import dataclasses
import json
from functools import cache
from pathlib import Path

import pytest

from rokuprof.export import input_from_bytes
from rokuprof.export.model import IDLE, Timeline
from rokuprof.export.sentry_v1 import IDLE_FRAME, SEGMENT_SLOTS, build
from rokuprof.sentry.validate import DURATION_IS_TOO_LONG, NOT_ENOUGH_SAMPLES
from rokuprof.sentry.validate_v1 import relay_kept_samples, validate_profile_v1

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "cafe-tv-cpu-only.bsprof"


@cache
def _base():
    return input_from_bytes(SAMPLE.read_bytes())


def with_timeline(runs: dict[int, list[tuple[int, int, int]]]):
    """The sample's input with a hand-made timeline: stack 1 = frame 0, stack 2 = frames 1, 0."""
    base = _base()
    timeline = Timeline(101, base.run.start, stacks=[(), (0,), (1, 0)], runs=runs)
    threads = {t: base.threads[t] for t in runs}
    return dataclasses.replace(base, timeline=timeline, threads=threads)


def lanes(profile: dict) -> dict[str, list[tuple[int, list[str]]]]:
    """Per thread: (elapsed ns, stack as function names, leaf first)."""
    data = profile["profile"]
    out: dict[str, list] = {}
    for s in data["samples"]:
        names = [data["frames"][f]["function"] for f in data["stacks"][s["stack_id"]]]
        out.setdefault(s["thread_id"], []).append((int(s["elapsed_since_start_ns"]), names))
    return out


def test_an_idle_gap_is_an_idle_frame_not_an_empty_stack():
    inp = with_timeline({1: [(0, 2, 3), (3, IDLE, 50), (53, 2, 2), (55, IDLE, 10)]})
    (p,) = build(inp).profiles
    frames = p.profile["profile"]["frames"]
    assert IDLE_FRAME in frames and [] not in p.profile["profile"]["stacks"]
    names = [inp.frames[1].function, inp.frames[0].function]
    (lane,) = lanes(p.profile).values()
    at = lambda slot: slot * 10**9 // 101  # noqa: E731
    assert lane == [
        (at(0), names),
        (at(1), names),
        (at(2), names),
        (at(3), ["(idle)"]),  # the run ends: the gap is idle, not the root's time
        (at(53), names),
        (at(54), names),
        (at(55), ["(idle)"]),
    ]
    assert p.problems == []


def test_a_run_that_ends_the_timeline_is_closed_where_it_ends():
    inp = with_timeline({1: [(10, 1, 4)]})
    (p,) = build(inp).profiles
    (lane,) = lanes(p.profile).values()
    assert [names for _, names in lane] == [[inp.frames[0].function]] * 4 + [["(idle)"]]
    assert lane[-1][0] == 4 * 10**9 // 101


def test_a_lone_busy_sample_reaches_sentry():
    """One busy slot on a thread: closed by an idle sample, Relay keeps both (it dropped the
    thread when the closing sample had an empty stack: trimmed at the edge, one sample left)."""
    inp = with_timeline({1: [(0, 2, 300), (300, IDLE, 5)], 2: [(7, 1, 1), (8, IDLE, 5)]})
    v1 = build(inp)
    assert v1.dropped == {}
    (p,) = v1.profiles
    assert p.problems == []
    assert relay_kept_samples(p.profile["profile"]) == p.profile["profile"]["samples"]
    assert len(lanes(p.profile)["2"]) == 2


def test_a_run_across_a_segment_border_is_closed_at_the_border():
    border = SEGMENT_SLOTS
    inp = with_timeline({1: [(border - 3, 1, 6), (border + 3, IDLE, 4)]})
    first, second = build(inp).profiles
    (lane1,) = lanes(first.profile).values()
    (lane2,) = lanes(second.profile).values()
    busy = [inp.frames[0].function]
    assert [n for _, n in lane1] == [busy] * 3 + [["(idle)"]]
    assert lane1[-1][0] == 3 * 10**9 // 101  # at the border, 3 slots after the first sample
    assert [n for _, n in lane2] == [busy] * 3 + [["(idle)"]]
    assert first.problems == [] and second.problems == []


# --- the validator's model of Relay ----------------------------------------------------------


def v1(samples: list[tuple[str, int, int]], stacks: list[list[int]]) -> dict:
    """A V1 payload with samples ``(thread, elapsed ns, stack id)``."""
    return {
        "version": "1",
        "event_id": "a" * 32,
        "platform": "brightscript",
        "release": "app@1",
        "timestamp": "2026-11-23T10:00:00.000000Z",
        "device": {"architecture": "unknown"},
        "os": {"name": "Roku OS", "version": "15.0"},
        "transaction": {
            "id": "b" * 32,
            "name": "app",
            "trace_id": "c" * 32,
            "active_thread_id": "1",
        },
        "profile": {
            "samples": [
                {"elapsed_since_start_ns": str(t), "stack_id": s, "thread_id": tid}
                for tid, t, s in samples
            ],
            "stacks": stacks,
            "frames": [{"function": "f"}, dict(IDLE_FRAME)],
            "thread_metadata": {},
        },
    }


EMPTY, BUSY, IDLE_STACK = 0, 1, 2
STACKS = [[], [0], [1]]


def reasons(payload: dict) -> list[str]:
    return [p.reason for p in validate_profile_v1(payload)]


def test_relay_trims_empty_stack_samples_at_a_threads_edges():
    payload = v1(
        [("1", 0, EMPTY), ("1", 10, BUSY), ("1", 20, EMPTY), ("1", 30, BUSY), ("1", 40, EMPTY)],
        STACKS,
    )
    kept = relay_kept_samples(payload["profile"])
    assert [int(s["elapsed_since_start_ns"]) for s in kept] == [10, 20, 30]
    assert reasons(payload) == []


@pytest.mark.parametrize(
    ("closing", "ok"), [(EMPTY, False), (IDLE_STACK, True)], ids=["empty-stack", "idle-frame"]
)
def test_one_busy_sample_needs_a_closing_sample_that_relay_keeps(closing, ok):
    payload = v1([("1", 0, BUSY), ("1", 10, closing)], STACKS)
    assert reasons(payload) == ([] if ok else [NOT_ENOUGH_SAMPLES])


def test_relay_drops_a_thread_with_one_sample_and_keeps_the_others():
    payload = v1([("1", 0, BUSY), ("2", 5, BUSY), ("1", 10, BUSY)], STACKS)
    kept = relay_kept_samples(payload["profile"])
    assert [s["thread_id"] for s in kept] == ["1", "1"]
    assert reasons(payload) == []


@pytest.mark.parametrize(("last_ns", "ok"), [(30 * 10**9, True), (30 * 10**9 + 1, False)])
def test_30_seconds_count_from_the_profiles_timestamp_not_its_first_sample(last_ns, ok):
    payload = v1([("1", 29 * 10**9, BUSY), ("1", last_ns, BUSY)], STACKS)
    assert reasons(payload) == ([] if ok else [DURATION_IS_TOO_LONG])


def test_release_and_environment_come_from_the_chunk_settings():
    from rokuprof.sentry.settings import ChunkSettings

    base = _base()
    default = build(base).profiles[0]
    assert default.profile["release"] == "Café TV@2.4.1"
    assert default.profile["environment"] == "production"
    inp = dataclasses.replace(base, settings=ChunkSettings(release="r@1", environment="lab"))
    for p in build(inp).profiles:
        for payload in (p.profile, json.loads(p.transaction_json)):
            assert (payload["release"], payload["environment"]) == ("r@1", "lab")
    unnamed = dataclasses.replace(base, settings=ChunkSettings(environment=None))
    for p in build(unnamed).profiles:
        assert "environment" not in p.profile and not p.problems
        assert "environment" not in json.loads(p.transaction_json)
