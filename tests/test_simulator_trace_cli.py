"""``rokuprof simulate`` as a user runs it (a process): app tracing is on, and
``--no-app-tracing`` plays firmware without it."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from daemon_helpers import start_simulator


@pytest.mark.parametrize(("flag", "status"), [((), 200), (("--no-app-tracing",), 404)])
async def test_simulate_answers_the_enable_command_as_its_firmware_would(
    flag: tuple[str, ...], status: int
) -> None:
    simulator = await start_simulator("--json", "--no-auto-launch", "--duration", "20", *flag)
    try:
        row = json.loads(await asyncio.wait_for(simulator.stdout.readline(), 30))
        async with httpx.AsyncClient(timeout=5) as client:
            answer = await client.post(f"http://127.0.0.1:{row['ecp']}/perfetto/enable/dev")
    finally:
        simulator.terminate()
        await asyncio.wait_for(simulator.wait(), 10)
    assert answer.status_code == status
    assert (b"<channel>dev</channel>" in answer.content) == (status == 200)
