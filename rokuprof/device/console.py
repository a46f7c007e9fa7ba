"""The debug console (TCP 8080): ``bsprof-status``, ``bsprof-pause``, ``bsprof-resume``,
``chanperf``.

The console is line-oriented text with a ``>`` prompt. :class:`PromptScanner` (sans-IO) decides
when a reply is over: the prompt is a ``>`` alone at the start of the *last* line, with nothing
after it; a ``>`` anywhere else (XML output, ``a > b``) is text. When no prompt comes, the reply
ends after a quiet period. The reply parsers are pure functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from dataclasses import asdict, dataclass, field

from rokuprof.device.errors import DeviceTimeout, DeviceUnavailable, ProtocolError

DEFAULT_CONSOLE_PORT = 8080
MAX_REPLY_BYTES = 1 << 20
PROMPT = ">"


class PromptScanner:
    """Collects console output; :attr:`at_prompt` is true when it ends with the prompt."""

    def __init__(self) -> None:
        self.text = ""

    def feed(self, data: bytes) -> None:
        self.text += data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
        if len(self.text) > MAX_REPLY_BYTES:
            raise ProtocolError(f"console reply over {MAX_REPLY_BYTES} bytes without a prompt")

    @property
    def at_prompt(self) -> bool:
        last = self.text.rsplit("\n", 1)[-1]
        return last.strip() == PROMPT and last.lstrip(" \t").startswith(PROMPT)

    def take_reply(self, command: str | None = None) -> str:
        """The reply without the prompt and without an echo of ``command``; resets the buffer."""
        text = self.text
        self.text = ""
        lines = text.split("\n")
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


@dataclass(frozen=True, slots=True)
class ChanPerf:
    """``chanperf``: memory (KiB) and CPU (%) of the running app, with their breakdowns."""

    mem_kib: int | None
    cpu_percent: int | None
    mem: dict[str, int] = field(default_factory=dict)
    cpu: dict[str, int] = field(default_factory=dict)
    raw: str = ""

    def to_json(self) -> dict[str, object]:
        return asdict(self)


_CHANPERF_FIELD = re.compile(r"([%\w]+)=(\d+)(?:KiB)?(?:\{([^}]*)\})?")


def parse_chanperf(text: str) -> ChanPerf | None:
    """Parse a ``channel: mem=...,%cpu=...`` line; ``None`` when no data is available."""
    for line in text.splitlines():
        line = line.strip()
        if not line.lower().startswith("channel:"):
            continue
        body = line.split(":", 1)[1]
        if "not available" in body:
            return None
        values: dict[str, tuple[int, dict[str, int]]] = {}
        for match in _CHANPERF_FIELD.finditer(body):
            name, value, detail = match.groups()
            parts = {}
            for item in (detail or "").split(","):
                key, eq, number = item.partition("=")
                if eq and number.strip().isdigit():
                    parts[key.strip()] = int(number)
            values[name] = (int(value), parts)
        mem = values.get("mem")
        cpu = values.get("%cpu")
        return ChanPerf(
            mem_kib=mem[0] if mem else None,
            cpu_percent=cpu[0] if cpu else None,
            mem=mem[1] if mem else {},
            cpu=cpu[1] if cpu else {},
            raw=line,
        )
    raise ProtocolError(f"unexpected chanperf reply: {text.strip()[:200]!r}")


class ConsoleClient:
    """One connection to the debug console. ``async with ConsoleClient(host) as c:``."""

    def __init__(
        self,
        host: str,
        port: int = DEFAULT_CONSOLE_PORT,
        *,
        timeout: float = 5.0,
        quiet: float = 0.5,
        settle: float = 0.1,
    ) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout  # for the connect and the first byte of a reply
        self.quiet = quiet  # a reply without a prompt ends after this long without bytes
        self.settle = settle  # after a prompt-looking line, wait this long for more output
        self.banner = ""
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._scanner = PromptScanner()

    async def connect(self) -> None:
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port), self.timeout
            )
        except TimeoutError as error:
            raise DeviceUnavailable(
                f"connect to the console at {self.host}:{self.port} timed out"
            ) from error
        except OSError as error:
            raise DeviceUnavailable(
                f"cannot connect to the console at {self.host}:{self.port}: "
                f"{error.strerror or error}"
            ) from error
        # A banner (serial, model) and a first prompt may come; do not wait long for them.
        try:
            self.banner = await self._read_reply(None, first_wait=min(self.timeout, self.quiet))
        except BaseException:  # cancelled or failed: __aexit__ will not run, close here
            writer, self._writer = self._writer, None
            writer.close()
            raise

    async def command(self, command: str) -> str:
        """Send one command line; return its reply (prompt and echo removed)."""
        if self._writer is None:
            await self.connect()
        assert self._writer is not None
        try:
            self._writer.write(command.encode("utf-8") + b"\r\n")
            await asyncio.wait_for(self._writer.drain(), self.timeout)
        except (OSError, TimeoutError) as error:
            raise DeviceUnavailable(f"console at {self.host}:{self.port} went away") from error
        return await self._read_reply(command)

    async def _read_reply(self, command: str | None, first_wait: float | None = None) -> str:
        """Read until the prompt (then a brief settle) or until output goes quiet.

        Without ``first_wait`` a reply is required within :attr:`timeout`; with it, silence for
        that long is an empty reply.
        """
        assert self._reader is not None
        scanner = self._scanner
        require = first_wait is None
        deadline = time.monotonic() + (self.timeout if require else first_wait)
        got_any = False
        while True:
            if scanner.at_prompt:
                wait = self.settle  # a prompt-looking line may be mid-output
            elif got_any:
                wait = self.quiet
            else:
                wait = deadline - time.monotonic()
                if wait <= 0:
                    if require:
                        raise DeviceTimeout(
                            f"no reply to {command!r} from the console at "
                            f"{self.host}:{self.port} within {self.timeout:g} s"
                        )
                    break
            try:
                data = await asyncio.wait_for(self._reader.read(4096), wait)
            except TimeoutError:
                if got_any or scanner.at_prompt:
                    break
                continue
            except OSError as error:
                raise DeviceUnavailable(f"console at {self.host}:{self.port}: {error}") from error
            if not data:
                if not got_any and require:
                    raise DeviceUnavailable(
                        f"the console at {self.host}:{self.port} closed the connection"
                    )
                break
            got_any = True
            scanner.feed(data)
        return scanner.take_reply(command)

    async def aclose(self) -> None:
        writer, self._writer = self._writer, None
        if writer is None:
            return
        with contextlib.suppress(OSError, TimeoutError):
            writer.write(b"quit\r\n")
            await asyncio.wait_for(writer.drain(), 0.5)
        writer.close()
        with contextlib.suppress(OSError, TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def __aenter__(self) -> ConsoleClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def bsprof_status(self) -> BsprofStatus | None:
        return parse_bsprof_status(await self.command("bsprof-status"))

    async def bsprof_pause(self) -> str:
        return await self.command("bsprof-pause")

    async def bsprof_resume(self) -> str:
        return await self.command("bsprof-resume")

    async def chanperf(self) -> ChanPerf | None:
        return parse_chanperf(await self.command("chanperf"))
