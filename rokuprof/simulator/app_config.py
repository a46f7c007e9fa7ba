"""What one run of the simulated app looks like and how much it records (:class:`AppConfig`):
its name and version, the device that reports it, the profiler's options, and how another build
of the same app differs (for ``rokuprof diff``)."""

from __future__ import annotations

from dataclasses import dataclass

from rokuprof.bsprof.model import SUPPORTED_MAJOR


@dataclass(frozen=True)
class AppConfig:
    """What the synthetic app looks like and how much it records.

    Two random sources drive a run: the app's (``seed``: which functions run, their CPU
    operation counts, allocations, call counts) and the clock's (``clock_seed``: only how long
    the wall clock says each walk took). The build differences below and the clock noise never
    change the app's draws, so with the same ``seed`` everything they do not name is identical.
    """

    seed: int = 1
    name: str = "Café TV"
    version: str = "2.4.1"
    line_data: bool = True
    memory_ops: bool = True
    rate: float = 1.0  # activity multiplier: walks (and so entries) per tick
    cpu_flush_seconds: float = 1.0  # how often CPU and call counts are flushed
    sample_ratio: float = 1.0
    vendor: str = "Roku"
    model: str = "4800X"
    firmware: str = "14.1.4 build 4123"
    supplemental: str = "rokuprof simulator"
    format_version: tuple[int, int, int] = (SUPPORTED_MAJOR, 0, 0)
    header_padding: int = 8  # zero bytes after the header fields, as a device may write
    #: (name in the model, name the device reports) for functions, files and thread modules:
    #: e.g. hostile names, to test what the views make of them
    names: tuple[tuple[str, str], ...] = ()
    # Another build of the same app, for comparing runs (``rokuprof diff``). These change what
    # is recorded, never the random draws, so everything else in the run stays identical.
    #: (function, factor): a tick spent in the function costs ``factor`` times the wall and CPU
    slower: tuple[tuple[str, float], ...] = ()
    #: (function, factor): a tick spent in the function counts ``factor`` times the CPU
    #: operations, its wall time unchanged (more work the clock does not resolve)
    heavier: tuple[tuple[str, float], ...] = ()
    #: functions this build does not have: their visits, and whatever they call, record nothing
    absent: tuple[str, ...] = ()
    #: functions whose allocations are never freed in this build
    leaking: tuple[str, ...] = ()
    # Launch-to-launch clock noise, as on a device (scheduling, other processes, caches): every
    # wall figure is the noiseless one times ``1 + launch + walk``, ``launch`` drawn once per run
    # uniform in ±(3/4)·clock_noise, ``walk`` per walk uniform in ±(1/4)·clock_noise (rounded to
    # whole µs), so each wall figure, and any sum of them, is within ±clock_noise of the
    # noiseless one (±1 µs per walk of rounding). CPU operation counts, calls and memory are
    # untouched. 0 (the default): no noise and no clock draws, the output is what it always was.
    clock_noise: float = 0.0
    #: the clock random source's seed (None: ``"<seed>:clock"``); a device seeds it from its
    #: seed and the run index, so each launch of the same app has its own clock
    clock_seed: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.clock_noise < 1.0:
            raise ValueError("clock_noise must be in [0, 1)")
        for name, factor in self.heavier:
            if not 0.0 < factor < float("inf"):
                raise ValueError(f"factor of {name!r} must be > 0 and finite")
