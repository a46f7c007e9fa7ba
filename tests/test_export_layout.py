"""The export model reads the samples from the layout the chunk builder placed them by, not by
parsing every chunk's JSON back: the two readings give the same timeline, frames, threads and
call paths, order included."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rokuprof.export.model import ExportInput, build_input
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.simulator.worst_cases import busy_modules, deep_chain, many_paths

SAMPLES = sorted((Path(__file__).resolve().parents[1] / "samples").glob("*.bsprof"))


def export_input(data: bytes, *, from_json: bool) -> ExportInput:
    converter = OfflineConverter(new_id=lambda: "0" * 32)
    converter.feed(data)
    converter.close()
    if from_json:  # chunks as a reader of their files sees them: no layout
        chunks = converter.chunks

        def without_layout(progress=None):
            for chunk in chunks(progress):
                yield dataclasses.replace(chunk, layout=None)

        converter.chunks = without_layout
    return build_input(converter)


@pytest.mark.parametrize(
    "data",
    [
        *(pytest.param(p.read_bytes(), id=p.name) for p in SAMPLES),
        pytest.param(busy_modules(50, seconds=70.0), id="busy-modules"),
        pytest.param(deep_chain(300, seconds=10.0, wall_us=30_000), id="deep-chain"),
        pytest.param(many_paths(3_000, seconds=30.0), id="many-paths"),
    ],
)
def test_the_layout_and_the_json_give_the_same_input(data: bytes) -> None:
    layout, json = export_input(data, from_json=False), export_input(data, from_json=True)
    assert layout.timeline == json.timeline
    assert list(layout.timeline.runs) == list(json.timeline.runs)
    assert layout.frames == json.frames
    assert list(layout.threads.items()) == list(json.threads.items())
    assert layout.paths == json.paths
