"""Regenerate the sample .bsprof files and their ``inspect`` outputs, deterministically.

    python samples/generate.py            # rewrite samples/*.bsprof and samples/*.inspect.*
    python samples/generate.py --check    # fail if a committed file differs from a fresh one

The streams come from the synthetic app of the simulator and are built with the construct
grammar itself (rokuprof.bsprof.grammar.build_stream), so they also exercise the builder.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import Footer
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.report import inspect_report
from rokuprof.simulator.app import AppConfig, SyntheticApp
from rokuprof.store.files import write_atomic
from rokuprof.views.inspect_view import render_inspect

HERE = Path(__file__).resolve().parent
START = datetime(2026, 11, 21, 15, 4, 5, tzinfo=UTC)
STEP = 0.25  # app seconds per advance() call


@dataclass(frozen=True)
class Sample:
    name: str
    seconds: float
    app: AppConfig
    cut_at: float | None = None  # keep this fraction of the bytes (a run cut short)
    corrupt: bool = False  # insert an entry of undefined type 6 two thirds in


SAMPLES = (
    Sample("cafe-tv-full", 45.0, AppConfig(seed=11, rate=2.0)),
    Sample(
        "cafe-tv-cpu-only",
        30.0,
        AppConfig(seed=12, line_data=False, memory_ops=False, sample_ratio=0.5),
    ),
    Sample("cafe-tv-cut-short", 30.0, AppConfig(seed=13), cut_at=0.6),
    Sample("cafe-tv-corrupt", 20.0, AppConfig(seed=14, line_data=False), corrupt=True),
    Sample("cafe-tv-long", 150.0, AppConfig(seed=15, rate=3.0)),
)


def build(sample: Sample) -> bytes:
    app = SyntheticApp(sample.app)
    start_ms = int(START.timestamp() * 1000)
    header = app.header(start_ms)
    entries = []
    steps = round(sample.seconds / STEP)
    for _ in range(steps):
        entries += app.advance(STEP)
    entries += app.finish()
    end_ms = start_ms + int(sample.seconds * 1000) + 120  # the app takes a moment to exit
    if sample.corrupt:
        cut = 2 * len(entries) // 3
        data = build_stream(header, entries[:cut], end=False, pad_to=96)
        return data + b"\x06" + build_stream(header, entries[cut:], Footer(end_ms))[96:]
    data = build_stream(header, entries, Footer(end_ms), pad_to=96)
    if sample.cut_at is not None:
        data = data[: int(len(data) * sample.cut_at)]
    return data


def inspect_outputs(data: bytes) -> tuple[str, str]:
    reader = ProfileReader.from_bytes(data)
    report = inspect_report(reader, top=15)
    buffer = io.StringIO()
    render_inspect(report, Console(file=buffer, width=140, color_system=None, highlight=False))
    return buffer.getvalue(), json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def outputs() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for sample in SAMPLES:
        data = build(sample)
        text, js = inspect_outputs(data)
        files[f"{sample.name}.bsprof"] = data
        files[f"{sample.name}.inspect.txt"] = text.encode()
        files[f"{sample.name}.inspect.json"] = js.encode()
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    stale = []
    for name, content in outputs().items():
        path = HERE / name
        if args.check:
            if not path.exists() or path.read_bytes() != content:
                stale.append(name)
        else:
            write_atomic(path, content)
            print(f"wrote {path.relative_to(HERE.parent)} ({len(content):,} bytes)")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
