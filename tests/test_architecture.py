"""The architecture holds by test, not by convention: the pure cores load no I/O machinery, and
no module of ``rokuprof`` takes part in an import cycle."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rokuprof"

#: The pure cores: formats, tables, chunk building, exports, the run/device/delivery machines
#: and the device protocol parts written sans I/O.
PURE = [
    "rokuprof.bsprof",
    "rokuprof.profile",
    "rokuprof.profile.engine",
    "rokuprof.sentry",
    "rokuprof.export",
    "rokuprof.export.report.timeline_extras",
    "rokuprof.export.report.source",
    "rokuprof.capture.machine",
    "rokuprof.capture.device_machine",
    "rokuprof.capture.record",
    "rokuprof.capture.chunks",
    "rokuprof.capture.stop",
    "rokuprof.capture.vitals",
    "rokuprof.sentry.side_measurements",
    "rokuprof.store.delivery",
    "rokuprof.device.constants",
    "rokuprof.device.response",
    "rokuprof.device.installer_page",
    "rokuprof.device.chanperf",
    "rokuprof.units",
    "rokuprof.views.live_figures",
    "rokuprof.daemon.collect",
    "rokuprof.app.manifest",
    "rokuprof.app.ignore",
    "rokuprof.scenario.model",
]

#: What a pure core must not load, even indirectly.
SHELL_MODULES = ["asyncio", "socket", "httpx", "rich", "asyncio_dgram", "aiofiles", "typer"]


@pytest.mark.parametrize("module", PURE)
def test_a_pure_core_loads_no_io_machinery(module: str) -> None:
    probe = (
        f"import sys, json, {module}\n"
        f"print(json.dumps([m for m in {SHELL_MODULES!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [], f"importing {module} loads {out.stdout.strip()}"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """The ``rokuprof`` modules ``path`` imports anywhere (a function-local import too: it only
    hides a cycle), except under ``if TYPE_CHECKING:``; ``from package import submodule``
    counts as the submodule."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in _imports(path, name, set(modules))} for name, path in modules.items()}


def test_no_import_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == [], "import cycles: " + "; ".join(" → ".join(c) for c in cycles)


#: A module says one thing: none over this many lines...
MAX_LINES = 600
#: ...and only a few (the decoder, the grammar, the tables, the machines) over this many.
LONG_LINES, MAX_LONG = 400, 6


def test_modules_stay_small() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    too_big = {name: n for name, n in sizes.items() if n > MAX_LINES}
    long = sorted((n, name) for name, n in sizes.items() if n > LONG_LINES)
    assert not too_big, f"modules over {MAX_LINES} lines: {too_big}"
    assert len(long) <= MAX_LONG, f"{len(long)} modules over {LONG_LINES} lines: {long}"


def test_no_test_module_imports_another() -> None:
    """What tests share lives in helper modules (tests/*_helpers.py, waiting.py...), which pytest
    does not collect; a test module imports none of its peers, so each reads on its own."""
    tests = Path(__file__).resolve().parent
    test_modules = {path.stem for path in tests.glob("test_*.py")}
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                continue
            found += [
                f"{path.relative_to(tests)}:{node.lineno} imports {name}"
                for name in names
                if name.split(".")[-1] in test_modules
            ]
    assert found == [], "\n".join(found)
