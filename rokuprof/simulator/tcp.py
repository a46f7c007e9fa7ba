"""A TCP service on asyncio streams that keeps track of its connections so it can stop cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

#: Errors that only mean the peer went away or was too slow: nothing to log.
PEER_ERRORS = (ConnectionError, TimeoutError, asyncio.IncompleteReadError, OSError)


async def close_writer(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await writer.wait_closed()


class TcpService:
    """``asyncio.start_server`` plus bookkeeping of the handler tasks."""

    def __init__(self, name: str, handler: Handler) -> None:
        self.name = name
        self.handler = handler
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task] = set()

    async def start(self, host: str, port: int) -> int:
        self._server = await asyncio.start_server(self._serve, host, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self.handler(reader, writer)
        except PEER_ERRORS:
            pass
        except asyncio.CancelledError:
            pass  # stop(): end quietly (Python 3.11's streams callback logs a cancelled handler)
        except Exception:
            log.exception("%s: connection handler failed", self.name)
        finally:
            self._tasks.discard(task)
            await close_writer(writer)

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        await asyncio.sleep(0)  # handler tasks of just-accepted connections start and register
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None
