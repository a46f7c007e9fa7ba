"""The daemon's knobs that are not in its config file, typed: what tests and benchmarks shorten.

Each is a :class:`~typing.TypedDict` of the arguments one part takes beyond what the config
file sets, every key optional: a key left out keeps the part's own default, so no default is
declared twice. The daemon passes them on as keyword arguments, checked by a type checker
against the part's signature (a key the part does not take, or a value of the wrong type, is an
error there, not a ``type: ignore``)::

    DaemonOptions(capture={"idle_timeout": 1.0}, uploader={"probe_base": 0.05})
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

import httpx

from rokuprof.store.uploader import BodyBuilder


class CaptureTuning(TypedDict, total=False):
    """:class:`~rokuprof.capture.loop.CaptureConfig` fields beyond the config file's (which sets
    the device's address and ports, the output, the chunk settings, limits and exports)."""

    delta_seconds: float
    poll_interval: float
    max_backoff: float
    connect_timeout: float
    idle_timeout: float
    ecp_timeout: float
    use_ecp: bool
    use_console: bool
    runs: int | None
    duration: float | None
    chunks: bool
    free_space: Callable[[Path], int]


class UploaderTuning(TypedDict, total=False):
    """:class:`~rokuprof.store.uploader.Uploader` arguments beyond the config file's (the DSN,
    ``max_in_flight`` and the spool limit)."""

    client: httpx.AsyncClient | None
    timeout: httpx.Timeout | float
    request_deadline: float
    backoff_base: float
    backoff_cap: float
    probe_base: float
    rescan_seconds: float
    window: int
    build_body: BodyBuilder
    check_chunk: Callable[[bytes], str | None] | None
    rng: Callable[[], float]
    clock: Callable[[], float]


class PyroscopeTuning(TypedDict, total=False):
    """:class:`~rokuprof.store.pyroscope.PyroscopePusher` arguments beyond the config file's
    (the URL and the application name)."""

    client: httpx.AsyncClient | None
    timeout: httpx.Timeout | float
    rescan_seconds: float
    backoff_base: float
    backoff_cap: float
