"""What one run of the simulated app looks like and how much it records (:class:`AppConfig`):
its name and version, the device that reports it, the profiler's options, and how another build
of the same app differs (for ``rokuprof diff``)."""

from __future__ import annotations

from dataclasses import dataclass

from rokuprof.bsprof.model import SUPPORTED_MAJOR


@dataclass(frozen=True)
class AppConfig:
    """What the synthetic app looks like and how much it records."""

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
    #: functions this build does not have: their visits, and whatever they call, record nothing
    absent: tuple[str, ...] = ()
    #: functions whose allocations are never freed in this build
    leaking: tuple[str, ...] = ()
