"""The ``rokuprof`` program imports only the command it runs; everything else sees every command."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rokuprof.cli import COMMAND_MODULES, command_named

#: Modules only the capture commands (watch, demo, daemon, config) need.
HEAVY = ("rokuprof.daemon.daemon", "rokuprof.capture.loop", "rokuprof.daemon.config")


def _modules_after(*args: str) -> set[str]:
    """The rokuprof modules a real ``rokuprof ARGS`` process has imported when it exits."""
    script = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules"
        " if m.startswith('rokuprof'))), file=sys.__stderr__))\n"
        f"sys.argv = ['rokuprof', *{list(args)!r}]\n"
        "from rokuprof.cli import main\n"
        "main()\n"
    )
    command = [sys.executable, "-c", script]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["inspect", "x.bsprof"], "inspect"),
        (["-h"], None),
        (["--version"], None),
        (["config", "check", "-h"], "config"),
        (["inspec"], None),  # a typo: every command is loaded so the suggestion can name one
        ([], None),
    ],
)
def test_the_command_is_the_first_word_that_is_not_an_option(
    args: list[str], expected: str | None
) -> None:
    assert command_named(args) == expected


def test_inspect_does_not_import_the_capture_or_the_daemon() -> None:
    loaded = _modules_after("inspect", "-h")
    assert "rokuprof.cli.inspect_cmd" in loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    assert "rokuprof.cli.watch_cmd" not in loaded


def test_help_and_version_load_every_command() -> None:
    for args in (["-h"], ["--version"]):
        loaded = _modules_after(*args)
        assert {f"rokuprof.cli.{m}" for m in COMMAND_MODULES.values()} <= loaded


def test_help_lists_every_command_and_a_typo_still_gets_a_suggestion() -> None:
    run = [sys.executable, "-m", "rokuprof"]
    shown = subprocess.run([*run, "-h"], capture_output=True, text=True, timeout=60).stdout
    listed = shown.split("Commands:", 1)[1]
    assert all(f"  {name} " in listed for name in COMMAND_MODULES), listed
    typo = subprocess.run([*run, "inspec"], capture_output=True, text=True, timeout=60)
    assert typo.returncode == 2
    assert "inspect" in typo.stderr and len(typo.stderr.strip().splitlines()) == 1


def test_the_library_app_has_every_command() -> None:
    from rokuprof.cli import app

    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    names |= {g.name for g in app.registered_groups}
    assert names == set(COMMAND_MODULES)
