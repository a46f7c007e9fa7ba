"""The architecture holds by test, not by convention: the pure cores load no I/O machinery, no
module of ``rokuprof`` takes part in an import cycle, and no two packages import each other."""

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
    "rokuprof.path_model",
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
    "rokuprof.store.push_policy",
    "rokuprof.device.constants",
    "rokuprof.device.response",
    "rokuprof.device.installer_page",
    "rokuprof.device.chanperf",
    "rokuprof.units",
    "rokuprof.views.live_figures",
    "rokuprof.daemon.collect",
    "rokuprof.daemon.supervision",
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


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle a depth-first walk of ``graph`` meets, as the path around it."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_no_import_cycle() -> None:
    cycles = _cycles(_graph())
    assert cycles == [], "import cycles: " + "; ".join(" → ".join(c) for c in cycles)


def _layer(module: str) -> str:
    """The package a module belongs to (``rokuprof.capture.loop`` → ``capture``); a module at
    the top (``rokuprof.units``) is a layer of its own."""
    return module.split(".")[1] if "." in module else module


def test_no_two_packages_import_each_other() -> None:
    """Layers, not a web: between packages the imports go one way, so the package graph has no
    cycle at all (``capture`` never imports ``views`` when ``views`` imports ``capture``)."""
    layers: dict[str, set[str]] = {}
    for module, imported in _graph().items():
        layer = _layer(module)
        layers.setdefault(layer, set()).update(_layer(m) for m in imported if _layer(m) != layer)
    both = sorted({tuple(sorted((a, b))) for a in layers for b in layers[a] if a in layers[b]})
    assert both == [], "packages that import each other: " + ", ".join(" ↔ ".join(p) for p in both)
    cycles = _cycles(layers)
    assert cycles == [], "package cycles: " + "; ".join(" → ".join(c) for c in cycles)


#: A module says one thing: none over this many lines (split by concept, not to pass a count).
MAX_LINES = 600


def test_modules_stay_small() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    too_big = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not too_big, f"modules over {MAX_LINES} lines: {too_big}"


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
