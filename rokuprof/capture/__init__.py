"""One device's capture: wait for an app run, stream it into the raw archive, the decoder and the
chunk builder, finish the session, wait for the next run (asyncio shell over the pure core).

``DeviceCapture(CaptureConfig(host=...)).run()`` is the loop ``rokuprof watch`` runs for one
device and the daemon runs for each of its devices.

The pure parts (:mod:`~rokuprof.capture.machine`, :mod:`~rokuprof.capture.record`,
:mod:`~rokuprof.capture.chunks`, :mod:`~rokuprof.capture.stop`) import no asyncio, socket or
HTTP client; so this package loads the shell's names only when one is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rokuprof._lazy import lazy_names

if TYPE_CHECKING:
    from rokuprof.capture.loop import CaptureConfig, CapturedSession, CaptureSummary, DeviceCapture
    from rokuprof.capture.record import SessionRecord
    from rokuprof.capture.session import read_record
    from rokuprof.capture.status import CaptureObserver, CaptureStatus

#: Public name → the module that defines it.
_HOMES = {
    "CaptureConfig": "loop",
    "CapturedSession": "loop",
    "CaptureSummary": "loop",
    "DeviceCapture": "loop",
    "SessionRecord": "record",
    "read_record": "session",
    "CaptureObserver": "status",
    "CaptureStatus": "status",
}

__all__ = [
    "CaptureConfig",
    "CaptureObserver",
    "CaptureStatus",
    "CaptureSummary",
    "CapturedSession",
    "DeviceCapture",
    "SessionRecord",
    "read_record",
]

__getattr__ = lazy_names(__name__, _HOMES)
