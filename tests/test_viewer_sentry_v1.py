"""Sentry V1 (transaction) profile exports: our V1 validator accepts every segment, sentry_sdk's
envelope parser reads each envelope as one transaction and one profile, and Sentry's own profile
processor (vroomrs) reads every segment and gives inspect's self time per function.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from rokuprof.sentry.envelope import Envelope
from rokuprof.sentry.validate_v1 import validate_envelope_v1, validate_profile_v1
from tests.viewers import vroom
from tests.viewers.expected import SAMPLE_PERIOD_US, differences
from tests.viewers.samples import VIEWER_SAMPLES, expected, write_parts

MAX_SEGMENT_NS = 30 * 10**9


@pytest.fixture(scope="module", params=VIEWER_SAMPLES)
def exported(request, tmp_path_factory):
    name = request.param
    parts = write_parts(name, "sentry-v1", tmp_path_factory.mktemp("sentry-v1"))
    segments = defaultdict(dict)
    for part, path in parts.items():
        number, kind = part.split(".", 1)
        segments[number][kind] = path
    assert segments and all(
        set(s) == {"profile.json", "transaction.json", "envelope"} for s in segments.values()
    )
    return name, dict(sorted(segments.items()))


def profiles(segments):
    return [json.loads(s["profile.json"].read_text()) for s in segments.values()]


def test_our_v1_validator_accepts_every_segment(exported):
    _, segments = exported
    for segment in segments.values():
        assert validate_profile_v1(segment["profile.json"].read_bytes()) == []


def test_sentry_sdk_reads_each_envelope_as_its_transaction_and_profile(exported):
    _, segments = exported
    for segment in segments.values():
        envelope = vroom.parse_envelope(segment["envelope"].read_bytes())
        items = {item.headers["type"]: item for item in envelope.items}
        assert [item.headers["type"] for item in envelope.items] == ["transaction", "profile"]
        profile = json.loads(items["profile"].get_bytes())
        transaction = json.loads(items["transaction"].get_bytes())
        assert profile == json.loads(segment["profile.json"].read_text())
        assert transaction == json.loads(segment["transaction.json"].read_text())
        assert transaction["type"] == "transaction"
        assert transaction["event_id"] == profile["transaction"]["id"]
        assert transaction["contexts"]["trace"]["trace_id"] == profile["transaction"]["trace_id"]
        assert validate_envelope_v1(Envelope.from_bytes(segment["envelope"].read_bytes())) == []


def test_vroom_reads_every_segment(exported):
    _, segments = exported
    reads = vroom.read([vroom.ingest(p) for p in profiles(segments)])
    assert [r.error for r in reads] == [None] * len(segments)
    assert all(0 < r.duration_ns <= MAX_SEGMENT_NS for r in reads)


def test_vroom_self_times_per_function_are_ours(exported):
    name, segments = exported
    docs = profiles(segments)
    threads = {tid: meta["name"] for tid, meta in docs[0]["profile"]["thread_metadata"].items()}
    # vroom reports the transaction's active thread only: read each thread as the active one.
    stored = []
    for tid in threads:
        for doc in docs:
            copy = vroom.ingest(doc)
            copy["transaction"]["active_thread_id"] = int(tid)
            stored.append(copy)
    got: dict[tuple[str, str], float] = defaultdict(float)
    for read in vroom.read(stored):
        assert read.error is None
        for f in read.functions:
            if not f["function"].startswith("("):
                got[(threads[f["thread_id"]], f["function"])] += f["self_ns"] / 1000
    want = expected(name)
    ours = want.by(lambda k: (k[0], k[1]), "wall")
    paths = want.by(lambda k: (k[0], k[1]), "paths")
    # vroom leaves out a function with a single sample in a segment: up to a period per segment.
    slack = len(segments)
    tolerance = lambda k: SAMPLE_PERIOD_US * (paths.get(k, 0) + slack)  # noqa: E731
    assert differences(dict(got), ours, tolerance) == []


def test_vroom_harness_survives_a_panic(exported):
    _, segments = exported
    broken = vroom.ingest(profiles(segments)[0])
    broken["profile"]["samples"][0]["stack_id"] = len(broken["profile"]["stacks"]) + 5
    good = vroom.ingest(profiles(segments)[0])
    reads = vroom.read([broken, good])
    assert reads[0].error.startswith("PanicException: index out of bounds")
    assert reads[1].error is None
