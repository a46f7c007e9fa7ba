"""What ``rokuprof watch`` prints for logs and pipes: one timestamped line per notable event.

:func:`state_line` is also the daemon's wording for a device's state change.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from rokuprof.capture.record import SessionRecord
from rokuprof.capture.status import STATE_TEXT, CaptureStatus, DeviceState
from rokuprof.store.layout import SessionStatus
from rokuprof.units import size
from rokuprof.views.text import printable

#: States a log does not give a line of their own: a run's start and end have theirs, and a
#: connect's ``waiting`` lasts until the answer says more. (``starting`` says where the loop
#: polls, once.)
UNLOGGED_STATES = frozenset({DeviceState.WAITING, DeviceState.STREAMING, DeviceState.FINISHED})


def state_line(status: CaptureStatus, previous: str = "") -> str | None:
    """The log line for a change to ``status.state`` (``None``: not worth a line)."""
    state = DeviceState(status.state)
    if state is DeviceState.STREAMING and previous == DeviceState.PAUSED:
        return "resumed: streaming again"
    if state in UNLOGGED_STATES:
        return None
    if state is DeviceState.STOPPED:
        return f"capture ended: {status.detail}" if status.detail else "capture ended"
    text = STATE_TEXT[state]
    return f"{text}: {status.detail}" if status.detail else text


class PlainLog:
    """One timestamped line per event (state changes, sessions, chunks, problems); device text
    in them (names, error messages) has its control characters escaped. A state is said when
    it changes, not again while it lasts."""

    def __init__(self, write: Callable[[str], None] = print, chunks: bool = True) -> None:
        self.write = write
        self.chunks = chunks
        self._last_state = ""

    def _say(self, status: CaptureStatus, message: str) -> None:
        stamp = datetime.now().strftime("%H:%M:%S")
        self.write(printable(f"{stamp} {status.label or status.device or status.host}: {message}"))

    def on_state(self, status: CaptureStatus) -> None:
        if status.state == self._last_state or status.state == DeviceState.WAITING:
            return  # a connect: the answer will say more (busy stays busy meanwhile)
        line = state_line(status, self._last_state)
        self._last_state = status.state
        if line is not None:
            self._say(status, line)

    def on_session_start(self, status: CaptureStatus) -> None:
        self._say(status, f"streaming into {status.session_path}")

    def on_chunk(self, status: CaptureStatus, path: Path) -> None:
        if self.chunks:
            self._say(
                status,
                f"chunk {path.name} written ({size(status.bytes)}, "
                f"{status.entries} entries so far)",
            )

    def on_session_end(self, status: CaptureStatus, record: SessionRecord, path: Path) -> None:
        self._say(
            status,
            f"run {status.runs_done} {record.status}: {size(record.bytes)}, "
            f"{record.entries} entries, {record.chunks} chunk(s) in {path}",
        )
        if record.status != SessionStatus.COMPLETE:
            self._say(status, f"  {record.end_reason}")

    def on_message(self, status: CaptureStatus, level: str, text: str) -> None:
        self._say(status, f"{level}: {text}")
