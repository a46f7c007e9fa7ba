"""The debug console of the simulated device (port 8080 on a real one): line-oriented text,
prompt ``>`` alone at the start of its line, as devices print it.

Clients find a reply's end by that prompt: roku-debug (through telnet-client) waits for a line
that is ``>`` and nothing else; @dlenroc's debug-server client sends ``<command>\nq\n`` at once
and takes the text between the first and the last ``\n>``. So the first prompt comes after a
line break (after the banner, or alone), each reply ends with one, and ``q``, ``quit`` and
``exit`` end the session as on a device, which says so first (roku-debug waits for those
words).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from rokuprof.simulator import chanperf as simulated_chanperf


class Profiled(simulated_chanperf.Running, Protocol):
    """What the debug console needs of a device, and all it may touch."""

    def profiling_status(self) -> str | None: ...
    def pause(self) -> bool: ...
    def resume(self) -> bool: ...


PROMPT = b">"
QUITS = ("q", "quit", "exit")
QUIT_WORDS = "Quit command received, exiting."
NEWLINE = "\r\n"
NO_SESSION = "No profiling session"
NO_CHANPERF = simulated_chanperf.NOT_AVAILABLE

COMMANDS = {
    "bsprof-status": "show the BrightScript profiler status",
    "bsprof-pause": "pause BrightScript profiling",
    "bsprof-resume": "resume BrightScript profiling",
    "chanperf": "show the channel's memory and CPU use",
    "help": "list the commands",
    "quit": "close this session (also exit, q)",
}


def unknown_command(command: str) -> str:
    """The reply to a command the console does not know (our choice: real wording unknown)."""
    return f'Command not recognized: "{command}". Type "help" for a list of commands.'


def banner(device: Profiled) -> str:
    cfg = device.config
    return f"{cfg.model_name} ({cfg.model_number}) serial {cfg.serial} debug console"


def chanperf(device: Profiled) -> str:
    """One ``chanperf`` line; the numbers follow the app's work (:mod:`.chanperf`)."""
    return simulated_chanperf.console_line(device)


def reply(device: Profiled, command: str) -> list[str]:
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


async def serve(device: Profiled, reader: asyncio.StreamReader, writer) -> None:
    """One console session: optional banner, then prompt, command, reply, until ``quit``."""
    head = banner(device) + NEWLINE if device.config.console_banner else ""
    writer.write((head + NEWLINE).encode() + PROMPT)
    await writer.drain()
    while True:
        line = await reader.readline()
        if not line:
            return
        command = line.decode("utf-8", "replace").strip()
        if command in QUITS:
            writer.write((QUIT_WORDS + NEWLINE).encode())
            await writer.drain()
            return
        lines = reply(device, command) if command else []
        writer.write(("".join(text + NEWLINE for text in lines) or NEWLINE).encode() + PROMPT)
        await writer.drain()
