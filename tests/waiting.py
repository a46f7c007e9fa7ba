"""Waiting for an event in a test: poll a condition, bounded, so a test never sleeps for a
window of time and hopes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def until(predicate: Callable[[], object], timeout: float, step: float = 0.02) -> None:
    """Poll ``predicate`` every ``step`` seconds until it holds; ``TimeoutError`` after
    ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(step)
