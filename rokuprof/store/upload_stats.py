"""The uploader's figures (for ``/metrics``, the status line and tests): plain counters."""

from __future__ import annotations

from dataclasses import dataclass, field

from rokuprof.store.retrying import Cause
from rokuprof.store.spool import SpoolStats


@dataclass
class DeviceUploads:
    uploaded: int = 0
    rejected: int = 0
    dropped: int = 0


@dataclass
class UploaderStats:
    uploaded: int = 0
    rejected: int = 0
    dropped: int = 0
    dropped_bytes: int = 0
    send_errors: int = 0  # failures: 5xx, other answers, no answer, local problems
    rate_limited: int = 0  # 429 answers
    key_refused: int = 0  # 401/403 answers
    last_status: int | None = None
    last_error: str = ""
    last_error_at: float | None = None  # Unix seconds
    spool: SpoolStats = field(default_factory=SpoolStats)
    per_device: dict[str, DeviceUploads] = field(default_factory=dict)

    def device(self, name: str) -> DeviceUploads:
        return self.per_device.setdefault(name, DeviceUploads())

    def add_uploaded(self, device: str) -> None:
        self.uploaded += 1
        self.device(device).uploaded += 1

    def add_rejected(self, device: str) -> None:
        self.rejected += 1
        self.device(device).rejected += 1

    def add_dropped(self, device: str, size: int) -> None:
        self.dropped += 1
        self.dropped_bytes += size
        self.device(device).dropped += 1

    def waited(self, cause: Cause) -> None:
        """Count a send that left its chunk pending, under its cause."""
        if cause is Cause.FAILED:
            self.send_errors += 1
        elif cause is Cause.RATE_LIMITED:
            self.rate_limited += 1
        else:
            self.key_refused += 1
