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

from rokuprof import _native
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


def _small_capture(tmp_path: Path) -> Path:
    from rokuprof.bsprof.grammar import build_stream
    from rokuprof.bsprof.model import CPU, MODULE, PATH, STRING, Footer, Header

    header = Header(
        major=1, minor=0, patch=0, header_size=0, requested_sample_ratio=1.0,
        actual_sample_ratio=1.0, line_data=False, memory_ops=False, start_ms=1_700_000_000_000,
        target_name="small", supplemental="", target_version="1", vendor="Roku", model="m",
        firmware="f",
    )  # fmt: skip
    entries = [
        (STRING, 1, "main"), (STRING, 2, "pkg:/source/main.brs"), (STRING, 3, "Main"),
        (MODULE, 1, 1), (PATH, 1, 0, 1, 0, 2, 1, 3), (CPU, 1, 0, 10, 100),
    ]  # fmt: skip
    path = tmp_path / "small.bsprof"
    path.write_bytes(build_stream(header, entries, Footer(1_700_000_001_000)))
    return path


@pytest.mark.skipif(not _native.built(), reason="the native core is not built")
def test_inspect_of_a_small_capture_loads_neither_pydantic_nor_construct(tmp_path):
    """The native path: typer's value coercion (pydantic) and the grammar (construct) are
    skipped for a plain invocation of a well-formed capture, and it still answers."""
    capture = _small_capture(tmp_path)
    for args in ([], ["--json"], ["-n", "3", "--wall-unit", "ms"]):
        code, modules, shown = _run("inspect", str(capture), *args)
        assert code == 0, shown
        assert "Main" in shown
        loaded = [m for m in modules if m.split(".")[0] in ("pydantic", "construct")]
        assert loaded == []
    code, _modules, shown = _run("inspect", str(capture), "--json")
    assert json.loads(shown)["header"]["target_name"] == "small"


def test_inspect_invocations_that_are_not_plain_still_get_typers_answers(tmp_path):
    capture = _small_capture(tmp_path)
    code, modules, _shown = _run("inspect", str(capture), "--top", "-1")
    assert code == 2 and "pydantic" in modules  # typer read it, and refused it
    code, _modules, shown = _run("inspect", "--help")
    assert code in (0, None) and "rokuprof inspect" in shown


def test_a_plain_report_loads_no_pydantic_and_writes_the_page(tmp_path):
    """``report FILE -o OUT`` is plain too (its ``Path`` options read as typer would): the page
    is written without typer's value coercion; a word that is not plain still gets typer's."""
    capture = _small_capture(tmp_path)
    out = tmp_path / "r.html"
    code, modules, shown = _run("report", str(capture), "-o", str(out), "--wall-unit", "us")
    assert code == 0, shown
    assert f"report: {out}" in shown and out.read_bytes().startswith(b"<!doctype html>")
    assert [m for m in modules if m.split(".")[0] == "pydantic"] == []
    code, modules, _shown = _run("report", str(capture), "-o", str(out), "--wall-unit", "sec")
    assert code == 2 and "pydantic" in modules  # not a choice: typer read it, and refused it
