"""Sentry V1 (transaction-based) profiles: one profile and its transaction per segment of the
synthetic timeline of at most 30 s, as payload JSON and as envelopes.

Sentry gives a sample the time until the next sample on its thread, so every busy run is closed
by an idle sample where it ends: where the thread goes idle, at a gap, at the end of the run, and
at a segment border (segments sit on a grid of :data:`SEGMENT_SLOTS` slots, 29.99 s at 101 Hz,
from the run start; the closing sample at a border belongs to the earlier segment).

An idle sample carries a one-frame stack, ``(idle)`` (not in app), as Sentry's Node profiler
sends V8's idle node, rather than the empty stack ``[]`` the spec also allows: Sentry's processor
fills an empty stack between two busy samples with the frames the two share, and Relay removes
empty-stack samples at the edges of a thread. On a Roku an idle gap lies *between* calls of the
root function, so an empty stack would turn every gap into the root's self time and cut the last
busy sample of a profile short. Relay drops a thread with a single sample in a profile; closing
every busy run leaves no such thread, and :attr:`V1Export.dropped` counts any all the same.

All the profiles of a run share one trace; each has its own transaction (named after the app,
``op`` ``app.run``). Ids are derived from the run (start, app, content), so exporting the same
file twice gives the same ids (Sentry then de-duplicates instead of counting twice). Pure.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from rokuprof.export.model import ExportInput, Frame
from rokuprof.sentry.assemble import CLIENT_SDK, HEAP_MEASUREMENT, PLATFORM
from rokuprof.sentry.envelope import Envelope, EnvelopeItem
from rokuprof.sentry.frames import is_in_app, module_name, release_name, split_scheme
from rokuprof.sentry.validate import Problem
from rokuprof.sentry.validate_v1 import validate_profile_v1, validate_transaction_v1
from rokuprof.timefmt import utc_iso
from rokuprof.timeline import IDLE

SEGMENT_SLOTS = 3029  # 29.99 s at 101 Hz: under Relay's 30 s limit for a V1 profile
OS_NAME = "Roku OS"
UNKNOWN = "unknown"
UNNAMED = "<unnamed>"
#: The one frame of an idle sample's stack (see the module docstring).
IDLE_FRAME: dict[str, object] = {"function": "(idle)", "in_app": False}


@dataclass
class V1Profile:
    index: int  # 1, 2, ...
    profile: dict
    transaction: dict
    profile_json: bytes
    transaction_json: bytes
    envelope: bytes
    samples: int
    problems: list[Problem] = field(default_factory=list)  # empty: Relay would take it


@dataclass
class V1Export:
    profiles: list[V1Profile]
    dropped: dict[tuple[int, int], int]  # (thread, timeline stack) -> lone samples left out

    def files(self) -> dict[str, bytes]:
        """``NNNNNN.profile.json``, ``.transaction.json`` and ``.envelope`` per profile Relay
        would take (the others are left out and named by :meth:`notes`)."""
        files: dict[str, bytes] = {}
        for p in self.profiles:
            if not p.problems:
                files[f"{p.index:06d}.profile.json"] = p.profile_json
                files[f"{p.index:06d}.transaction.json"] = p.transaction_json
                files[f"{p.index:06d}.envelope"] = p.envelope
        return files

    def notes(self) -> list[str]:
        """What Sentry would not get, one short sentence each (empty: everything)."""
        out = [
            f"profile {p.index:06d} left out (Relay would refuse it: {p.problems[0].detail})"
            for p in self.profiles
            if p.problems
        ]
        if lone := sum(self.dropped.values()):
            out.append(f"{lone} lone sample(s) left out (Relay drops a one-sample thread)")
        return out


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _rfc3339(t: float) -> str | None:
    try:
        return utc_iso(t, "microseconds")
    except (OverflowError, OSError, ValueError):
        return None  # a header with an impossible start time


def sentry_frame(frame: Frame) -> dict[str, object]:
    """The same frame fields the V2 chunks carry."""
    out: dict[str, object] = {
        "function": frame.function,
        "filename": split_scheme(frame.file)[1] or frame.file,
        "abs_path": frame.file,
        "module": module_name(frame.file),
        "in_app": is_in_app(frame.file),
    }
    if frame.line:
        out["lineno"] = frame.line
    if not (frame.function or out["filename"]):
        out["function"] = UNNAMED  # V1 frames need a function, a file or an address
    return out


class _Ids:
    def __init__(self, inp: ExportInput) -> None:
        digest = hashlib.sha256()
        digest.update(repr((inp.run.start, inp.run.app, inp.run.app_version)).encode())
        for p in inp.paths:
            digest.update(repr((p.id, p.wall, p.cpu, p.calls)).encode())
        self._seed = digest.digest()

    def __call__(self, *what: object, length: int = 32) -> str:
        return hashlib.sha256(self._seed + repr(what).encode()).hexdigest()[:length]


def _segments(inp: ExportInput) -> tuple[dict[int, dict[int, list[tuple[int, int]]]], dict]:
    """``{segment: {thread: [(slot, stack)]}}`` and the samples Relay would drop."""
    seg_of: dict[int, dict[int, list[tuple[int, int]]]] = {}

    def add(slot: int, segment: int, thread: int, sid: int) -> None:
        seg_of.setdefault(segment, {}).setdefault(thread, []).append((slot, sid))

    for thread, runs in inp.timeline.runs.items():
        last: int | None = None  # slot of the thread's latest busy sample
        for slot, sid, n in runs:
            if sid == IDLE:
                continue
            for s in range(slot, slot + n):
                if last is not None and (last + 1 != s or s % SEGMENT_SLOTS == 0):
                    add(last + 1, last // SEGMENT_SLOTS, thread, IDLE)  # its run ended there
                add(s, s // SEGMENT_SLOTS, thread, sid)
                last = s
        if last is not None:
            add(last + 1, last // SEGMENT_SLOTS, thread, IDLE)
    dropped: dict[tuple[int, int], int] = {}
    for lanes in seg_of.values():
        for thread, lane in list(lanes.items()):
            if len(lane) < 2:  # Relay drops a thread with a single sample in a profile
                for _, sid in lane:
                    if sid != IDLE:
                        dropped[(thread, sid)] = dropped.get((thread, sid), 0) + 1
                del lanes[thread]
    return seg_of, dropped


def build(inp: ExportInput) -> V1Export:
    """Every V1 profile of the run (see the module docstring), with the release and environment
    of the chunks made from the same settings."""
    timeline = inp.timeline
    if timeline.origin is None:
        return V1Export([], {})
    ids = _Ids(inp)
    header = inp.reader.header
    release = inp.settings.release or release_name(header) or UNKNOWN
    environment = inp.settings.environment
    firmware = (inp.run.firmware or "").strip()
    os_version, _, build = firmware.partition(" build ")
    os_info: dict[str, str] = {"name": OS_NAME, "version": os_version.strip() or UNKNOWN}
    if build.strip():
        os_info["build_number"] = build.strip()
    device: dict[str, object] = {"architecture": UNKNOWN, "is_emulator": False}
    if inp.run.vendor:
        device["manufacturer"] = inp.run.vendor
    if inp.run.model:
        device["model"] = inp.run.model
    trace_id = ids("trace")
    name = inp.run.app or "BrightScript app"
    segments, dropped = _segments(inp)
    busiest = max(inp.threads, key=lambda t: (timeline.samples(t), -t), default=0)
    out: list[V1Profile] = []
    hz = timeline.hz
    for index, seg in enumerate(sorted(s for s in segments if segments[s]), 1):
        lanes = segments[seg]
        first = min(lane[0][0] for lane in lanes.values())
        last = max(lane[-1][0] for lane in lanes.values())
        start = timeline.origin + first / hz
        end = timeline.origin + last / hz
        frames: list[dict] = []
        frame_ids: dict[int, int] = {}
        stacks: list[list[int]] = []
        stack_ids: dict[int, int] = {}
        rows = []
        for thread, lane in lanes.items():
            for slot, sid in lane:
                stack_id = stack_ids.get(sid)
                if stack_id is None:
                    stack = []
                    if sid == IDLE:
                        stack.append(len(frames))
                        frames.append(dict(IDLE_FRAME))
                    for f in timeline.stacks[sid]:
                        fid = frame_ids.get(f)
                        if fid is None:
                            fid = frame_ids[f] = len(frames)
                            frames.append(sentry_frame(inp.frames[f]))
                        stack.append(fid)
                    stack_id = stack_ids[sid] = len(stacks)
                    stacks.append(stack)
                rows.append((slot, thread, stack_id))
        rows.sort()
        samples = [
            {
                "elapsed_since_start_ns": str((slot - first) * 1_000_000_000 // hz),
                "stack_id": stack_id,
                "thread_id": str(thread),
            }
            for slot, thread, stack_id in rows
        ]
        active = busiest if busiest in lanes else min(lanes)
        profile_id = ids("profile", index)
        txn_id = ids("transaction", index)
        profile: dict = {
            "version": "1",
            "event_id": profile_id,
            "platform": PLATFORM,
            "release": release,
            **({"environment": environment} if environment else {}),
            "timestamp": _rfc3339(start) or f"{start!r}",
            "device": device,
            "os": os_info,
            "runtime": {"name": "BrightScript", "version": os_info["version"]},
            "transaction": {
                "id": txn_id,
                "name": name,
                "trace_id": trace_id,
                "active_thread_id": str(active),
            },
            "profile": {
                "samples": samples,
                "stacks": stacks,
                "frames": frames,
                "thread_metadata": {str(t): {"name": inp.threads[t]} for t in sorted(lanes)},
            },
        }
        heap = [(slot, v) for slot, v in timeline.heap if first <= slot <= last]
        if heap:
            profile["measurements"] = {
                HEAP_MEASUREMENT: {
                    "unit": "byte",
                    "values": [
                        {
                            "elapsed_since_start_ns": str((slot - first) * 1_000_000_000 // hz),
                            "value": value,
                        }
                        for slot, value in heap
                    ],
                }
            }
        transaction = {
            "type": "transaction",
            "event_id": txn_id,
            "platform": "other",
            "transaction": name,
            "transaction_info": {"source": "custom"},
            "start_timestamp": start,
            "timestamp": end,
            "release": release,
            **({"environment": environment} if environment else {}),
            "contexts": {
                "trace": {
                    "trace_id": trace_id,
                    "span_id": ids("span", index, length=16),
                    "op": "app.run",
                    "status": "ok",
                    "data": {"thread.id": str(active), "thread.name": inp.threads[active]},
                },
                "profile": {"profile_id": profile_id},
            },
            "tags": {"segment": f"{index}"},
            "spans": [],
            "sdk": dict(CLIENT_SDK),
        }
        profile_json = _dumps(profile)
        transaction_json = _dumps(transaction)
        envelope = Envelope(
            {"event_id": txn_id, "sdk": dict(CLIENT_SDK)},
            [
                EnvelopeItem({"type": "transaction"}, transaction_json),
                EnvelopeItem({"type": "profile"}, profile_json),
            ],
        ).to_bytes()
        problems = validate_profile_v1(profile, size=len(profile_json))
        problems += validate_transaction_v1(transaction, profile)
        out.append(
            V1Profile(
                index,
                profile,
                transaction,
                profile_json,
                transaction_json,
                envelope,
                len(samples),
                problems,
            )
        )
    return V1Export(out, dropped)


def export(inp: ExportInput) -> dict[str, bytes]:
    """The files of every profile Relay would take (see :meth:`V1Export.files`)."""
    return build(inp).files()


def payloads_json(inp: ExportInput) -> bytes:
    """The valid profile payloads as one JSON array."""
    return b"[" + b",".join(p.profile_json for p in build(inp).profiles if not p.problems) + b"]"
