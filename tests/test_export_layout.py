"""The export model's timeline is built from the windows the chunk builder placed, with no chunk
written (:mod:`rokuprof.timeline`); the Sentry chunks of the same conversion, read back from
their JSON as any reader of their files would, show the same timeline: the same samples, stacks,
frames, thread names and live heap, numbered in the same order."""

from __future__ import annotations

from pathlib import Path

import pytest

from rokuprof.export.interning import Interner
from rokuprof.export.model import ExportInput, Frame, build_input
from rokuprof.sentry.assemble import HEAP_MEASUREMENT
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.simulator.worst_cases import busy_modules, deep_chain, many_paths
from rokuprof.timeline import Timeline

SAMPLES = sorted((Path(__file__).resolve().parents[1] / "samples").glob("*.bsprof"))


def _converter(data: bytes) -> OfflineConverter:
    converter = OfflineConverter(new_id=lambda: "0" * 32)
    converter.feed(data)
    converter.close()
    return converter


def read_chunks(data: bytes) -> tuple[Timeline, list[Frame], dict[int, str]]:
    """The timeline in the converter's chunks, from their JSON alone, sample by sample."""
    converter = _converter(data)
    chunks = list(converter.chunks())
    assert converter.reader.header is not None
    origin, hz = converter.reader.header.start_ms / 1000, converter.settings.hz
    timeline = Timeline(hz, origin)
    frames: Interner[Frame] = Interner()
    stack_ids: dict[tuple[int, ...], int] = {(): 0}
    threads: dict[int, str] = {}
    for chunk in chunks:
        payload = chunk.payload
        profile = payload["profile"]
        frame_ids = [
            frames.id(Frame(f.get("function", ""), f.get("abs_path", ""), f.get("lineno", 0)))
            for f in profile["frames"]
        ]
        sids = []
        for stack in profile["stacks"]:
            key = tuple(frame_ids[i] for i in stack)
            if key not in stack_ids:
                stack_ids[key] = len(timeline.stacks)
                timeline.stacks.append(key)
            sids.append(stack_ids[key])
        for tid, meta in profile["thread_metadata"].items():
            threads.setdefault(int(tid), meta["name"])
        for s in profile["samples"]:
            slot = round((s["timestamp"] - origin) * hz)
            lane = timeline.runs.setdefault(int(s["thread_id"]), [])
            sid = sids[s["stack_id"]]
            if lane and lane[-1][1] == sid and lane[-1][0] + lane[-1][2] == slot:
                lane[-1] = (lane[-1][0], sid, lane[-1][2] + 1)
            else:
                lane.append((slot, sid, 1))
        heap = payload.get("measurements", {}).get(HEAP_MEASUREMENT)
        if heap:
            timeline.heap.extend(
                (round((v["timestamp"] - origin) * hz), v["value"]) for v in heap["values"]
            )
    return timeline, frames.items, threads


@pytest.mark.parametrize(
    "data",
    [
        *(pytest.param(p.read_bytes(), id=p.name) for p in SAMPLES),
        pytest.param(busy_modules(50, seconds=70.0), id="busy-modules"),
        pytest.param(deep_chain(300, seconds=10.0, wall_us=30_000), id="deep-chain"),
        pytest.param(many_paths(3_000, seconds=30.0), id="many-paths"),
    ],
)
def test_the_timeline_is_what_the_chunks_show(data: bytes, engine_env) -> None:
    inp: ExportInput = build_input(_converter(data))
    timeline, frames, threads = read_chunks(data)
    assert timeline.runs, "the input has samples"
    assert inp.timeline.stacks == timeline.stacks
    assert list(inp.timeline.runs.items()) == list(timeline.runs.items())
    assert inp.timeline.heap == timeline.heap
    assert inp.frames[: len(frames)] == frames  # the timeline's frames first, in the same order
    assert {t: inp.threads[t] for t in threads} == threads
