"""Where an app's functions live, for the model read from its source: ``source/`` is the main
thread's scope, each component (its ``<script uri>`` files and inline scripts) a scope of its
own, and a call resolves within its scope only (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rokuprof.simulator.brs_scan import (
    MAX_DEFINITIONS,
    Component,
    Definition,
    scan_brs,
    scan_component,
)

MAX_FILES = 2000  # source files read from one package
MAIN = "main"  # the main thread's scope, and the thread


@dataclass
class Scope:
    name: str  # "main" or the component's name
    definitions: dict[str, Definition]  # lower-case name -> definition


def function_key(scope: str, name: str) -> str:
    return name if scope == MAIN else f"{scope}:{name}"


def scopes_of(sources: Mapping[str, str]) -> tuple[list[Scope], list[Component]]:
    files = {path.lower(): (path, text) for path, text in list(sources.items())[:MAX_FILES]}
    components: list[Component] = []
    for path, text in files.values():
        if path.lower().endswith(".xml"):
            component = scan_component(text, path)
            if component is not None:
                components.append(component)
    budget = [MAX_DEFINITIONS]
    scanned: dict[str, list[Definition]] = {}

    def definitions(path: str) -> list[Definition]:
        if path not in scanned:
            found = files.get(path.lower())
            scanned[path] = scan_brs(found[1], found[0], 1, budget[0]) if found else []
            budget[0] = max(0, budget[0] - len(scanned[path]))
        return scanned[path]

    main = Scope(MAIN, {})
    for lower, (path, _) in sorted(files.items()):
        if lower.startswith("pkg:/source/") and lower.endswith(".brs"):
            _add(main, definitions(path))
    scopes = [main]
    for component in sorted(components, key=lambda c: c.file):
        scope = Scope(component.name, {})
        for script in component.scripts:
            _add(scope, definitions(script))
        _add(scope, component.inline)
        scopes.append(scope)
    return scopes, components


def _add(scope: Scope, definitions: list[Definition] | tuple[Definition, ...]) -> None:
    for definition in definitions:
        scope.definitions.setdefault(definition.name.lower(), definition)


def resolved_calls(scope: Scope, lower: str) -> list[tuple[tuple[str, str], int]]:
    """The calls of ``scope``'s function ``lower`` that resolve in the scope: (callee, loops)."""
    known = scope.definitions
    return [
        ((scope.name, call.name.lower()), call.loops)
        for call in known[lower].calls
        if call.name.lower() in known
    ]
