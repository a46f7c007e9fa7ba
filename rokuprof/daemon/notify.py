"""sd_notify without a dependency: datagrams to ``$NOTIFY_SOCKET`` (systemd ``Type=notify``).

``READY=1`` once the daemon runs, ``STATUS=...`` lines for ``systemctl status``, ``WATCHDOG=1``
every half ``$WATCHDOG_USEC`` while healthy, ``STOPPING=1`` at shutdown, ``EXTEND_TIMEOUT_USEC``
while a long start-up step runs (crash recovery). Outside systemd (no
``$NOTIFY_SOCKET``) every call is a no-op returning ``False``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Mapping

log = logging.getLogger(__name__)

SEND_TIMEOUT = 0.1


def notify(state: str, env: Mapping[str, str] | None = None) -> bool:
    """Send ``state`` (e.g. ``"READY=1\\nSTATUS=capturing"``); ``True`` if it was sent."""
    address = (os.environ if env is None else env).get("NOTIFY_SOCKET", "")
    if address.startswith("@"):
        address = "\0" + address[1:]  # abstract namespace
    elif not address.startswith("/"):
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.settimeout(SEND_TIMEOUT)  # never stall the event loop on a full queue
            sock.connect(address)
            sock.sendall(state.encode("utf-8"))
    except OSError as exc:
        log.debug("sd_notify failed: %s", exc)
        return False
    return True


def watchdog_interval(env: Mapping[str, str] | None = None) -> float | None:
    """Seconds between ``WATCHDOG=1`` pings (half of ``$WATCHDOG_USEC``), or ``None``."""
    env = os.environ if env is None else env
    pid = env.get("WATCHDOG_PID")
    if pid and pid != str(os.getpid()):
        return None  # meant for another process
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    return usec / 2 / 1e6 if usec > 0 else None


class Notifier:
    """The daemon's side of the systemd protocol."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.env = dict(os.environ if env is None else env)

    def ready(self, status: str = "") -> bool:
        return notify("READY=1" + (f"\nSTATUS={status}" if status else ""), self.env)

    def status(self, text: str) -> bool:
        return notify(f"STATUS={text}", self.env)

    def extend_timeout(self, seconds: float, status: str = "") -> bool:
        """Give the current step (start-up) ``seconds`` more from now before systemd's timeout
        (``TimeoutStartSec``) ends it; systemd before 236 ignores it."""
        text = f"EXTEND_TIMEOUT_USEC={max(0, round(seconds * 1e6))}"
        return notify(text + (f"\nSTATUS={status}" if status else ""), self.env)

    def stopping(self, status: str = "") -> bool:
        return notify("STOPPING=1" + (f"\nSTATUS={status}" if status else ""), self.env)

    async def watchdog(
        self,
        healthy: Callable[[], bool] = lambda: True,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        """Ping ``WATCHDOG=1`` at half the watchdog interval while ``healthy()``; returns at
        once when systemd set no watchdog. Run it as a task and cancel it at shutdown.
        ``sleep`` waits between pings (tests pass their own)."""
        interval = watchdog_interval(self.env)
        if interval is None:
            return
        while True:
            if healthy():
                notify("WATCHDOG=1", self.env)
            else:
                log.warning("not pinging the systemd watchdog: the daemon is not healthy")
            await sleep(interval)
