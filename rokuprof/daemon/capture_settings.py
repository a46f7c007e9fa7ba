"""What one device's capture loop is given: a ``[[devices]]`` entry (or a discovered device)
and the ``[capture]`` section of the daemon's config, as a
:class:`~rokuprof.capture.loop.CaptureConfig`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from rokuprof.capture.config import CaptureConfig, capture_config
from rokuprof.daemon.config import DaemonConfig, DeviceEntry
from rokuprof.daemon.naming import host_label, host_name


def entry_capture_config(
    config: DaemonConfig,
    entry: DeviceEntry,
    *,
    out: Path,
    shared_hosts: Collection[str],
    name_claim: Callable[[str], str],
    tuning: Mapping[str, Any],
    device_dir: str | None = None,
) -> CaptureConfig:
    """The capture settings of ``entry``: its ports, the config's chunk settings, limits and
    exports, the name it logs under (``host_name``) and the daemon's tuning (``tuning``)."""
    cap = config.capture
    return capture_config(
        entry,
        out=out,
        chunks=cap.chunks,
        limits=cap.limits,
        archive_limits=cap.archive,
        device_dir=device_dir or entry.name or None,
        host_name=host_name(entry, shared_hosts),
        host_label=host_label(entry, shared_hosts),
        exports=cap.export,
        vitals_interval=cap.vitals_interval,
        trace=cap.trace if entry.trace is None else entry.trace,
        name_claim=name_claim,
        **tuning,
    )
