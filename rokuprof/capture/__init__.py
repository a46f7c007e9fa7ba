"""One device's capture: wait for an app run, stream it into the raw archive, the decoder and the
chunk builder, finish the session, wait for the next run (asyncio shell over the pure core).

``DeviceCapture(CaptureConfig(host=...)).run()`` is the loop ``rokuprof watch`` runs for one
device and the daemon runs for each of its devices.
"""

from rokuprof.capture.loop import CaptureConfig, CapturedSession, CaptureSummary, DeviceCapture
from rokuprof.capture.session import SessionRecord, read_record
from rokuprof.capture.status import CaptureObserver, CaptureStatus

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
