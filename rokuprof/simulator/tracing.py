"""What the simulated device says and remembers about app tracing (Roku OS 15.1+), pure: the
``POST /perfetto/enable/<channel>`` answer and the record of what each traced run streamed.
The WebSocket that carries the trace is :mod:`rokuprof.simulator.app_tracing`'s."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rokuprof.simulator.xml_text import escape

ENABLE_PREFIX = "/perfetto/enable/"
SESSION_PATH = "/perfetto-session"
MAX_CHANNELS = 64  # channels enabled at once (the list clears on reboot: device restart)
#: what a channel id may be (``dev``, a store id such as ``12``, ``12345_abcd``)
CHANNEL_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def channel_of(path: str) -> str | None:
    """The channel id of an enable request's path, or None when it names none."""
    if not path.startswith(ENABLE_PREFIX):
        return None
    channel = path[len(ENABLE_PREFIX) :]
    return channel if CHANNEL_ID.fullmatch(channel) else None


def enable_xml(channels: list[str], started_ms: int, ended_ms: int, error: str = "") -> bytes:
    """The answer to an enable: every channel enabled so far, and when (device wall clock,
    milliseconds) the request was taken and done; with ``error``, a failure saying why (the
    ``<error>`` element Roku's client looks for)."""
    listed = "".join(f"        <channel>{escape(c)}</channel>\n" for c in channels)
    status = (
        f"    <error>{escape(error)}</error>\n    <status>FAILED</status>\n"
        if error
        else ("    <status>OK</status>\n")
    )
    return (
        '<?xml version="1.0" encoding="UTF-8" ?>\n'
        "<perfetto-enable>\n"
        f"    <enabled-channels>\n{listed}    </enabled-channels>\n"
        f"    <timestamp>{started_ms}</timestamp>\n"
        f"    <timestamp-end>{ended_ms}</timestamp-end>\n"
        f"{status}"
        "</perfetto-enable>\n"
    ).encode()


@dataclass
class TraceRecord:
    """One traced app run: where its trace's clock is and what was streamed of it.

    The trace's timestamps are BOOTTIME nanoseconds; ``boot_ns`` is the trace time at app
    time 0, which is the wall clock ``start_ms`` (the ``.bsprof`` header's), so wall time
    (Unix ms) = ``start_ms + (ts - boot_ns) / 1e6``; every trace says the same in its clock
    snapshot (BOOTTIME against REALTIME).
    """

    channel: str
    boot_ns: int
    start_ms: int
    bytes_sent: int = 0  # trace bytes sent in binary messages (all clients)
    messages_sent: int = 0
    #: each socket session that got data of this run, in order: (session number, bytes,
    #: messages); sessions are numbered from 1 as the device accepts them
    clients: list[tuple[int, int, int]] = field(default_factory=list)
    keys: int = 0  # remote keys the trace took
    #: every payload byte sent, in order, over all sessions (with ``keep_bytes``)
    data: bytearray = field(default_factory=bytearray, repr=False)

    def note(self, session: int, payloads: list[bytes], keep: bool) -> None:
        """Binary messages carrying ``payloads`` were sent on socket session ``session``."""
        if not payloads:
            return
        size = sum(len(p) for p in payloads)
        if not self.clients or self.clients[-1][0] != session:
            self.clients.append((session, 0, 0))
        _, sent, messages = self.clients[-1]
        self.clients[-1] = (session, sent + size, messages + len(payloads))
        self.bytes_sent += size
        self.messages_sent += len(payloads)
        if keep:
            for payload in payloads:
                self.data += payload
