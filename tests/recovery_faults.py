"""``rokuprof`` whose crash-recovery converter fails, for tests that run the daemon as a process.

    python tests/recovery_faults.py FAULT daemon --config FILE

FAULT is where a hostile archive's conversion would end: ``raise`` (a ``RuntimeError``: a bug),
``memory`` (a ``MemoryError``) or ``kill`` (the process gets ``SIGKILL``, as from the kernel's
OOM killer or systemd's timeout). Each happens inside a real conversion, after the converter has
read the first piece of the archive; everything else is the real daemon.
"""

from __future__ import annotations

import os
import signal
import sys

from rokuprof.capture.catchup import CatchUp
from rokuprof.daemon import recovery

FAULT = sys.argv.pop(1)


class FailingCatchUp(CatchUp):
    def feed(self, data: bytes | memoryview) -> None:
        super().feed(data)
        if FAULT == "raise":
            raise RuntimeError("injected converter failure")
        if FAULT == "memory":
            raise MemoryError
        if FAULT == "kill":
            os.kill(os.getpid(), signal.SIGKILL)


recovery.CatchUp = FailingCatchUp

if __name__ == "__main__":
    from rokuprof.cli import main

    main()
