"""The validator: every rule Relay enforces on a V2 chunk, with Relay's reason names."""

from __future__ import annotations

import copy
import json

import pytest

from rokuprof.sentry.validate import (
    DURATION_IS_TOO_LONG,
    EXCEED_SIZE_LIMIT,
    INVALID_JSON,
    INVALID_PROFILE_METADATA,
    MALFORMED_SAMPLES,
    MALFORMED_STACKS,
    MAX_CHUNK_BYTES,
    NOT_ENOUGH_SAMPLES,
    PLATFORM_NOT_SUPPORTED,
    ChunkInvalid,
    check_chunk,
    validate_chunk,
)

T0 = 1_795_000_000.0


def valid() -> dict:
    return {
        "version": "2",
        "platform": "brightscript",
        "profiler_id": "0123456789abcdef0123456789abcdef",
        "chunk_id": "fedcba9876543210fedcba9876543210",
        "client_sdk": {"name": "rokuprof", "version": "0.1.0"},
        "release": "app@1.0",
        "environment": "production",
        "profile": {
            "frames": [
                {"function": "Main", "abs_path": "pkg:/source/main.brs", "lineno": 1},
                {"function": "work", "in_app": True, "colno": 0},
            ],
            "stacks": [[1, 0], []],
            "samples": [
                {"timestamp": T0, "thread_id": "1", "stack_id": 0},
                {"timestamp": T0 + 0.01, "thread_id": "1", "stack_id": 0},
                {"timestamp": T0 + 0.02, "thread_id": "1", "stack_id": 1},
            ],
            "thread_metadata": {"1": {"name": "main", "priority": 0}},
        },
        "measurements": {
            "memory_footprint": {"unit": "byte", "values": [{"timestamp": T0, "value": 10}]}
        },
    }


def mutate(path: str, value=None, *, delete: bool = False):
    def apply(chunk: dict) -> dict:
        *parents, last = path.split(".")
        target = chunk
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        elif delete:
            del target[last]
        else:
            target[last] = value
        return chunk

    return apply


def reasons(chunk) -> list[str]:
    return [p.reason for p in validate_chunk(chunk)]


def test_a_valid_chunk_passes_as_dict_bytes_and_text():
    chunk = valid()
    assert validate_chunk(chunk) == []
    assert validate_chunk(json.dumps(chunk).encode()) == []
    assert validate_chunk(json.dumps(chunk)) == []
    check_chunk(chunk)


CASES = [
    # rule 1: version
    ("version", "1", PLATFORM_NOT_SUPPORTED),
    ("version", None, PLATFORM_NOT_SUPPORTED),
    ("version", 2, INVALID_JSON),
    ("version", "3", INVALID_JSON),
    # rule 2: platform
    ("platform", None, INVALID_JSON),
    ("platform", 7, INVALID_JSON),
    # rule 3: ids
    ("chunk_id", "01234567-89ab-cdef-0123-456789abcdef", INVALID_JSON),
    ("chunk_id", "0123456789ABCDEF0123456789ABCDEF", INVALID_JSON),
    ("profiler_id", "0123", INVALID_JSON),
    ("profiler_id", None, INVALID_JSON),
    # rule 4: client_sdk
    ("client_sdk", None, INVALID_JSON),
    ("client_sdk.name", 3, INVALID_JSON),
    ("client_sdk.version", "", INVALID_PROFILE_METADATA),
    ("client_sdk.name", "", INVALID_PROFILE_METADATA),
    # rule 5: release, environment
    ("release", 5, INVALID_JSON),
    ("environment", ["prod"], INVALID_JSON),
    # rule 6: samples
    ("profile.samples.0.timestamp", "1795000000", INVALID_JSON),
    ("profile.samples.0.timestamp", True, INVALID_JSON),
    ("profile.samples.0.thread_id", 1, INVALID_JSON),
    ("profile.samples.0.stack_id", -1, INVALID_JSON),
    ("profile.samples.0.stack_id", 1.0, INVALID_JSON),
    ("profile.samples.0", "x", INVALID_JSON),
    ("profile.samples", None, INVALID_JSON),
    # rule 7: stacks
    ("profile.samples.2.stack_id", 2, MALFORMED_SAMPLES),  # its thread keeps 2 valid ones
    ("profile.stacks", [[1, 0], [], [5]], MALFORMED_STACKS),  # unused, still checked
    ("profile.stacks.0", [1, -1], INVALID_JSON),
    ("profile.stacks.0", [1, True], INVALID_JSON),
    ("profile.stacks.0", [1.0, 0], INVALID_JSON),
    ("profile.stacks.0", ["1", 0], INVALID_JSON),
    ("profile.stacks.0", [1, None], INVALID_JSON),
    ("profile.stacks", None, INVALID_JSON),
    # rule 8: frames
    ("profile.frames.0.lineno", -1, INVALID_JSON),
    ("profile.frames.0.lineno", 2**32, INVALID_JSON),
    ("profile.frames.1.in_app", "yes", INVALID_JSON),
    ("profile.frames.0.function", 9, INVALID_JSON),
    ("profile.frames.0.instruction_addr", 4096, INVALID_JSON),
    ("profile.frames", None, INVALID_JSON),
    # rule 9: thread metadata
    ("profile.thread_metadata", [], INVALID_JSON),
    ("profile.thread_metadata.1", "main", INVALID_JSON),
    ("profile.thread_metadata.1.name", 1, INVALID_JSON),
    ("profile.thread_metadata.1.priority", -3, INVALID_JSON),
    # rule 12: measurements
    ("measurements.memory_footprint.unit", "bytes", INVALID_JSON),
    ("measurements.memory_footprint.values", {}, INVALID_JSON),
    ("measurements.memory_footprint.values.0.value", None, INVALID_JSON),
    ("measurements.memory_footprint.values.0.timestamp", "now", INVALID_JSON),
    ("measurements", [], INVALID_JSON),
    ("profile", None, INVALID_JSON),
]


@pytest.mark.parametrize(("path", "value", "reason"), CASES)
def test_each_rule_gives_relays_reason(path, value, reason):
    chunk = mutate(path, value)(valid())
    assert reasons(chunk)[0] == reason
    with pytest.raises(ChunkInvalid) as info:
        check_chunk(chunk)
    assert info.value.problems[0].reason == reason


@pytest.mark.parametrize("key", ["version", "platform", "chunk_id", "client_sdk", "profile"])
def test_missing_required_fields(key):
    chunk = mutate(key, delete=True)(valid())
    assert reasons(chunk)[0] in (INVALID_JSON, PLATFORM_NOT_SUPPORTED)


def test_release_environment_measurements_are_optional_and_unknown_frame_keys_allowed():
    chunk = valid()
    for key in ("release", "environment", "measurements"):
        del chunk[key]
    del chunk["profile"]["thread_metadata"]
    chunk["profile"]["frames"][0]["vars"] = {"x": 1}  # unknown keys are dropped by Relay
    chunk["measurements"] = {"m": {"unit": "ns", "values": [{"value": "12.5"}]}}  # numeric text
    assert validate_chunk(chunk) == []


def test_threads_with_one_non_idle_sample_are_dropped_before_counting():
    chunk = valid()
    samples = chunk["profile"]["samples"]
    del samples[1]  # thread 1 now has a single busy sample (+ one idle)
    assert reasons(chunk) == [NOT_ENOUGH_SAMPLES]
    samples += [
        {"timestamp": T0 + 1, "thread_id": "2", "stack_id": 0},
        {"timestamp": T0 + 2, "thread_id": "2", "stack_id": 0},
    ]
    assert validate_chunk(chunk) == []  # thread 2 has two


def test_only_idle_samples_or_no_samples_are_not_enough():
    chunk = valid()
    for s in chunk["profile"]["samples"]:
        s["stack_id"] = 1
    assert reasons(chunk) == [NOT_ENOUGH_SAMPLES]
    chunk["profile"]["samples"] = []
    assert reasons(chunk) == [NOT_ENOUGH_SAMPLES]


@pytest.mark.parametrize(("span", "ok"), [(60.0, True), (66.0, True), (66.01, False)])
def test_duration_limit_is_66_seconds(span, ok):
    chunk = valid()
    chunk["profile"]["samples"][2]["timestamp"] = T0 + span
    assert reasons(chunk) == ([] if ok else [DURATION_IS_TOO_LONG])


def test_duration_counts_only_the_threads_relay_keeps():
    chunk = valid()
    chunk["profile"]["samples"].append({"timestamp": T0 + 500, "thread_id": "9", "stack_id": 0})
    assert validate_chunk(chunk) == []  # thread 9 (one sample) is dropped first


def test_size_limit():
    assert reasons(copy.deepcopy(valid()))[:1] == []
    assert validate_chunk(valid(), size=MAX_CHUNK_BYTES + 1)[0].reason == EXCEED_SIZE_LIMIT
    assert validate_chunk(valid(), size=MAX_CHUNK_BYTES) == []


def test_not_json():
    assert reasons(b"{not json") == [INVALID_JSON]
    assert reasons(b'{"timestamp": NaN}') == [INVALID_JSON]  # Python accepts NaN, JSON does not
    assert reasons(b"[1, 2]") == [INVALID_JSON]
    chunk = valid()
    chunk["profile"]["samples"][0]["timestamp"] = float("nan")
    assert reasons(chunk) == [INVALID_JSON]


def test_problems_say_where():
    chunk = mutate("profile.samples.0.thread_id", 1)(valid())
    (problem,) = validate_chunk(chunk)
    assert "samples[0].thread_id" in problem.detail and str(problem).startswith(INVALID_JSON)


def test_a_stack_id_outside_the_stacks_is_named_with_the_first_such_sample():
    chunk = valid()
    chunk["profile"]["samples"][2]["stack_id"] = 7
    chunk["profile"]["samples"].append(dict(chunk["profile"]["samples"][2]))
    (problem,) = validate_chunk(chunk)
    assert problem.reason == MALFORMED_SAMPLES
    assert problem.detail == "2 samples name a stack outside the 2 stacks (first: samples[2])"


def test_a_sample_mapping_that_is_not_a_dict_still_counts():
    """Samples that are mappings of another kind take the long way through the checks, and
    still count for the rules (two busy samples on thread 1)."""
    from types import MappingProxyType

    chunk = valid()
    chunk["profile"]["samples"] = [MappingProxyType(s) for s in chunk["profile"]["samples"]]
    assert validate_chunk(chunk, size=1000) == []
    chunk["profile"]["samples"].pop(0)
    assert [p.reason for p in validate_chunk(chunk, size=1000)] == [NOT_ENOUGH_SAMPLES]
