"""One profiler command on the debug console: ``status``, ``pause``, ``resume``, ``chanperf``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from rokuprof.device.chanperf import ChanPerf, parse_chanperf
from rokuprof.device.console import BsprofStatus, ConsoleClient, parse_bsprof_status
from rokuprof.device.constants import CONSOLE_ACTIONS as ACTIONS  # their home: constants
from rokuprof.device.constants import CONSOLE_PORT
from rokuprof.device.errors import DeviceTimeout, ProtocolError
from rokuprof.device.limits import CONSOLE_TIMEOUT

NO_SESSION = "no profiling session"


@dataclass(frozen=True)
class ControlResult:
    """The console's reply to one action, parsed where the format is known."""

    action: str
    command: str
    reply: str
    status: BsprofStatus | None = None
    perf: ChanPerf | None = None

    @property
    def no_session(self) -> bool:
        """True when no profiled app runs (the console said so)."""
        return NO_SESSION in self.reply.lower()

    def describe(self) -> str:
        if self.no_session:
            return "No profiling session (no app with bsprof_enable=1 is running)"
        if self.status is not None:
            s = self.status
            settings = ", ".join(f"{k}={v}" for k, v in s.settings.items())
            metrics = ", ".join(s.metrics) or "no metrics"
            return f"profiler {s.state}: {metrics}" + (f"; {settings}" if settings else "")
        if self.action == "chanperf" and self.perf is None:
            return "channel: memory and CPU data not available (needs run_as_process=1)"
        return self.reply

    def to_json(self) -> dict[str, object]:
        return {
            "action": self.action,
            "command": self.command,
            "reply": self.reply,
            "no_session": self.no_session,
            "status": self.status.to_json() if self.status else None,
            "chanperf": self.perf.to_json() if self.perf else None,
        }


async def control(
    host: str, action: str, port: int = CONSOLE_PORT, timeout: float = CONSOLE_TIMEOUT
) -> ControlResult:
    """Send the action's command and return the reply (``ValueError`` for an unknown action).

    ``timeout`` bounds the whole exchange: connect, greeting, command and reply.
    """
    try:
        command = ACTIONS[action]
    except KeyError:
        raise ValueError(f"unknown action {action!r} (choose {', '.join(ACTIONS)})") from None
    console = ConsoleClient(host, port, timeout=timeout)
    try:
        async with asyncio.timeout(timeout):
            async with console:
                reply = await console.command(command)
    except TimeoutError as error:
        raise DeviceTimeout(
            f"{console.where}: no complete reply to {command!r} within {timeout:g} s; gave up"
        ) from error
    status = perf = None
    if NO_SESSION not in reply.lower():
        try:
            if action == "status":
                status = parse_bsprof_status(reply)
            elif action == "chanperf":
                perf = parse_chanperf(reply)
        except ProtocolError as error:
            raise ProtocolError(f"{console.where}: {error}") from None
    return ControlResult(action, command, reply, status, perf)
