"""Configuration of a simulated device: identity, addresses, runs, app content and faults."""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from rokuprof.simulator.app import AppConfig
from rokuprof.simulator.replay import DEFAULT_RATE, DEFAULT_TICK, ReplayBody

FaultKind = Literal["reset", "close", "stall", "garbage"]

#: Default bytes of a ``garbage`` fault: eleven 0xFF bytes make a varint longer than any
#: tag may be, so a decoder fails right there, then a few more arbitrary bytes.
GARBAGE = b"\xff" * 11 + b"\x07garbage\x00"

ECP_MODES = ("enabled", "permissive", "limited", "disabled")


@dataclass(frozen=True)
class Fault:
    """Something to do to a profiler stream once ``after_bytes`` bytes of it were sent.

    ``after_bytes`` counts the ``.bsprof`` body (from the magic on), not the HTTP head.

    * ``reset``: drop the connection with a TCP RST (after the peer has every byte sent).
    * ``close``: close the connection normally (FIN), without end marker or footer.
    * ``stall``: stop sending but keep the connection open; after ``stall_seconds`` (real
      time) send everything held back and go on; ``None`` = until the app exits, then the
      connection is closed without the held data.
    * ``garbage``: send ``data`` (counted as stream bytes) and then carry on normally.

    ``run`` is the run index the fault applies to; ``None`` means every run.
    """

    kind: FaultKind
    after_bytes: int
    run: int | None = None
    stall_seconds: float | None = None
    data: bytes = GARBAGE

    def __post_init__(self) -> None:
        if self.kind not in ("reset", "close", "stall", "garbage"):
            raise ValueError(f"unknown fault kind {self.kind!r}")
        if self.after_bytes < 0:
            raise ValueError("after_bytes must be >= 0")


@dataclass(frozen=True)
class DeviceConfig:
    """Everything about one simulated Roku. Port 0 = let the OS choose (see the bound ports
    on :class:`~rokuprof.simulator.device.SimulatedDevice`).

    App tracing (Roku OS 15.1+, :mod:`~rokuprof.simulator.app_tracing`) is decided by
    ``app_tracing``, not by ``software_version``: the default firmware stays ``14.1.4`` (what
    device-info, SSDP and every stream header have always said, and tests and samples name),
    and tracing is on; ``app_tracing=False`` plays firmware without it (404 to the enable
    command and to the trace socket).
    """

    # -- addresses
    host: str = "127.0.0.1"
    ssdp_port: int = 0
    ecp_port: int = 0
    profiler_port: int = 0
    console_port: int = 0
    installer_port: int = 0  # the Application Installer (port 80 on a Roku)
    advertise_host: str | None = None  # host named in SSDP Location and console lines
    ssdp_multicast: bool = False  # join 239.255.255.250 (only for real LAN use, never in tests)

    # -- identity (ECP device-info, SSDP, the stream header)
    serial: str = "YN00AA000001"
    name: str = "Sim Roku"
    vendor: str = "Roku"
    model_number: str = "4800X"
    model_name: str = "Roku Ultra"
    software_version: str = "14.1.4"
    software_build: str = "4123"
    developer_enabled: bool = True
    network_type: str = "ethernet"
    ecp_mode: str = "enabled"  # enabled | permissive | limited | disabled

    # -- runs
    auto_launch: bool = True  # launch by itself at start and again after each run
    runs: int | None = 1  # how many runs auto launch makes in all (None = forever)
    run_seconds: float = 10.0  # app time of one run
    run_gap: float = 1.0  # real seconds on the home screen between automatic runs
    speed: float = 1.0  # app seconds per real second
    crash_after: float | None = None  # app seconds: the app crashes, pending CPU data is lost
    burst_ticks: tuple[int, int] = (2, 30)  # app ticks (10 ms) between bursts, inclusive range
    max_pieces: int = 4  # a burst is written in 1..max_pieces writes split at random places

    # -- the app and its profiler settings (pass-through to AppConfig)
    seed: int = 1
    rate: float = 1.0
    line_data: bool = True
    memory_ops: bool = True
    app_name: str = "Café TV"
    app_version: str = "2.4.1"
    app_names: tuple[tuple[str, str], ...] = ()  # AppConfig.names: functions/files renamed
    cpu_flush_seconds: float = 1.0
    pause_on_start: bool = False  # bsprof_pause_on_start=1
    sample_ratio: float = 1.0  # bsprof_sample_ratio (the header's requested ratio)
    run_as_process: bool = True  # run_as_process=1: chanperf has the app's CPU and memory
    #: False (the default): every launch does the same work, as an app launched and driven
    #: the same way does on a device: the same operation counts, calls and allocations, only
    #: the clocks differ (``clock_noise``); True: each launch plays another run (seed + run
    #: index), other content, other work
    vary_runs: bool = False
    #: AppConfig.slower: another build of the app, with these functions (name, factor) slower
    app_slower: tuple[tuple[str, float], ...] = ()
    #: AppConfig.heavier: another build, these functions' CPU operation counts times the
    #: factor, their wall time not
    app_heavier: tuple[tuple[str, float], ...] = ()
    #: AppConfig.clock_noise: each launch's wall figures within ±clock_noise of the noiseless
    #: ones (a device's clock varies from run to run, its operation counts do not); run *k*
    #: draws it from ``clock_seed(k)``; 0 = off (every launch of one app the same wall figures)
    clock_noise: float = 0.04
    #: the developer password of the Application Installer (None: made up at start)
    dev_password: str | None = field(default=None, repr=False)

    # -- replay instead of the live app (rokuprof.simulator.replay): each run streams this
    # pre-encoded body at replay_rate bytes per second, one write every replay_tick seconds;
    # run_seconds, speed, burst_ticks, max_pieces, crash_after and pausing do not apply
    replay: ReplayBody | None = field(default=None, repr=False)
    replay_rate: float = DEFAULT_RATE
    replay_tick: float = DEFAULT_TICK

    # -- app tracing with Perfetto (Roku OS 15.1+): see the class's notes
    app_tracing: bool = True
    trace_message_bytes: int = 4096  # payload of each binary message on the trace socket

    # -- behaviour
    faults: tuple[Fault, ...] = ()
    console_banner: bool = True
    request_timeout: float = 10.0  # seconds to wait for a request head
    keep_bytes: bool = True  # keep every run's stream bytes for sent_bytes()
    # -- time and randomness: the simulator reads no clock and draws no random value of its own;
    # these are the one place their defaults come from (a test passes scripted ones)
    clock: Callable[[], float] = field(default=time.time, repr=False)  # wall clock, seconds
    #: monotonic seconds: run records, stream pacing, stalls, replay schedule, ECP uptime
    monotonic: Callable[[], float] = field(default=time.monotonic, repr=False)
    #: hex tokens: the installer's made-up password and its digest nonces
    token: Callable[[], str] = field(default=secrets.token_hex, repr=False)

    def __post_init__(self) -> None:
        if self.ecp_mode not in ECP_MODES:
            raise ValueError(f"ecp_mode must be one of {ECP_MODES}")
        if self.speed <= 0:
            raise ValueError("speed must be > 0")
        if self.run_seconds <= 0:
            raise ValueError("run_seconds must be > 0")
        low, high = self.burst_ticks
        if not 1 <= low <= high:
            raise ValueError("burst_ticks must be (low, high) with 1 <= low <= high")
        if self.max_pieces < 1:
            raise ValueError("max_pieces must be >= 1")
        if self.replay_rate <= 0 or self.replay_tick <= 0:
            raise ValueError("replay_rate and replay_tick must be > 0")
        if not 0.0 <= self.clock_noise < 1.0:
            raise ValueError("clock_noise must be in [0, 1)")
        if not 1 <= self.trace_message_bytes <= 1 << 20:
            raise ValueError("trace_message_bytes must be 1 .. 1 MiB")

    @property
    def firmware(self) -> str:
        return f"{self.software_version} build {self.software_build}"

    def stream_rng(self, run_index: int) -> random.Random:
        """The random source of run ``run_index``'s stream (its burst gaps and write splits),
        seeded from ``seed`` and the run index: the same device config streams the same way."""
        return random.Random(f"{self.seed}:{run_index}:stream")

    def trace_seed(self, run_index: int) -> str:
        """The seed of run ``run_index``'s app trace (its own random sources), from ``seed``
        and the run index."""
        return f"{self.seed}:{run_index}:trace"

    def clock_seed(self, run_index: int) -> str:
        """The seed of run ``run_index``'s clock noise, from ``seed`` and the run index (also
        when runs do not vary: each launch of one app has its own clock)."""
        return f"{self.seed}:{run_index}:clock"

    def app_config(self, run_index: int) -> AppConfig:
        """The synthetic app of run ``run_index``: seed ``seed + run_index`` (``seed`` when
        runs do not vary), its wall figures noisy by ``clock_noise`` drawn from
        ``clock_seed(run_index)``."""
        return AppConfig(
            seed=self.seed + (run_index if self.vary_runs else 0),
            name=self.app_name,
            version=self.app_version,
            names=self.app_names,
            slower=self.app_slower,
            heavier=self.app_heavier,
            clock_noise=self.clock_noise,
            clock_seed=self.clock_seed(run_index),
            line_data=self.line_data,
            memory_ops=self.memory_ops,
            sample_ratio=self.sample_ratio,
            rate=self.rate,
            cpu_flush_seconds=self.cpu_flush_seconds,
            vendor=self.vendor,
            model=self.model_number,
            firmware=self.firmware,
        )
