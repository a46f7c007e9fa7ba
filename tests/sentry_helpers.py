"""Helpers shared by the Sentry tests (small tables, synthetic streams, checks): imported by the
``test_sentry_*`` modules, ``test_chunk_rules``, ``test_convert_cli`` and
``test_one_capture_one_answer``; their own sanity tests are in ``test_sentry_helpers``."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import MODULE, PATH, STRING, Footer, Header
from rokuprof.profile import ProfileReader, ProfileTables, aggregate_functions
from rokuprof.sentry.flamegraph import function_self_times
from rokuprof.sentry.validate import validate_chunk
from rokuprof.simulator.app import AppConfig, SyntheticApp

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
GOLDEN = Path(__file__).resolve().parent / "golden"
START = 1_795_000_000.0  # 2026-11-18, an epoch time in seconds
HZ = 101
T = 1 / HZ

HEADER = Header(
    major=1, minor=0, patch=0, header_size=0, requested_sample_ratio=1.0,
    actual_sample_ratio=1.0, line_data=True, memory_ops=True, start_ms=int(START * 1000),
    target_name="Café TV", supplemental="", target_version="2.4.1", vendor="Roku",
    model="4800X", firmware="14.1.4",
)  # fmt: skip

# Two threads. main: Main -> work -> sleep (a system file); Task: run -> work (same function,
# other thread).
DEFINITIONS = [
    (STRING, 1, "main"),
    (STRING, 2, "Task"),
    (STRING, 3, "pkg:/source/main.brs"),
    (STRING, 4, "Main"),
    (STRING, 5, "work"),
    (STRING, 6, "pkg:/components/Task.brs"),
    (STRING, 7, "run"),
    (STRING, 8, "common:/lib/core.brs"),
    (STRING, 9, "sleep"),
    (MODULE, 1, 1),
    (MODULE, 2, 2),
    (PATH, 1, 0, 1, 0, 3, 1, 4),
    (PATH, 2, 1, 0, 3, 3, 20, 5),
    (PATH, 3, 2, 0, 4, 8, 5, 9),
    (PATH, 4, 0, 2, 0, 6, 1, 7),
    (PATH, 5, 4, 0, 2, 3, 20, 5),
]
PATHS = (1, 2, 3, 4, 5)
THREAD_OF = {1: "1", 2: "1", 3: "1", 4: "2", 5: "2"}


def small_tables() -> ProfileTables:
    tables = ProfileTables()
    tables.apply(DEFINITIONS)
    return tables


def counter_ids(prefix: str = "") -> Callable[[], str]:
    """Deterministic 32-hex ids: 00..01, 00..02, ..."""
    counter = itertools.count(1)
    return lambda: f"{next(counter):032x}"


def synthetic_stream(
    seconds: float,
    seed: int = 1,
    *,
    rate: float = 1.0,
    footer: bool = True,
    memory_ops: bool = True,
    start_ms: int = int(START * 1000),
) -> bytes:
    """A realistic app run (the simulator's synthetic app), as .bsprof bytes."""
    app = SyntheticApp(AppConfig(seed=seed, rate=rate, memory_ops=memory_ops))
    header = app.header(start_ms)
    entries = app.advance(seconds) + app.finish()
    data = build_header(header) + encode_entries(entries, header.line_data) + END_MARKER
    if footer:
        data += build_footer(Footer(start_ms + int(seconds * 1000)))
    return data


def assert_valid(chunks: Iterable[bytes]) -> list[dict]:
    """Every chunk (JSON bytes) passes the validator; return them decoded."""
    payloads = []
    for data in chunks:
        assert validate_chunk(data) == [], validate_chunk(data)
        payloads.append(json.loads(data))
    return payloads


def inspect_self_seconds(reader: ProfileReader, units: int) -> dict[tuple[str, str, str], float]:
    """Self wall seconds per (module, function, file), as ``rokuprof inspect`` reports them."""
    return {
        (f.module, f.function, f.file): f.self_wall / units
        for f in aggregate_functions(reader.tables)
        if f.self_wall
    }


def paths_per_function(tables: ProfileTables) -> dict[tuple[str, str, str], int]:
    """How many call paths with wall time have each function at their leaf."""
    out: dict[tuple[str, str, str], int] = defaultdict(int)
    for pid, counters in tables.counters.items():
        stack = tables.stack(pid)
        if stack and counters[1]:
            leaf = stack[0]
            key = (
                tables.module_name(leaf.module),
                tables.string(leaf.function_id),
                tables.string(leaf.file_id),
            )
            out[key] += 1
    return out


def flamegraph_differences(
    reader: ProfileReader,
    payloads: list[Mapping],
    units: int = 1_000_000,
    leftover: Mapping[tuple[str, str], int] | None = None,
) -> dict[tuple[str, str, str], tuple[float, float]]:
    """Per function: (|inspect self - chunk flamegraph self| in seconds, allowed difference).

    Allowed: one period per call path of the function (the sampler's rounding: half a period
    when the run's last rounding sample found room before the end, a whole one when the thread
    was busy up to the end), plus the samples reported as left over on its thread when the
    function is among them.
    """
    expected = inspect_self_seconds(reader, units)
    got = function_self_times(payloads)
    paths = paths_per_function(reader.tables)
    out = {}
    for key in set(expected) | set(got):
        allowed = paths.get(key, 0) * T + 1e-4
        if leftover:
            allowed += leftover.get((key[0], key[1]), 0) * T
        out[key] = (abs(expected.get(key, 0.0) - got.get(key, 0.0)), allowed)
    return out


def stack_seconds(tables: ProfileTables, path_samples: Mapping[int, int]):
    """What :func:`stack_times` should give for the samples emitted per call path."""
    out: dict = defaultdict(float)
    for pid, n in path_samples.items():
        stack = tables.stack(pid)
        key = (
            tables.module_name(stack[-1].module),
            tuple((tables.string(n_.function_id), tables.string(n_.file_id)) for n_ in stack),
        )
        out[key] += n * T
    return dict(out)
