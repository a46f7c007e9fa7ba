"""The capture's helpers for tasks that run beside a block of work: started with it, cancelled
and reaped when it ends, whatever ends it (the one place that cancels tasks by hand)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine


@contextlib.asynccontextmanager
async def alongside(*coros: Coroutine[object, object, object]) -> AsyncIterator[None]:
    """Run ``coros`` as tasks while the block runs; cancel and reap them when it ends."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        yield
    finally:
        await cancel(*tasks)


async def cancel(*tasks: asyncio.Task | None) -> None:
    """Cancel the tasks and wait until they have ended (their errors are theirs: not raised).

    A task is cancelled again while it runs on: Python 3.11's ``wait_for`` can swallow a
    cancellation that arrives as its inner future completes.
    """
    live = [t for t in tasks if t is not None]
    while pending := [t for t in live if not t.done()]:
        for task in pending:
            task.cancel()
        await asyncio.wait(pending, timeout=0.1)
    for task in live:
        if not task.cancelled():
            task.exception()  # retrieved: never "exception was never retrieved"
