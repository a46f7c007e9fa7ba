"""Live state of one device's capture, and the observer interface views and daemons implement."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rokuprof.capture.session import SessionRecord
    from rokuprof.profile.tables import ProfileTables

# States of a device's capture loop.
STARTING = "starting"
WAITING = "waiting"  # polling the profiler port for the next app run
STREAMING = "streaming"  # a run is being captured
FINISHED = "finished"  # the last run was finished; about to wait again
STOPPED = "stopped"  # the loop has ended


@dataclass
class CaptureStatus:
    """Mutable snapshot the capture loop keeps up to date (read it, do not write it)."""

    host: str
    device: str = ""  # the device directory name (serial, else host)
    device_name: str = ""
    state: str = STARTING
    app: str = ""
    session: str = ""
    session_path: Path | None = None
    run_started: float | None = None  # time.monotonic() of the run's connect
    bytes: int = 0
    entries: int = 0
    chunks: int = 0
    live_heap_bytes: int = 0
    runs_done: int = 0
    last_status: str = ""  # final status of the last finished run
    message: str = ""  # the latest notable problem, for views
    tables: ProfileTables | None = field(default=None, repr=False)  # of the current run

    def elapsed(self, now: float | None = None) -> float:
        if self.run_started is None:
            return 0.0
        return (now if now is not None else time.monotonic()) - self.run_started


class CaptureObserver(Protocol):
    """Receives the capture loop's notable events (all optional to act upon)."""

    def on_state(self, status: CaptureStatus) -> None: ...

    def on_session_start(self, status: CaptureStatus) -> None: ...

    def on_chunk(self, status: CaptureStatus, path: Path) -> None: ...

    def on_session_end(self, status: CaptureStatus, record: SessionRecord, path: Path) -> None: ...

    def on_message(self, status: CaptureStatus, level: str, text: str) -> None: ...


class NullObserver:
    """An observer that ignores everything."""

    def on_state(self, status: CaptureStatus) -> None:
        pass

    def on_session_start(self, status: CaptureStatus) -> None:
        pass

    def on_chunk(self, status: CaptureStatus, path: Path) -> None:
        pass

    def on_session_end(self, status: CaptureStatus, record: SessionRecord, path: Path) -> None:
        pass

    def on_message(self, status: CaptureStatus, level: str, text: str) -> None:
        pass
