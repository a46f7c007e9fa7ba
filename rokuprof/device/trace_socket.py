"""The app-trace socket of a Roku (OS 15.1+): ``ws://HOST:8060/perfetto-session``.

Its binary messages' payloads, appended in order, are a Perfetto trace file. The device sends
nothing until a traced app launches, serves one client at a time, and loses what a launch
traces while no client is connected. The WebSocket protocol (framing, masking, pings, the
close handshake, the message size limit) is the ``websockets`` library's; this is a thin shell
that bounds it: each message at most ``max_message`` bytes (a larger one announced closes the
socket before its payload is read), the opening and the closing each within a deadline, and
every failure a :class:`~rokuprof.device.errors.DeviceError` saying what happened where.

::

    async with TraceSocket(host, port) as socket:
        async for payload in socket.messages():
            ...
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from rokuprof.device.errors import DeviceError, DeviceUnavailable, HttpStatusError, ProtocolError
from rokuprof.device.hosts import url_host
from rokuprof.device.limits import (
    TRACE_CLOSE_TIMEOUT,
    TRACE_MAX_MESSAGE_BYTES,
    TRACE_OPEN_TIMEOUT,
)
from rokuprof.units import size

TRACE_PATH = "/perfetto-session"
#: Seconds between looks at a socket that sends nothing (recv() is safe to cancel).
CHECK_SECONDS = 0.25


class TraceSocket:
    """One connection to a device's trace socket."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        open_timeout: float = TRACE_OPEN_TIMEOUT,
        close_timeout: float = TRACE_CLOSE_TIMEOUT,
        max_message: int = TRACE_MAX_MESSAGE_BYTES,
    ) -> None:
        self.uri = f"ws://{url_host(host)}:{port}{TRACE_PATH}"
        self.where = f"the trace socket {url_host(host)}:{port}"
        self.open_timeout = open_timeout
        self.close_timeout = close_timeout
        self.max_message = max_message
        self.text_messages = 0  # text messages (not part of a trace): counted, not kept
        self._ws = None

    async def __aenter__(self) -> TraceSocket:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake, InvalidStatus

        try:
            self._ws = await connect(
                self.uri,
                open_timeout=self.open_timeout,
                close_timeout=self.close_timeout,
                max_size=self.max_message,
                max_queue=4,  # messages read ahead of us: bounded memory
                ping_interval=None,  # a Roku may not answer pings; no data for long is normal
                compression=None,
                proxy=None,
                user_agent_header=None,
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise HttpStatusError(
                f"{self.where} refused the connection: HTTP {status}"
                + (" (another client is connected?)" if status in (409, 429, 503) else ""),
                status,
            ) from None
        except InvalidHandshake as exc:
            raise ProtocolError(f"{self.where}: not a WebSocket answer ({exc})") from None
        except TimeoutError:
            raise DeviceUnavailable(
                f"{self.where}: no answer within {self.open_timeout:g} s"
            ) from None
        except OSError as exc:
            raise DeviceUnavailable(f"cannot reach {self.where}: {exc.strerror or exc}") from None
        return self

    async def __aexit__(self, *exc: object) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                await ws.close()  # the close handshake, bounded by close_timeout
            finally:
                ws.transport.abort()  # closed already, or cancelled or timed out: let it go

    async def messages(self) -> AsyncIterator[bytes]:
        """Each binary message's payload until the device closes; a protocol failure (a
        message over the limit, bytes that are not WebSocket frames) is a ``DeviceError``."""
        from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK
        from websockets.protocol import State

        ws = self._ws
        if ws is None:
            raise RuntimeError("messages() outside 'async with'")
        try:
            while True:
                try:
                    message = await asyncio.wait_for(ws.recv(), CHECK_SECONDS)
                except TimeoutError:
                    # No message for a while is normal (no traced app running). But after a
                    # protocol failure the library waits for the device to close the TCP
                    # connection, which a hostile one never does: drop it here.
                    if ws.state is not State.OPEN:
                        ws.transport.abort()
                    continue
                if isinstance(message, bytes):
                    yield message
                else:
                    self.text_messages += 1
        except ConnectionClosedOK:
            return
        except ConnectionClosedError as exc:
            raise ProtocolError(f"{self.where} broke off: {self._why(exc)}") from None
        except OSError as exc:
            raise DeviceUnavailable(f"{self.where} lost: {exc.strerror or exc}") from None

    def _why(self, exc: Exception) -> str:
        sent = getattr(exc, "sent", None)
        code = getattr(sent, "code", None)
        if code == 1009:
            return f"a message larger than {size(self.max_message, exact=True)}"
        if code == 1002:
            return "bytes that are not WebSocket frames"
        reason = getattr(sent, "reason", "") or str(exc)
        return reason[:200] or "closed without a close frame"


__all__ = ["TRACE_PATH", "DeviceError", "TraceSocket"]
