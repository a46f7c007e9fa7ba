"""Live state of one device's capture, and the observer interface views and daemons implement.

The device states (:class:`DeviceState`) are the same everywhere they are shown: the live view,
the plain log, the daemon's log, metrics and ``/healthz``. How a state is chosen while no run
streams is :func:`idle_state` (pure).
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rokuprof.device.constants import CONSOLE_PORT

if TYPE_CHECKING:
    from rokuprof.capture.record import SessionRecord
    from rokuprof.capture.vitals import Reading
    from rokuprof.profile.tables import ProfileTables


class DeviceState(StrEnum):
    """What a device's capture loop is doing, as a user should understand it."""

    STARTING = "starting"  # nothing tried yet
    UNREACHABLE = "unreachable"  # ECP does not answer, or the profiler port times out / no route
    REFUSED = "refused"  # the device answers, its profiler port refuses: no profiled app runs
    WAITING = "waiting"  # connected to the profiler port, no data yet
    BUSY = "busy"  # the profiler port answered 503: another client has the stream
    STREAMING = "streaming"  # a run's data arrives (set at its first body byte)
    PAUSED = "paused"  # a run streams, but the console says its profiler is paused
    FINISHED = "finished"  # a run just ended; the next connect attempt will say more
    STOPPED = "stopped"  # the loop has ended

    @property
    def in_run(self) -> bool:
        """A run's session is open (its first byte arrived)."""
        return self in (DeviceState.STREAMING, DeviceState.PAUSED)


# The old module-level names of the loop states.
STARTING = DeviceState.STARTING
WAITING = DeviceState.WAITING
STREAMING = DeviceState.STREAMING
FINISHED = DeviceState.FINISHED
STOPPED = DeviceState.STOPPED


def idle_state(profiler_refused: bool, ecp_up: bool | None) -> DeviceState:
    """The state while no run streams, from the last connect to the profiler port (refused, or
    timed out / no route) and whether ECP answered when last asked (``None``: not asked, or no
    word yet: a refusal comes from a host that is up)."""
    if not profiler_refused or ecp_up is False:
        return DeviceState.UNREACHABLE
    return DeviceState.REFUSED


def control_command(host: str, console_port: int, action: str) -> str:
    """The ``rokuprof control`` command line that reaches a device's console as its capture
    loop does (the port named when it is not the default): a state's advice."""
    words = ["rokuprof", "control", host, action]
    if console_port != CONSOLE_PORT:
        words += ["--console-port", str(console_port)]
    return shlex.join(words)


#: What each state means, for a log line or the live view (the detail, if any, follows).
STATE_TEXT: dict[DeviceState, str] = {
    DeviceState.STARTING: "waiting for an app run",
    DeviceState.UNREACHABLE: "unreachable",
    DeviceState.REFUSED: "refused: the profiler port refuses, no profiled app launched yet",
    DeviceState.WAITING: "connected, waiting for the app's data",
    DeviceState.BUSY: "busy: another profiler client has the app's stream (HTTP 503); retrying",
    DeviceState.STREAMING: "streaming",
    DeviceState.PAUSED: "paused: the app's profiler is paused, little is recorded",
    DeviceState.FINISHED: "run finished",
    DeviceState.STOPPED: "stopped",
}


@dataclass
class CaptureStatus:
    """Mutable snapshot the capture loop keeps up to date (read it, do not write it)."""

    host: str
    device: str = ""  # the device's display name: its directory name (see loop.device_dir)
    label: str = ""  # how logs and views name it: ``device`` or the host as written
    device_name: str = ""  # the name the device gives itself (ECP)
    state: DeviceState = DeviceState.STARTING
    detail: str = ""  # why the device is in its state (an error, the advice), for views and logs
    app: str = ""
    session: str = ""
    session_path: Path | None = None
    run_started: float | None = None  # time.monotonic() of the run's connect
    last_data: float | None = None  # time.monotonic() of the last byte received
    bytes: int = 0
    entries: int = 0
    chunks: int = 0
    live_heap_bytes: int = 0
    vitals: Reading | None = None  # the app's last CPU and memory reading in this run
    worst_tick_seconds: float = 0.0  # the longest tick of the loop's runs (decode, chunks)
    runs_done: int = 0
    last_status: str = ""  # final status of the last finished run
    ecp_mode: str = ""  # ECP's "ecp-setting-mode" (``limited``: some queries refused)
    message: str = ""  # the latest note still in force (see notes), for views
    notes: dict[str, str] = field(default_factory=dict)  # cause -> text, while the cause lasts
    tables: ProfileTables | None = field(default=None, repr=False)  # of the current run

    def elapsed(self, now: float | None = None) -> float:
        if self.run_started is None:
            return 0.0
        return (now if now is not None else time.monotonic()) - self.run_started

    def since_data(self, now: float | None = None) -> float | None:
        """Seconds since the last byte arrived (``None`` before any)."""
        if self.last_data is None:
            return None
        return max(0.0, (now if now is not None else time.monotonic()) - self.last_data)

    @property
    def limited(self) -> bool:
        return self.ecp_mode == "limited"

    def note(self, cause: str, text: str) -> bool:
        """Keep ``text`` as the note of ``cause``; True when it is new (worth saying)."""
        if self.notes.get(cause) == text:
            return False
        self.notes.pop(cause, None)
        self.notes[cause] = text  # the latest last
        self.message = text
        return True

    def clear_note(self, *causes: str) -> None:
        """The causes are gone: so are their notes."""
        for cause in causes:
            self.notes.pop(cause, None)
        self.message = next(reversed(self.notes.values()), "")


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
