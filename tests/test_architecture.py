"""The architecture holds by test, not by convention: the pure cores load no I/O machinery, no
module of ``rokuprof`` takes part in an import cycle, and no two packages import each other."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rokuprof"

#: What a pure module must not load, even indirectly: an event loop, sockets, an HTTP client, a
#: terminal UI or the CLI framework. (A pure module may read or write a file at a path it is
#: given, as the capture reader and the exporters do; it never waits on a peer or a terminal.)
SHELL_MODULES = ["asyncio", "socket", "ssl", "httpx", "rich", "asyncio_dgram", "aiofiles", "typer"]

#: The layout, which decides purity: these packages are pure cores as a whole, and so is every
#: module at the top of ``rokuprof`` (one shared rule each: units, time format, path model, exit
#: statuses...) but the entry point and the HTTP body reader the clients share. Inside the shell
#: packages the pure modules are found, not listed: see ``_pure_modules``.
CORE_PACKAGES = {
    "bsprof",
    "profile",
    "timeline",
    "sentry",
    "export",
    "_native",
    "app",
    "trace",
    "verdict",
}
SHELL_AT_THE_TOP = {"rokuprof.__main__", "rokuprof.httpbody"}

ARCHITECTURE_PAGE = PACKAGE.parent / "docs" / "architecture.md"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_nodes(path: Path) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of ``path``, anywhere in it (a function-local import too: it only
    hides a dependency), except under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in typing_only
    ]


def _imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """The ``rokuprof`` modules ``path`` imports; ``from package import submodule`` counts as
    the submodule."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _import_nodes(path):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        else:
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


def _external(path: Path) -> set[str]:
    """The top-level names of what ``path`` imports from outside ``rokuprof``."""
    found: set[str] = set()
    for node in _import_nodes(path):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found - {"rokuprof"}


def _shell_chains() -> dict[str, list[str]]:
    """Each module's way to a shell module: the import chain that loads one (``capture.loop →
    asyncio``), or ``[]`` for a pure module. Found from the code, so the pure list keeps itself.
    Importing ``a.b.c`` runs ``a`` and ``a.b`` first, so a package's imports count for every
    module below it."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = _graph()
    for module in graph:
        graph[module] |= {module.rsplit(".", n)[0] for n in range(1, module.count(".") + 1)}
    chains = {
        m: [m, s[0]] for m, p in paths.items() if (s := sorted(_external(p) & set(SHELL_MODULES)))
    }
    importers: dict[str, set[str]] = {}
    for module, deps in graph.items():
        for dep in deps:
            importers.setdefault(dep, set()).add(module)
    todo = sorted(chains)
    while todo:  # breadth first from the shell importers: each chain is a shortest one
        reached = todo.pop(0)
        for module in sorted(importers.get(reached, ())):
            if module not in chains:
                chains[module] = [module, *chains[reached]]
                todo.append(module)
    return {module: chains.get(module, []) for module in graph}


#: The modules at the top of ``rokuprof`` (``rokuprof.units``...), not packages.
TOP = {f"rokuprof.{path.stem}" for path in PACKAGE.glob("*.py") if path.stem != "__init__"}


def _is_core(module: str) -> bool:
    """Whether the layout makes ``module`` pure: the package itself (it loads nothing until
    asked), a shared rule at the top, or a module of a core package."""
    if module == "rokuprof" or module in TOP:
        return module not in SHELL_AT_THE_TOP
    return _layer(module) in CORE_PACKAGES


def _pure_modules() -> dict[str, list[str]]:
    """The pure modules by layer, found by following imports."""
    by_layer: dict[str, list[str]] = {}
    for module, chain in sorted(_shell_chains().items()):
        if not chain:
            by_layer.setdefault(_layer(module), []).append(module)
    return by_layer


def test_the_core_layers_are_pure() -> None:
    """Every module the layout calls a core loads no I/O machinery, however indirectly."""
    impure = [
        " → ".join(chain) for module, chain in _shell_chains().items() if _is_core(module) and chain
    ]
    assert impure == [], "core modules that load I/O machinery:\n" + "\n".join(sorted(impure))


@pytest.mark.parametrize("layer", sorted(_pure_modules()))
def test_a_pure_module_loads_no_io_machinery_when_imported(layer: str) -> None:
    """What the imports say, a fresh interpreter confirms: importing every pure module of a layer
    together (so each one alone too) leaves no shell module in ``sys.modules``."""
    modules = _pure_modules()[layer]
    probe = (
        f"import sys, json, importlib\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(json.dumps([m for m in {SHELL_MODULES!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [], (
        f"importing the pure modules of {layer} loads {out.stdout.strip()}"
    )


def _documented_pure() -> set[str]:
    """The modules the architecture page's "pure modules inside the shell packages" block names:
    lines ``package/  a.py (what), b.py ...``, continued on indented lines."""
    text = ARCHITECTURE_PAGE.read_text(encoding="utf-8")
    block = text.split("<!-- pure modules inside the shell packages -->", 1)[1].split("```")[1]
    found: set[str] = set()
    package = ""
    for line in block.splitlines():
        if head := re.match(r"(\w+)/\s", line):
            package = head.group(1)
        found.update(f"rokuprof.{package}.{name}" for name in re.findall(r"\b(\w+)\.py\b", line))
    return found


def test_the_architecture_page_names_every_pure_module_of_the_shells() -> None:
    """The page's list of pure modules inside the shell packages is what the code says, both
    ways: a module that stops being pure, or a new pure one, changes the page."""
    derived = {
        module
        for modules in _pure_modules().values()
        for module in modules
        if not _is_core(module)
        and module.count(".") == 2  # a package's own __init__ is not listed
        and module != f"rokuprof.{_layer(module)}"
    }
    documented = _documented_pure()
    assert sorted(documented - derived) == [], "the page calls these pure; they are not"
    assert sorted(derived - documented) == [], "pure, and not on the architecture page"


def _documented_layers() -> list[str]:
    """The packages in the order the architecture page's layer diagram draws them, top first."""
    text = ARCHITECTURE_PAGE.read_text(encoding="utf-8")
    block = text.split("<!-- layers, top to bottom: each imports only the layers under it -->", 1)[
        1
    ]
    return re.findall(r"^(\w+)/\s", block.split("```")[1], re.MULTILINE)


def test_the_architecture_page_draws_the_layers_as_the_imports_go() -> None:
    """Every package is on the page's diagram, and each imports only packages drawn under it
    (and the shared rules at the top), so the page's arrows are the code's."""
    order = _documented_layers()
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert sorted(order) == sorted(packages), "the diagram and the packages differ"
    imports: dict[str, set[str]] = {}
    for module, imported in _graph().items():
        imports.setdefault(_layer(module), set()).update(_layer(m) for m in imported)
    upward = [
        f"{layer} imports {other}, drawn above it"
        for at, layer in enumerate(order)
        for other in sorted(imports.get(layer, set()) & set(order[:at]))
    ]
    assert upward == [], "\n".join(upward)


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
