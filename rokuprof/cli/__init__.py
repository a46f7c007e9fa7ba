"""Command-line interface: each command lives in its own module and only parses options.

A command module registers its command on the root application (``root.app``) when it is
imported. ``main()`` imports only the module of the command being run, so ``rokuprof inspect``
does not pay for the daemon's or the capture's imports; anything else (``--help``, ``--version``,
shell completion, a mistyped command that needs suggestions) loads every command. A plain
invocation of a command in ``PLAIN_COMMANDS`` (``rokuprof inspect FILE``, ``rokuprof report
FILE -o OUT``) calls the command function directly (``quick_args``): typer's value coercion
would import pydantic.
``rokuprof.cli.app`` is the root application with every command loaded.

So that loading every command stays cheap, a command module imports at its top only what its
options and help need (typer, the CLI's own helpers, constants from light homes such as
``rokuprof.export_names`` and ``rokuprof.device.constants``); the daemon, the capture, the
simulator, the exporters and the HTTP client are imported inside the command's body.
``tests/test_cli_startup.py`` holds it; ``benchmarks/startup.py`` measures it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rokuprof.cli.root import RokuTyper

#: Command name → the module that registers it, in the order ``rokuprof -h`` lists them.
COMMAND_MODULES = {
    "config": "config_cmd",
    "control": "control_cmd",
    "convert": "convert_cmd",
    "daemon": "daemon_cmd",
    "demo": "demo_cmd",
    "diff": "diff_cmd",
    "discover": "discover_cmd",
    "export": "export_cmd",
    "inspect": "inspect_cmd",
    "profile": "profile_cmd",
    "pull": "pull_cmd",
    "report": "report_cmd",
    "simulate": "simulate_cmd",
    "watch": "watch_cmd",
}

#: Commands whose plain invocations run without typer's value coercion, which imports pydantic
#: (``quick_args``): the ones whose start-up is a large share of their cost. Command name → its
#: function in its module.
PLAIN_COMMANDS = {"convert": "convert", "inspect": "inspect", "report": "report_command"}


def command_named(args: Sequence[str]) -> str | None:
    """The command ``args`` run (the first word that is not an option), if it is one of ours."""
    for arg in args:
        if not arg.startswith("-"):
            return arg if arg in COMMAND_MODULES else None
    return None


def load_commands(names: Iterable[str] | None = None) -> RokuTyper:
    """Register the named commands (all when ``names`` is None) and return the root app."""
    for name in COMMAND_MODULES if names is None else names:
        importlib.import_module(f"rokuprof.cli.{COMMAND_MODULES[name]}")
    from rokuprof.cli.root import app

    return app


def main() -> None:
    """The ``rokuprof`` program (also ``python -m rokuprof``)."""
    name = command_named(sys.argv[1:])
    if name in PLAIN_COMMANDS and sys.argv[1] == name:
        from rokuprof.cli.quick_args import run_plain

        module = importlib.import_module(f"rokuprof.cli.{COMMAND_MODULES[name]}")
        command = getattr(module, PLAIN_COMMANDS[name])
        run_plain(command, sys.argv[2:])  # exits when the words were plain
    root = load_commands(None if name is None else [name])
    root(prog_name="rokuprof")  # help and hints name the command, not ``__main__.py``


def __getattr__(name: str) -> Any:
    if name == "app":
        return load_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["COMMAND_MODULES", "app", "command_named", "load_commands", "main"]
