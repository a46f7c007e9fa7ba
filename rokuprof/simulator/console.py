"""The debug console of the simulated device (port 8080 on a real one): line-oriented text,
prompt ``>``."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rokuprof.simulator import chanperf as simulated_chanperf

if TYPE_CHECKING:
    from rokuprof.simulator.device import SimulatedDevice

PROMPT = b"> "
NEWLINE = "\r\n"
NO_SESSION = "No profiling session"
NO_CHANPERF = simulated_chanperf.NOT_AVAILABLE

COMMANDS = {
    "bsprof-status": "show the BrightScript profiler status",
    "bsprof-pause": "pause BrightScript profiling",
    "bsprof-resume": "resume BrightScript profiling",
    "chanperf": "show the channel's memory and CPU use",
    "help": "list the commands",
    "quit": "close this session",
}


def unknown_command(command: str) -> str:
    """The reply to a command the console does not know (our choice: real wording unknown)."""
    return f'Command not recognized: "{command}". Type "help" for a list of commands.'


def banner(device: SimulatedDevice) -> str:
    cfg = device.config
    return f"{cfg.model_name} ({cfg.model_number}) serial {cfg.serial} debug console"


def chanperf(device: SimulatedDevice) -> str:
    """One ``chanperf`` line; the numbers follow the app's work (:mod:`.chanperf`)."""
    return simulated_chanperf.console_line(device)


def reply(device: SimulatedDevice, command: str) -> list[str]:
    """The lines the console answers to ``command`` (already stripped)."""
    word = command.split()[0] if command else ""
    if word == "bsprof-status":
        return [device.profiling_status() or NO_SESSION]
    if word == "bsprof-pause":
        return ["bsprof paused" if device.pause() else NO_SESSION]
    if word == "bsprof-resume":
        return ["bsprof resumed" if device.resume() else NO_SESSION]
    if word == "chanperf":
        return [chanperf(device)]
    if word == "help":
        return [f"{name:16}{text}" for name, text in COMMANDS.items()]
    return [unknown_command(command)]


async def serve(device: SimulatedDevice, reader: asyncio.StreamReader, writer) -> None:
    """One console session: optional banner, then prompt, command, reply, until ``quit``."""
    if device.config.console_banner:
        writer.write((banner(device) + NEWLINE).encode())
    writer.write(PROMPT)
    await writer.drain()
    while True:
        line = await reader.readline()
        if not line:
            return
        command = line.decode("utf-8", "replace").strip()
        if command in ("quit", "exit"):
            return
        if command:
            out = "".join(text + NEWLINE for text in reply(device, command))
            writer.write(out.encode())
        writer.write(PROMPT)
        await writer.drain()
