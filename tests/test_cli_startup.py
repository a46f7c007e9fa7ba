"""``rokuprof --help``, ``--version`` and every ``rokuprof COMMAND --help`` import neither the
daemon, the simulator, the capture, the exporters, the HTTP client nor pydantic: help texts and
option defaults come from light modules, and each command imports its heavy parts when it runs.
(The CPU time this saves is measured by benchmarks/startup.py, not here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rokuprof.cli import COMMAND_MODULES

#: The tree whose ``rokuprof`` the processes import.
ROOT = Path(__file__).resolve().parents[1]

#: Packages a help text must not need (prefixes of module names).
HEAVY = (
    "rokuprof.daemon",
    "rokuprof.simulator",
    "rokuprof.capture",
    "rokuprof.export",
    "httpx",
    "pydantic",
)

#: Invokes the real CLI entry point with ARGS and prints the sorted module names it imported.
SCRIPT = """\
import json, sys
sys.argv = ['rokuprof', *json.loads(sys.argv[1])]
from rokuprof.cli import main
try:
    main()
except SystemExit as stop:
    code = stop.code
else:
    code = 0
print(json.dumps({'code': code, 'modules': sorted(sys.modules)}), file=sys.__stderr__)
"""


def _run(*args: str) -> tuple[object, list[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    answer = json.loads(done.stderr.strip().splitlines()[-1])
    return answer["code"], answer["modules"], done.stdout


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["--version"]], ids=" ".join)
def test_the_root_help_and_version_import_nothing_heavy(args: list[str]) -> None:
    code, modules, shown = _run(*args)
    assert code in (0, None)
    assert shown.strip()  # it did print its help or version
    assert {f"rokuprof.cli.{m}" for m in COMMAND_MODULES.values()} <= set(modules)
    assert _heavy(modules) == []


@pytest.mark.parametrize("command", sorted(COMMAND_MODULES))
def test_each_command_help_imports_nothing_heavy(command: str) -> None:
    code, modules, shown = _run(command, "--help")
    assert code in (0, None)
    assert f"rokuprof {command}" in shown  # its own usage line, not the root's
    assert _heavy(modules) == []


def test_config_subcommand_help_imports_nothing_heavy() -> None:
    code, modules, shown = _run("config", "check", "--help")
    assert code in (0, None)
    assert "rokuprof config check" in shown
    assert _heavy(modules) == []
