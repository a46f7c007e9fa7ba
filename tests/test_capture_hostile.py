"""A hostile device that defines a million call paths: stopped at the limit, memory bounded."""

import time
import tracemalloc
from pathlib import Path

import pytest
from capture_helpers import run_capture, sim
from daemon_helpers import cap_config

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import build_header
from rokuprof.bsprof.model import CPU, PATH, Limits
from rokuprof.capture import DeviceCapture
from rokuprof.capture.session import read_record
from rokuprof.profile import ProfileTables
from rokuprof.simulator import DeviceConfig, Fault, SimulatedDevice
from rokuprof.simulator.app import SyntheticApp

PATHS = 1_000_000
LIMIT = 20_000
BOUND = 80 * 2**20  # peak traced memory allowed for the whole capture (device included)


def header_length(config: DeviceConfig) -> int:
    """Bytes of the header the simulated device sends first (its body starts right after)."""
    app = SyntheticApp(config.app_config(0))
    header = app.header(int(time.time() * 1000))
    return len(build_header(header)) + app.config.header_padding


def bytes_per_path(n: int = 50_000) -> float:
    """What one call path with samples costs in the tables: defined, counted, its delta taken
    and its stack built (as the chunk builder does). ``benchmarks/memory.py`` measures RSS."""
    entries = [(PATH, i, 0, 1, 0, 1, 1, 1) for i in range(1, n + 1)]
    entries += [(CPU, i, 0, 1000 + i, 2000 + i) for i in range(1, n + 1)]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tables = ProfileTables()
        tables.apply(entries)
        for pid in tables.take_delta().paths:
            tables.stack(pid)
        return (tracemalloc.get_traced_memory()[0] - base) / n
    finally:
        tracemalloc.stop()


@pytest.mark.slow
async def test_a_million_paths_stop_at_the_limit_with_bounded_memory(tmp_path: Path) -> None:
    probe = sim()
    body = encode_entries(((PATH, i, 0, 1, 0, 1, 1, 1) for i in range(1, PATHS + 1)), True)
    hostile = sim(faults=(Fault("garbage", header_length(probe), run=0, data=body),))
    tracemalloc.start()
    try:
        async with SimulatedDevice(hostile) as dev:
            config = cap_config(dev, tmp_path, runs=1, limits=Limits(max_paths=LIMIT))
            summary = await run_capture(DeviceCapture(config), timeout=60)
            sent = dev.sent_bytes(0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    [session] = summary.sessions
    record = read_record(session.path)
    assert record["status"] == "failed"
    [error] = [e for e in record["errors"] if e["kind"] == "decoder"]
    assert f"number of paths {LIMIT + 1} exceeds the limit of {LIMIT}" in error["message"]
    assert error["offset"] > header_length(probe)
    assert (session.path / "capture.bsprof").read_bytes() == sent  # every byte still archived
    assert len(sent) > len(body)
    assert peak < BOUND, f"peak {peak / 2**20:.1f} MiB"
    # Without the limit the same stream would have cost far more than the bound.
    assert PATHS * bytes_per_path() > 3 * BOUND


def test_a_call_path_costs_at_most_400_bytes() -> None:
    """Compact per-path storage (about 1.2 KB per path before the array columns)."""
    assert bytes_per_path() <= 400
