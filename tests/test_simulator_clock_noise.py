"""The simulated device's clock is noisy from launch to launch, its operation counts are not: two
launches of one installed app count the same CPU operations, calls and allocations and take
different wall times, each within ``clock_noise`` of the noiseless run; ``heavier`` builds count
more operations in the same wall time. The app runs through its public config
(``DeviceConfig.app_config``) and its streams are decoded as a capture would be."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import Footer
from rokuprof.export.aggregate import aggregates_from_bytes
from rokuprof.export.diff import Figures, FunctionKey, function_figures
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.app import SyntheticApp
from rokuprof.simulator.installer import app_settings
from rokuprof.simulator.probe import read_stream

HOST = "127.0.0.1"
START_MS = 1_700_000_000_000
SECONDS = 6.0
#: what a sideloaded app's manifest says to profile everything over the network
MANIFEST = {
    "title": "Café TV",
    "bsprof_enable": "1",
    "bsprof_data_dest": "network",
    "bsprof_enable_mem": "1",
    "bsprof_enable_lines": "1",
}
#: the figures an operation counter, a call counter and the allocator give: never noisy
COUNTS = ("self_cpu", "total_cpu", "calls", "self_alloc_bytes", "total_alloc_bytes")
WALLS = ("self_wall", "total_wall")
#: functions of the Café TV model that run within SECONDS of every seed
HOT = ("renderTile", "drawPoster", "parseString", "decodeImage", "layoutText")

seeds = st.integers(min_value=0, max_value=10_000)
run_indexes = st.integers(min_value=0, max_value=200)
noises = st.sampled_from([0.01, 0.04, 0.2])


def installed(seed: int, **kw) -> DeviceConfig:
    """A device with an app sideloaded: every launch plays the same run (``vary_runs=False``)."""
    return app_settings(DeviceConfig(seed=seed, **kw), MANIFEST)


def launch(config: DeviceConfig, run_index: int) -> bytes:
    """The whole ``.bsprof`` of launch ``run_index`` of ``config``'s app."""
    app = SyntheticApp(config.app_config(run_index))
    entries = []
    while app.clock < SECONDS - 1e-9:
        entries += app.advance(0.25)
    entries += app.finish()
    data = build_header(app.header(START_MS)) + encode_entries(entries, True) + END_MARKER
    return data + build_footer(Footer(START_MS + int(SECONDS * 1000)))


def figures(data: bytes) -> dict[FunctionKey, Figures]:
    return function_figures(aggregates_from_bytes(data))


def picked(figs: dict[FunctionKey, Figures], metrics: tuple[str, ...]) -> dict:
    return {k: tuple(f.get(m) for m in metrics) for k, f in figs.items()}


def within(noisy: float, clean: float, noise: float) -> bool:
    """``noisy`` is ``clean`` times a factor in 1 ± noise (plus whole-µs rounding: at most half
    a µs per 10 ms walk)."""
    return abs(noisy - clean) <= noise * clean + 1e-4 * clean + 1


@settings(max_examples=8, deadline=None)
@given(seed=seeds, runs=st.lists(run_indexes, min_size=2, max_size=2, unique=True), noise=noises)
def test_two_launches_count_the_same_operations_and_differ_only_in_wall_time(
    seed: int, runs: list[int], noise: float
) -> None:
    config = installed(seed, clock_noise=noise)
    first, second = (figures(launch(config, k)) for k in runs)
    assert first.keys() == second.keys()
    assert picked(first, COUNTS) == picked(second, COUNTS)
    assert picked(first, WALLS) != picked(second, WALLS)
    busiest = max(first, key=lambda k: first[k].self_wall)
    assert first[busiest].self_wall != second[busiest].self_wall
    for k in runs:
        clean = figures(launch(installed(seed, clock_noise=0.0), k))
        noisy = figures(launch(config, k))
        assert picked(noisy, COUNTS) == picked(clean, COUNTS)
        for key, f in noisy.items():
            for metric in WALLS:
                assert within(f.get(metric), clean[key].get(metric), noise), (key, metric)


@settings(max_examples=5, deadline=None)
@given(seed=seeds, runs=st.lists(run_indexes, min_size=2, max_size=2, unique=True))
def test_without_clock_noise_every_launch_of_an_installed_app_is_the_same_stream(
    seed: int, runs: list[int]
) -> None:
    config = installed(seed, clock_noise=0.0)
    first, second = (launch(config, k) for k in runs)
    assert first == second


@settings(max_examples=6, deadline=None)
@given(
    seed=seeds,
    run=run_indexes,
    function=st.sampled_from(HOT),
    factor=st.floats(min_value=1.5, max_value=8.0),
)
def test_heavier_multiplies_only_that_functions_cpu_and_keeps_every_wall_time(
    seed: int, run: int, function: str, factor: float
) -> None:
    base = installed(seed)  # the device's default clock noise: the same launch, the same clock
    before = figures(launch(base, run))
    after = figures(launch(installed(seed, app_heavier=((function, factor),)), run))
    assert after.keys() == before.keys()
    assert picked(after, WALLS) == picked(before, WALLS)
    others = ("calls", "self_alloc_bytes", "total_alloc_bytes", "self_live_bytes")
    assert picked(after, others) == picked(before, others)
    [target] = [k for k in before if k[1] == function]
    assert picked({k: f for k, f in after.items() if k != target}, ("self_cpu",)) == picked(
        {k: f for k, f in before.items() if k != target}, ("self_cpu",)
    )
    # each walk charged to it truncates to a whole operation (a walk is ≥ 9,600 µs of wall here)
    walks = before[target].self_wall / (10_000 * (1 - base.clock_noise)) + 1
    cpu, cpu_before = after[target].self_cpu, before[target].self_cpu
    assert cpu_before > 0
    assert abs(cpu - factor * cpu_before) <= (factor + 1) * walks


def test_the_clock_noise_is_off_where_an_app_config_is_made_by_hand() -> None:
    """``AppConfig``'s default is noiseless (the committed samples and the benchmarks are made
    that way); a device's default is not."""
    assert SyntheticApp().config.clock_noise == 0.0
    assert DeviceConfig().clock_noise == 0.04
    assert DeviceConfig().app_config(3).clock_seed == DeviceConfig().clock_seed(3)


async def test_two_launches_on_a_running_device_differ_only_in_wall_time() -> None:
    config = installed(5, run_seconds=2.0, runs=2, speed=40.0, run_gap=0.05)
    async with SimulatedDevice(config) as dev:
        first = await read_stream(HOST, dev.profiler_port)
        await dev.wait_run_end(0, 10)
        second = await asyncio.wait_for(_next_stream(dev), 10)
    a, b = figures(first), figures(second)
    assert picked(a, COUNTS) == picked(b, COUNTS)
    assert picked(a, WALLS) != picked(b, WALLS)


async def _next_stream(dev: SimulatedDevice) -> bytes:
    """The second run's stream, once the device has launched it again."""
    while True:
        try:
            return await read_stream(HOST, dev.profiler_port)
        except (ConnectionError, OSError):
            await asyncio.sleep(0.02)
