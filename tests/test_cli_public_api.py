"""The CLI stands on typer's and click's public names only: no module of ``rokuprof`` imports a
private name of either (``typer._click``, ``typer._coercion``, ``from typer.core import
_TyperParameter``), reads one (``typer._x``), assigns to an attribute of either module, or swaps an
object's class (``param.__class__ = ...``). The conventions live in subclasses passed as ``cls=``
and in click's public hooks (rokuprof/cli/root.py)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "rokuprof"

#: The libraries whose private names are off limits.
LIBRARIES = {"typer", "click"}


def _private(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] in LIBRARIES and any(part.startswith("_") for part in parts[1:])


def _root_name(node: ast.expr) -> str | None:
    """The name an attribute chain starts from (``typer`` for ``typer.core.x``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def back_doors(source: str, where: str) -> list[str]:
    """Every use of a private typer/click name, write into those modules, or class swap."""
    tree = ast.parse(source)
    modules: set[str] = set()  # local names bound to typer/click or one of their modules
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in LIBRARIES:
                    modules.add((alias.asname or alias.name).split(".")[0])
                    if _private(alias.name):
                        found.append(f"{where}:{node.lineno} imports {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] not in LIBRARIES:
                continue
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                if _private(dotted):
                    found.append(f"{where}:{node.lineno} imports {dotted}")
                modules.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _root_name(node) in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{where}:{node.lineno} reads {ast.unparse(node)}")
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if not isinstance(target, ast.Attribute):
                continue
            if _root_name(target) in modules:
                found.append(f"{where}:{node.lineno} assigns {ast.unparse(target)}")
            if target.attr == "__class__":
                found.append(f"{where}:{node.lineno} swaps the class of {ast.unparse(target)}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and node.args
            and _root_name(node.args[0]) in modules
        ):
            found.append(f"{where}:{node.lineno} setattr on {ast.unparse(node.args[0])}")
    return found


def test_rokuprof_uses_no_private_typer_or_click_name() -> None:
    found = [
        line
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in back_doors(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    ]
    assert found == [], "\n".join(found)


def test_the_probe_sees_each_kind_of_back_door() -> None:
    """The check above can fail: each form it looks for is found in a planted source."""
    planted = {
        "from typer import _click": "imports typer._click",
        "from typer._coercion import build_runtime_param": "imports typer._coercion",
        "from typer.core import _TyperParameter": "imports typer.core._TyperParameter",
        "import typer._click.exceptions": "imports typer._click.exceptions",
        "import typer\ntyper._click.echo('x')": "reads typer._click",
        "import typer\ntyper.echo = print": "assigns typer.echo",
        "import click as c\nc.core.x = 1": "assigns c.core.x",
        "import typer\nsetattr(typer, 'echo', print)": "setattr on typer",
        "param.__class__ = object": "swaps the class of param.__class__",
    }
    for source, expected in planted.items():
        found = back_doors(source, "planted.py")
        assert any(expected in line for line in found), (source, found)
    public = "import typer\nfrom typer.core import TyperGroup\ntyper.echo('x')"
    assert back_doors(public, "public.py") == []
