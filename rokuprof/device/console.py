"""The debug console (TCP 8080): ``bsprof-status``, ``bsprof-pause``, ``bsprof-resume``,
``chanperf``.

The console is line-oriented text with a ``>`` prompt. :class:`PromptScanner` (sans-IO) decides
when a reply is over: the prompt is a ``>`` alone at the start of the *last* line, with nothing
after it but spaces or line breaks (devices print ``>`` alone; ``"> "`` and ``">\n"`` are read
alike); a ``>`` anywhere else (XML output, ``a > b``) is text. When no prompt comes, the reply
ends after a quiet period. The reply parsers are pure functions.

Every wait is bounded in total (see :mod:`rokuprof.device.limits`): connecting with the
greeting, and each command with its reply, must finish within the client's ``timeout`` however
slowly the console trickles, and a reply over the byte cap is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from dataclasses import asdict, dataclass, field

from rokuprof.device.chanperf import ChanPerf, parse_chanperf
from rokuprof.device.constants import CONSOLE_PORT
from rokuprof.device.endpoint import PortClient
from rokuprof.device.errors import DeviceTimeout, DeviceUnavailable, ProtocolError
from rokuprof.device.limits import (
    CONSOLE_CLOSE_TIMEOUT,
    CONSOLE_MAX_REPLY_BYTES,
    CONSOLE_TIMEOUT,
)
from rokuprof.units import size

MAX_REPLY_BYTES = CONSOLE_MAX_REPLY_BYTES
PROMPT = ">"
_NEWLINES = re.compile(rb"\r\n?|\n")


class PromptScanner:
    """Collects console output; :attr:`at_prompt` is true when it ends with the prompt."""

    def __init__(self, max_bytes: int = MAX_REPLY_BYTES) -> None:
        self.max_bytes = max_bytes
        self._data = bytearray()

    @property
    def text(self) -> str:
        return _NEWLINES.sub(b"\n", self._data).decode("utf-8", "replace")

    def feed(self, data: bytes) -> None:
        if len(self._data) + len(data) > self.max_bytes:
            limit = size(self.max_bytes, exact=True)
            raise ProtocolError(f"reply larger than {limit} without a prompt")
        self._data += data

    @property
    def at_prompt(self) -> bool:
        """The output ends with the prompt: its last line (line breaks after it allowed, as
        some firmware ends the prompt's line) is ``>`` with at most spaces around it."""
        data = self._data.rstrip(b"\r\n")
        start = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
        last = data[start:]
        return last.strip() == b">" and last.lstrip(b" \t").startswith(b">")

    def take_reply(self, command: str | None = None) -> str:
        """The reply without the prompt and without an echo of ``command``; resets the buffer."""
        text = self.text
        self._data.clear()
        lines = text.rstrip("\n").split("\n")
        if lines and lines[-1].strip() == PROMPT:
            lines.pop()
        if command is not None:
            while lines and not lines[0].strip():
                lines.pop(0)
            if lines and lines[0].strip().lstrip(PROMPT).strip() == command:
                lines.pop(0)
        return "\n".join(line.rstrip() for line in lines).strip("\n")


@dataclass(frozen=True, slots=True)
class BsprofStatus:
    """``bsprof-status``: ``running``/``paused``, the enabled metrics, the destination."""

    state: str
    metrics: tuple[str, ...] = ()
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def data_dest(self) -> str:
        return self.settings.get("data_dest", "")

    def to_json(self) -> dict[str, object]:
        return asdict(self) | {"metrics": list(self.metrics)}


def parse_bsprof_status(text: str) -> BsprofStatus | None:
    """Parse the reply; ``None`` for "No profiling session"; :class:`ProtocolError` otherwise."""
    for line in text.splitlines():
        line = line.strip()
        if line.lower().startswith("no profiling session"):
            return None
        if line.lower().startswith("status:"):
            items = [i.strip() for i in line.split(":", 1)[1].split(",") if i.strip()]
            if not items:
                break
            metrics = tuple(i for i in items[1:] if "=" not in i)
            settings = dict(i.split("=", 1) for i in items[1:] if "=" in i)
            return BsprofStatus(items[0].lower(), metrics, settings)
    raise ProtocolError(f"unexpected bsprof-status reply: {text.strip()[:200]!r}")


class ConsoleClient(PortClient):
    """One connection to the debug console. ``async with ConsoleClient(host) as c:``.

    ``timeout`` bounds, in total, the connect with the greeting, and each command with its
    reply. ``quiet``: a reply without a prompt ends after this long without bytes. ``settle``:
    after a prompt-looking line, wait this long for more output.
    """

    def __init__(
        self,
        host: str,
        port: int = CONSOLE_PORT,
        *,
        timeout: float = CONSOLE_TIMEOUT,
        quiet: float = 0.5,
        settle: float = 0.1,
        max_reply_bytes: int = CONSOLE_MAX_REPLY_BYTES,
    ) -> None:
        super().__init__("the console at", host, port, timeout)
        self.quiet = quiet
        self.settle = settle
        self.banner = ""
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._scanner = PromptScanner(max_reply_bytes)

    async def connect(self) -> None:
        deadline = time.monotonic() + self.timeout
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port), self.timeout
            )
        except TimeoutError as error:
            raise DeviceUnavailable(
                f"connect to {self.where} timed out after {self.timeout:g} s"
            ) from error
        except OSError as error:
            raise DeviceUnavailable(
                f"cannot connect to {self.where}: {error.strerror or error}"
            ) from error
        # A banner (serial, model) and a first prompt may come; do not wait long for them.
        try:
            self.banner = await self._read_reply(
                None, deadline, first_wait=min(self.timeout, self.quiet)
            )
        except BaseException:  # cancelled or failed: __aexit__ will not run, close here
            writer, self._writer = self._writer, None
            writer.close()
            raise

    async def command(self, command: str) -> str:
        """Send one command line; return its reply (prompt and echo removed)."""
        if self._writer is None:
            await self.connect()
        assert self._writer is not None
        deadline = time.monotonic() + self.timeout
        try:
            self._writer.write(command.encode("utf-8") + b"\r\n")
            await asyncio.wait_for(self._writer.drain(), self.timeout)
        except (OSError, TimeoutError) as error:
            raise DeviceUnavailable(f"{self.where} went away") from error
        return await self._read_reply(command, deadline)

    async def _read_reply(
        self, command: str | None, deadline: float, first_wait: float | None = None
    ) -> str:
        """Read until the prompt (then a brief settle) or until output goes quiet, all before
        ``deadline`` (monotonic).

        Without ``first_wait`` a reply is required; with it, silence for that long is an
        empty reply (the optional greeting).
        """
        assert self._reader is not None
        scanner = self._scanner
        require = first_wait is None
        first_deadline = deadline if require else min(deadline, time.monotonic() + first_wait)
        what = f"reply to {command!r}" if command is not None else "greeting"
        got_any = False
        while True:
            now = time.monotonic()
            if scanner.at_prompt:
                want = self.settle  # a prompt-looking line may be mid-output
            elif got_any:
                want = self.quiet
            else:
                want = first_deadline - now
                if want <= 0:
                    if require:
                        raise DeviceTimeout(
                            f"{self.where}: no reply to {command!r} within {self.timeout:g} s"
                        )
                    break
            wait = min(want, deadline - now)
            try:
                if wait <= 0:
                    raise TimeoutError
                data = await asyncio.wait_for(self._reader.read(4096), wait)
            except TimeoutError:
                if scanner.at_prompt:
                    break
                if wait < want:  # the deadline, not a quiet period, ended the wait
                    raise DeviceTimeout(
                        f"{self.where}: {what} not complete within {self.timeout:g} s (output "
                        "kept coming without a prompt); gave up"
                    ) from None
                if got_any:
                    break
                continue
            except OSError as error:
                raise DeviceUnavailable(f"{self.where}: {error}") from error
            if not data:
                if not got_any and require:
                    raise DeviceUnavailable(f"{self.where} closed the connection")
                break
            got_any = True
            try:
                scanner.feed(data)
            except ProtocolError as error:
                raise ProtocolError(f"{self.where}: {what}: {error}; gave up") from None
        return scanner.take_reply(command)

    async def aclose(self, *, polite: bool = True) -> None:
        """Say ``quit`` (when ``polite``) and close; never longer than a fraction of a second."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        with contextlib.suppress(OSError, TimeoutError):
            async with asyncio.timeout(CONSOLE_CLOSE_TIMEOUT):
                if polite:
                    writer.write(b"quit\r\n")
                    await writer.drain()
                writer.close()
                await writer.wait_closed()
        writer.close()

    async def __aenter__(self) -> ConsoleClient:
        await self.connect()
        return self

    async def __aexit__(self, exc_type: object, *exc: object) -> None:
        await self.aclose(polite=exc_type is None)

    async def bsprof_status(self) -> BsprofStatus | None:
        return parse_bsprof_status(await self.command("bsprof-status"))

    async def bsprof_pause(self) -> str:
        return await self.command("bsprof-pause")

    async def bsprof_resume(self) -> str:
        return await self.command("bsprof-resume")

    async def chanperf(self) -> ChanPerf | None:
        return parse_chanperf(await self.command("chanperf"))
