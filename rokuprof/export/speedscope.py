"""speedscope's file format (https://www.speedscope.app/file-format-schema.json).

Per thread (executable module), four profiles:

* ``<thread> — timeline``: ``evented``, in microseconds since the run start: the synthetic 101 Hz
  timeline of the Sentry chunks (a busy sample lasts one period);
* ``<thread> — wall``, ``— cpu``, ``— alloc bytes``: ``sampled``, one sample per call path
  weighted by its exact self wall time, CPU or allocated bytes (paths with 0 are left out).

Frames: ``name`` = function, ``file``, ``line`` = definition line (left out when unknown). No
``null`` anywhere (the schema rejects it).
"""

from __future__ import annotations

import json

from rokuprof import __version__
from rokuprof.export.model import ExportInput
from rokuprof.export.walk import OPEN, frame_events, slot_us

SCHEMA = "https://www.speedscope.app/file-format-schema.json"
SEPARATOR = " — "

#: (profile name suffix, CallPath attribute, unit or None for the wall unit)
WEIGHTED = (("wall", "wall", None), ("cpu", "cpu", "none"), ("alloc bytes", "alloc_bytes", "bytes"))


def document(inp: ExportInput) -> dict:
    frames = []
    for f in inp.frames:
        frame: dict[str, object] = {"name": f.function, "file": f.file}
        if f.line:
            frame["line"] = f.line
        frames.append(frame)
    profiles: list[dict] = []
    by_thread: dict[int, list] = {t: [] for t in inp.thread_order()}
    for p in inp.paths:
        by_thread[p.thread].append(p)
    timeline = inp.timeline
    for thread in inp.thread_order():
        name = inp.threads[thread]
        events = [
            {"type": kind, "frame": frame, "at": slot_us(timeline, slot)}
            for kind, frame, slot, _ in frame_events(timeline, thread)
        ]
        if events:
            profiles.append(
                {
                    "type": "evented",
                    "name": f"{name}{SEPARATOR}timeline",
                    "unit": "microseconds",
                    "startValue": min(e["at"] for e in events if e["type"] == OPEN),
                    "endValue": events[-1]["at"],
                    "events": events,
                }
            )
        for label, attr, unit in WEIGHTED:
            samples, weights = [], []
            for p in by_thread[thread]:
                weight = getattr(p, attr)
                if weight:
                    samples.append(list(reversed(p.frames)))
                    weights.append(weight)
            if samples:
                profiles.append(
                    {
                        "type": "sampled",
                        "name": f"{name}{SEPARATOR}{label}",
                        "unit": unit or inp.run.wall_unit_name,
                        "startValue": 0,
                        "endValue": sum(weights),
                        "samples": samples,
                        "weights": weights,
                    }
                )
    if not profiles:  # nothing was decoded: one empty profile keeps the file importable
        profiles.append(
            {
                "type": "sampled",
                "name": "no data",
                "unit": "none",
                "startValue": 0,
                "endValue": 0,
                "samples": [],
                "weights": [],
            }
        )
    doc = {
        "$schema": SCHEMA,
        "shared": {"frames": frames},
        "profiles": profiles,
        "name": _title(inp),
        "activeProfileIndex": 0,
        "exporter": f"rokuprof {__version__}",
    }
    return doc


def _title(inp: ExportInput) -> str:
    app = inp.run.app or "BrightScript profile"
    return f"{app} {inp.run.app_version}".strip() if inp.run.app_version else app


def export(inp: ExportInput) -> bytes:
    return json.dumps(
        document(inp), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")
