"""Check a Sentry V1 (transaction-based) profile and its transaction against Relay's V1 rules.

The V1 rules (seed ``sentry-sample-format-v1.txt`` and the V1 parts of the profiles spec), on top
of what V2 chunks share (frames, stacks, index bounds, 50 MiB, measurement units):

* ``version`` is ``"1"``; ``event_id`` 32 lowercase hex digits; ``platform`` and ``release``
  strings; ``device.architecture``, ``os.name``, ``os.version`` strings; ``timestamp`` RFC 3339;
* ``transaction`` with ``id`` and ``trace_id`` (32 hex), a non-empty ``name`` and an
  ``active_thread_id`` that is a uint64 written as a string; the profile travels in the same
  envelope as that transaction (:func:`validate_envelope_v1`);
* samples carry ``elapsed_since_start_ns`` as a uint64 *string* (a number is refused), an integer
  ``stack_id`` and a string ``thread_id``; ``thread_metadata`` is an object;
* some samples are left once Relay has removed, per thread, the idle (empty-stack) samples
  before its first and after its last busy sample and then every thread with a single sample
  (:func:`relay_kept_samples`);
* no kept sample more than 30 s after the profile's ``timestamp`` (Relay measures from there,
  not from the first sample).

Problems are :class:`~rokuprof.sentry.validate.Problem` values named with Relay's discard
reasons, as :func:`~rokuprof.sentry.validate.validate_chunk` does for V2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from rokuprof.sentry.validate import (
    DURATION_IS_TOO_LONG,
    EXCEED_SIZE_LIMIT,
    INVALID_JSON,
    MALFORMED_SAMPLES,
    MALFORMED_STACKS,
    MAX_CHUNK_BYTES,
    MEASUREMENT_UNITS,
    NOT_ENOUGH_SAMPLES,
    PLATFORM_NOT_SUPPORTED,
    Problem,
)
from rokuprof.timefmt import parse_iso

MAX_PROFILE_SECONDS = 30.0
MAX_PROFILE_NS = 30_000_000_000
NO_TRANSACTION = "profiling_no_transaction"
ENVELOPE_REJECTED = "envelope_rejected"

_UUID_HEX = re.compile(r"[0-9a-f]{32}")
_UINT = re.compile(r"[0-9]{1,20}")
_STRING_FRAME_KEYS = ("function", "filename", "abs_path", "module", "package", "platform")
U64_MAX = (1 << 64) - 1


def _is_index(value: object) -> bool:
    return type(value) is int and value >= 0


def _is_u64_string(value: object) -> bool:
    return isinstance(value, str) and bool(_UINT.fullmatch(value)) and int(value) <= U64_MAX


def _is_rfc3339(value: object) -> bool:
    return isinstance(value, str) and "T" in value and parse_iso(value) is not None


def validate_profile_v1(
    profile: Mapping | bytes | str, *, size: int | None = None
) -> list[Problem]:
    """Every problem Relay would find in a V1 profile payload (a dict or its JSON text); an
    empty list means it would be accepted (given its transaction comes with it)."""
    problems: list[Problem] = []

    def fail(reason: str, detail: str) -> None:
        problems.append(Problem(reason, detail))

    if isinstance(profile, bytes | bytearray | str):
        raw = profile.encode("utf-8") if isinstance(profile, str) else bytes(profile)
        size = len(raw)
        try:
            profile = json.loads(raw)
        except ValueError as exc:
            return [Problem(INVALID_JSON, f"not JSON: {exc}")]
    elif size is None:
        try:
            size = len(json.dumps(profile, allow_nan=False, separators=(",", ":")).encode())
        except (TypeError, ValueError) as exc:
            return [Problem(INVALID_JSON, f"cannot be written as JSON: {exc}")]
    if size > MAX_CHUNK_BYTES:
        fail(EXCEED_SIZE_LIMIT, f"{size} bytes (limit {MAX_CHUNK_BYTES})")
    if not isinstance(profile, Mapping):
        fail(INVALID_JSON, "the payload is not a JSON object")
        return problems

    version = profile.get("version")
    if version != "1":
        fail(PLATFORM_NOT_SUPPORTED, f'version {version!r}: a V1 profile has version "1"')
    if not (isinstance(profile.get("event_id"), str) and _UUID_HEX.fullmatch(profile["event_id"])):
        fail(INVALID_JSON, f"event_id {profile.get('event_id')!r}: expected 32 lowercase hex")
    for key in ("platform", "release"):
        if not isinstance(profile.get(key), str) or not profile[key]:
            fail(INVALID_JSON, f"{key}: missing or not a non-empty string")
    if "environment" in profile and not isinstance(profile["environment"], str):
        fail(INVALID_JSON, "environment: not a string")
    if "timestamp" in profile and not _is_rfc3339(profile["timestamp"]):
        fail(INVALID_JSON, f"timestamp {profile['timestamp']!r}: not an RFC 3339 time")
    for obj, keys in (("device", ("architecture",)), ("os", ("name", "version"))):
        value = profile.get(obj)
        if not isinstance(value, Mapping):
            fail(INVALID_JSON, f"{obj}: missing or not an object")
            continue
        for key in keys:
            if not isinstance(value.get(key), str):
                fail(INVALID_JSON, f"{obj}.{key}: missing or not a string")
    txn = profile.get("transaction")
    if not isinstance(txn, Mapping):
        fail(NO_TRANSACTION, "transaction: missing (a V1 profile belongs to a transaction)")
    else:
        for key in ("id", "trace_id"):
            if not (isinstance(txn.get(key), str) and _UUID_HEX.fullmatch(txn[key])):
                fail(INVALID_JSON, f"transaction.{key} {txn.get(key)!r}: expected 32 hex")
        if not isinstance(txn.get("name"), str) or not txn["name"]:
            fail(INVALID_JSON, "transaction.name: missing or empty")
        if not _is_u64_string(txn.get("active_thread_id")):
            fail(
                INVALID_JSON,
                f"transaction.active_thread_id {txn.get('active_thread_id')!r}: "
                "expected a uint64 as a string",
            )
    if "measurements" in profile:
        _check_measurements(fail, profile["measurements"])
    data = profile.get("profile")
    if not isinstance(data, Mapping):
        fail(INVALID_JSON, "profile: missing or not an object")
        return problems
    if _check_types(fail, data) and not any(p.reason == INVALID_JSON for p in problems):
        _check_rules(fail, data)
    return problems


def _check_measurements(fail, measurements: object) -> None:
    if not isinstance(measurements, Mapping):
        fail(INVALID_JSON, "measurements: not an object")
        return
    for name, m in measurements.items():
        if not isinstance(m, Mapping) or m.get("unit") not in MEASUREMENT_UNITS:
            fail(INVALID_JSON, f"measurements.{name}: no unit Relay knows")
            continue
        values = m.get("values")
        if not isinstance(values, list):
            fail(INVALID_JSON, f"measurements.{name}.values: not a list")
            continue
        for i, v in enumerate(values):
            ok = (
                isinstance(v, Mapping)
                and _is_u64_string(v.get("elapsed_since_start_ns"))
                and isinstance(v.get("value"), int | float)
                and not isinstance(v.get("value"), bool)
            )
            if not ok:
                fail(INVALID_JSON, f"measurements.{name}.values[{i}]: not a V1 value")


def _check_types(fail, data: Mapping) -> bool:
    samples, stacks, frames = (data.get(k) for k in ("samples", "stacks", "frames"))
    sound = True
    for name, value in (("samples", samples), ("stacks", stacks), ("frames", frames)):
        if not isinstance(value, list):
            fail(INVALID_JSON, f"profile.{name}: missing or not a list")
            sound = False
    if not sound:
        return False
    for i, s in enumerate(samples):
        if not isinstance(s, Mapping):
            fail(INVALID_JSON, f"profile.samples[{i}]: not an object")
            sound = False
            continue
        if not _is_u64_string(s.get("elapsed_since_start_ns")):
            fail(
                INVALID_JSON,
                f"profile.samples[{i}].elapsed_since_start_ns "
                f"{s.get('elapsed_since_start_ns')!r}: expected a uint64 as a string",
            )
            sound = False
        if not _is_index(s.get("stack_id")):
            fail(INVALID_JSON, f"profile.samples[{i}].stack_id {s.get('stack_id')!r}: no index")
            sound = False
        if not isinstance(s.get("thread_id"), str):
            fail(INVALID_JSON, f"profile.samples[{i}].thread_id {s.get('thread_id')!r}: no str")
            sound = False
    for i, stack in enumerate(stacks):
        if not isinstance(stack, list) or not all(_is_index(f) for f in stack):
            fail(INVALID_JSON, f"profile.stacks[{i}]: not a list of frame indexes")
            sound = False
    for i, frame in enumerate(frames):
        if not isinstance(frame, Mapping):
            fail(INVALID_JSON, f"profile.frames[{i}]: not an object")
            continue
        if not any(frame.get(k) for k in ("function", "filename", "instruction_addr")):
            fail(INVALID_JSON, f"profile.frames[{i}]: no function, filename or instruction_addr")
        for key in _STRING_FRAME_KEYS:
            if frame.get(key) is not None and not isinstance(frame[key], str):
                fail(INVALID_JSON, f"profile.frames[{i}].{key}: not a string")
        if frame.get("lineno") is not None and not _is_index(frame["lineno"]):
            fail(INVALID_JSON, f"profile.frames[{i}].lineno: not a non-negative integer")
        if frame.get("in_app") is not None and not isinstance(frame["in_app"], bool):
            fail(INVALID_JSON, f"profile.frames[{i}].in_app: not a boolean")
    threads = data.get("thread_metadata")
    if not isinstance(threads, Mapping):
        fail(INVALID_JSON, "profile.thread_metadata: missing or not an object")
    return sound


def relay_kept_samples(data: Mapping) -> list[Mapping]:
    """The samples of a V1 ``profile`` object that Relay keeps: per thread, empty-stack (idle)
    samples before its first and after its last busy sample are removed, then every thread left
    with fewer than two samples. Expects the types :func:`validate_profile_v1` checks."""
    samples, stacks = data["samples"], data["stacks"]
    busy_range: dict[str, tuple[int, int]] = {}
    for i, s in enumerate(samples):
        sid = s["stack_id"]
        if sid < len(stacks) and stacks[sid]:
            first, _ = busy_range.get(s["thread_id"], (i, i))
            busy_range[s["thread_id"]] = (first, i)
    trimmed = [
        s
        for i, s in enumerate(samples)
        if s["thread_id"] in busy_range
        and busy_range[s["thread_id"]][0] <= i <= busy_range[s["thread_id"]][1]
    ]
    count: dict[str, int] = {}
    for s in trimmed:
        count[s["thread_id"]] = count.get(s["thread_id"], 0) + 1
    return [s for s in trimmed if count[s["thread_id"]] > 1]


def _check_rules(fail, data: Mapping) -> None:
    samples, stacks, frames = data["samples"], data["stacks"], data["frames"]
    kept = relay_kept_samples(data)
    if not kept:
        fail(
            NOT_ENOUGH_SAMPLES,
            f"no sample left once idle samples at the edges and threads with a single sample "
            f"are dropped ({len(samples)} in all; a thread needs 2)",
        )
    bad = [i for i, s in enumerate(samples) if s["stack_id"] >= len(stacks)]
    if bad:
        fail(MALFORMED_SAMPLES, f"{len(bad)} samples name a stack outside the {len(stacks)}")
    bad = [i for i, stack in enumerate(stacks) if any(f >= len(frames) for f in stack)]
    if bad:
        fail(MALFORMED_STACKS, f"{len(bad)} stacks name a frame outside the {len(frames)}")
    if kept:
        latest = max(int(s["elapsed_since_start_ns"]) for s in kept)
        if latest > MAX_PROFILE_NS:
            fail(
                DURATION_IS_TOO_LONG,
                f"a sample {latest / 1e9:.3f} s after the profile's timestamp "
                f"(more than {MAX_PROFILE_SECONDS:g} s)",
            )


def validate_transaction_v1(transaction: Mapping, profile: Mapping) -> list[Problem]:
    """The transaction event a V1 profile needs: ``type`` transaction, the ``event_id`` the
    profile names, the same trace, and start/end timestamps."""
    problems: list[Problem] = []
    if not isinstance(transaction, Mapping):
        return [Problem(NO_TRANSACTION, "the transaction is not a JSON object")]
    if transaction.get("type") != "transaction":
        problems.append(Problem(NO_TRANSACTION, f"type {transaction.get('type')!r}"))
    txn = profile.get("transaction") if isinstance(profile, Mapping) else None
    txn = txn if isinstance(txn, Mapping) else {}
    if transaction.get("event_id") != txn.get("id"):
        problems.append(
            Problem(
                NO_TRANSACTION,
                f"transaction event_id {transaction.get('event_id')!r} is not the profile's "
                f"transaction.id {txn.get('id')!r}",
            )
        )
    trace = transaction.get("contexts", {}).get("trace", {})
    if not isinstance(trace, Mapping) or trace.get("trace_id") != txn.get("trace_id"):
        problems.append(
            Problem(NO_TRANSACTION, "contexts.trace.trace_id differs from the profile's")
        )
    for key in ("start_timestamp", "timestamp"):
        value = transaction.get(key)
        if not isinstance(value, int | float) or isinstance(value, bool):
            problems.append(Problem(INVALID_JSON, f"transaction {key}: missing or not a number"))
    return problems


def validate_envelope_v1(envelope) -> list[Problem]:
    """An envelope (:class:`~rokuprof.sentry.envelope.Envelope`) with one ``transaction`` and one
    ``profile`` item that belong together, each valid."""
    kinds = [item.type for item in envelope.items]
    if kinds.count("profile") != 1 or kinds.count("transaction") != 1:
        return [Problem(ENVELOPE_REJECTED, f"items {kinds}: need one transaction, one profile")]
    by_type = {item.type: item for item in envelope.items}
    problems = validate_profile_v1(by_type["profile"].payload)
    try:
        transaction = json.loads(by_type["transaction"].payload)
        profile = json.loads(by_type["profile"].payload)
    except ValueError as exc:
        return [*problems, Problem(INVALID_JSON, f"item is not JSON: {exc}")]
    return problems + validate_transaction_v1(transaction, profile)


def as_stored(
    profile: Mapping,
    *,
    organization_id: int = 1,
    project_id: int = 1,
    received: int = 0,
    retention_days: int = 90,
) -> dict:
    """The profile as Sentry stores it after ingestion (what ``vroomrs.profile_from_json_str``
    reads): the ingestion fields added, thread ids and sample times as numbers, and the
    transaction's segment id."""
    stored = json.loads(json.dumps(profile))
    stored.update(
        organization_id=organization_id,
        project_id=project_id,
        received=received,
        retention_days=retention_days,
        sampled=True,
    )
    txn = stored.get("transaction", {})
    if isinstance(txn.get("active_thread_id"), str):
        txn["active_thread_id"] = int(txn["active_thread_id"])
    txn.setdefault("segment_id", txn.get("id", "")[:16])
    for s in stored.get("profile", {}).get("samples", []):
        s["thread_id"] = int(s["thread_id"])
        s["elapsed_since_start_ns"] = int(s["elapsed_since_start_ns"])
    for m in stored.get("measurements", {}).values():
        for v in m.get("values", []):
            v["elapsed_since_start_ns"] = int(v["elapsed_since_start_ns"])
    return stored
