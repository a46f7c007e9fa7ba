"""The model of a sideloaded app, built from its own source (pure: file texts in, an
:class:`~rokuprof.simulator.app_model.AppModel` out), so that a profile of it names only the
app's own functions, files and lines.

* **Scopes**: ``source/`` is the main thread's scope; each component (its ``<script uri>`` files
  and inline scripts) is a scope of its own, so two components' ``init`` are two functions
  (keyed ``Component:init``, reported as ``init``). A call resolves within its scope only.
* **Threads**: ``main`` runs ``Main``/``RunUserInterface``; the render thread (named for the
  scene component) runs every component's ``init`` and its observer callbacks (``onChange`` in
  the XML, ``observeField`` in the code); each Task component whose code sets ``functionName``
  is a thread of its own, named for the component. A Task created from start-up code runs for a
  while after launch; one only a key creates runs when the key arrives.
* **Costs** come from the code, not from a clock: a function's own weight is its statements,
  each counting 3× per enclosing loop (up to three), and a call weighs the callee's whole
  subtree, times 3 per loop around the call; a walk stops in a function or goes down a call in
  proportion. Ticks land on statement lines (loop bodies more often), calls enter the callee at
  the call's own line. CPU per microsecond is drawn from the function's file and line, so one
  app gives one profile. Functions that create objects (``CreateObject``, ``createChild``,
  ``{}``, ``[]``) allocate.
* **Keys**: a remote key runs each ``onKeyEvent``, and the calls it makes for that key (an
  ``if key = "OK"`` around a call is honoured; ECP ``Select`` is ``"OK"``, ``Down`` is
  ``"down"``...), down their call trees; a Task they create runs its function.
* **No entry point** (no ``Main`` and no component): every function is a root of ``main``, and
  the model's notes say so.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from rokuprof.simulator.app_model import AppModel, Burst, Function, Thread
from rokuprof.simulator.brs_scan import (
    MAX_DEFINITIONS,
    Component,
    Definition,
    scan_brs,
    scan_component,
)

MAX_FILES = 2000  # source files read from one package
MAX_KEY_PATHS = 24  # call paths a key's bursts walk
MAX_KEY_DEPTH = 12
LOOP_FACTOR = 3.0
MAX_LOOPS = 3
TASK_SECONDS = (0.6, 3.0)  # how long a start-up Task runs, from its cost
MAIN, NO_ENTRY = "main", "no Main, RunUserInterface or component: every function is a root"
#: ECP key -> the key name ``onKeyEvent`` receives (others: lower case)
HANDLER_KEYS = {
    "select": "ok",
    "rev": "rewind",
    "fwd": "fastforward",
    "info": "options",
    "instantreplay": "replay",
    "backspace": "backspace",
}


@dataclass
class _Scope:
    name: str  # "main" or the component's name
    definitions: dict[str, Definition]  # lower-case name -> definition


def build_model(app_name: str, sources: Mapping[str, str]) -> AppModel:
    """The model of the app whose files are ``sources`` (``pkg:/`` path -> text)."""
    scopes, components = _scopes(sources)
    functions: dict[str, Function] = {}
    keys: dict[tuple[str, str], str] = {}  # (scope, lower name) -> function key
    for scope in scopes:
        for lower, definition in scope.definitions.items():
            keys[scope.name, lower] = _key(scope.name, definition.name)
    costs = _inclusive(scopes)
    for scope in scopes:
        for lower, definition in scope.definitions.items():
            key = keys[scope.name, lower]
            functions[key] = _function(key, definition, scope, keys, costs)
    by_name = {c.name.lower(): c for c in components}
    task_roots = _task_roots(scopes, by_name)
    threads, notes = _threads(scopes, components, by_name, keys, costs, task_roots)
    handlers = [
        (scope, scope.definitions["onkeyevent"])
        for scope in scopes
        if scope.name != MAIN and "onkeyevent" in scope.definitions
    ]
    render = next((t.name for t in threads if t.name != MAIN and t.name not in task_roots), MAIN)
    fallback = (threads[0].name, threads[0].root) if threads else None
    key_work = _KeyWork(render, tuple(handlers), keys, task_roots, fallback, scopes)
    return AppModel(
        name=f"app source: {app_name}",
        functions=functions,
        threads=threads,
        key_work=key_work,
        all_functions=functions,
        notes=notes,
    )


def _key(scope: str, name: str) -> str:
    return name if scope == MAIN else f"{scope}:{name}"


def _scopes(sources: Mapping[str, str]) -> tuple[list[_Scope], list[Component]]:
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

    main = _Scope(MAIN, {})
    for lower, (path, _) in sorted(files.items()):
        if lower.startswith("pkg:/source/") and lower.endswith(".brs"):
            _add(main, definitions(path))
    scopes = [main]
    for component in sorted(components, key=lambda c: c.file):
        scope = _Scope(component.name, {})
        for script in component.scripts:
            _add(scope, definitions(script))
        _add(scope, component.inline)
        scopes.append(scope)
    return scopes, components


def _add(scope: _Scope, definitions: list[Definition] | tuple[Definition, ...]) -> None:
    for definition in definitions:
        scope.definitions.setdefault(definition.name.lower(), definition)


def _weight(loops: int) -> float:
    return LOOP_FACTOR ** min(loops, MAX_LOOPS)


def _callees(scope: _Scope, lower: str) -> list[tuple[tuple[str, str], int]]:
    """The calls of ``scope``'s function ``lower`` that resolve in the scope: (callee, loops)."""
    known = scope.definitions
    return [
        ((scope.name, call.name.lower()), call.loops)
        for call in known[lower].calls
        if call.name.lower() in known
    ]


def _inclusive(scopes: list[_Scope]) -> dict[tuple[str, str], float]:
    """Each function's cost with everything it calls (a call back into a function already on
    the way counts that function's own cost only), depth first without recursion: a deep call
    chain is data, not a stack overflow."""
    own = {
        (s.name, lower): sum(_weight(loops) for _, loops in d.statements) or 1.0
        for s in scopes
        for lower, d in s.definitions.items()
    }
    scope_of = {s.name: s for s in scopes}
    done: dict[tuple[str, str], float] = {}
    for start in own:
        if start in done:
            continue
        # frames: [function, its calls still to follow, cost so far, weight of the call into it]
        stack: list[list] = [[start, iter(_callees(scope_of[start[0]], start[1])), own[start], 1.0]]
        on_path = {start}
        while stack:
            frame = stack[-1]
            step = next(frame[1], None)
            if step is None:
                stack.pop()
                on_path.discard(frame[0])
                done[frame[0]] = total = min(frame[2], 1e12)
                if stack:
                    stack[-1][2] += frame[3] * total
                continue
            callee, loops = step
            if callee in done:
                frame[2] += _weight(loops) * done[callee]
            elif callee in on_path:
                frame[2] += _weight(loops) * own[callee]
            else:
                calls = iter(_callees(scope_of[callee[0]], callee[1]))
                stack.append([callee, calls, own[callee], _weight(loops)])
                on_path.add(callee)
    return done


def _function(
    key: str,
    definition: Definition,
    scope: _Scope,
    keys: dict[tuple[str, str], str],
    costs: dict[tuple[str, str], float],
) -> Function:
    weights: dict[str, float] = {}
    lines: dict[str, int] = {}
    for call in definition.calls:
        callee = (scope.name, call.name.lower())
        if callee[1] in scope.definitions:
            target = keys[callee]
            weights[target] = weights.get(target, 0.0) + _weight(call.loops) * costs[callee]
            lines.setdefault(target, call.offset)
    hot = [o for o, loops in definition.statements for _ in range(int(_weight(loops)))][:256]
    made = sum(_weight(loops) for _, loops in definition.creates)
    draw = random.Random(f"{definition.file}:{definition.line}")
    return Function(
        name=key,
        file=definition.file,
        line=definition.line,
        callees=tuple(weights.items()),
        stay=sum(_weight(loops) for _, loops in definition.statements) or 1.0,
        ops_per_us=round(draw.uniform(0.6, 2.5), 3),
        allocs=min(4.0, 0.25 * made),
        size=(128, 4096) if definition.nodes else (32, 512),
        lines=definition.lines,
        shown=definition.name if key != definition.name else "",
        hot=tuple(hot) or (1,),
        call_lines=tuple(lines.items()),
    )


def _is_task(component: Component, by_name: dict[str, Component]) -> bool:
    seen = 0
    while component is not None and seen < 32:
        if component.extends.lower() == "task":
            return True
        component = by_name.get(component.extends.lower())
        seen += 1
    return False


def _is_scene(component: Component, by_name: dict[str, Component]) -> bool:
    seen = 0
    while component is not None and seen < 32:
        if component.extends.lower() in ("scene", "overhangpanelsetscene"):
            return True
        component = by_name.get(component.extends.lower())
        seen += 1
    return False


def _task_roots(scopes: list[_Scope], by_name: dict[str, Component]) -> dict[str, str]:
    """Task component name -> the key of the function its ``functionName`` names."""
    roots = {}
    for scope in scopes:
        component = by_name.get(scope.name.lower())
        if scope.name == MAIN or component is None or not _is_task(component, by_name):
            continue
        for definition in scope.definitions.values():
            target = scope.definitions.get(definition.task_function.lower())
            if target is not None:
                roots[scope.name] = _key(scope.name, target.name)
                break
    return roots


def _threads(
    scopes: list[_Scope],
    components: list[Component],
    by_name: dict[str, Component],
    keys: dict[tuple[str, str], str],
    costs: dict[tuple[str, str], float],
    task_roots: dict[str, str],
) -> tuple[tuple[Thread, ...], tuple[str, ...]]:
    main = scopes[0]
    threads: list[Thread] = []
    notes: list[str] = []
    entry = next(
        (main.definitions[n] for n in ("main", "runuserinterface") if n in main.definitions), None
    )
    if entry is not None:
        busy = 0.08 if components else 0.5
        threads.append(Thread(MAIN, keys[MAIN, entry.name.lower()], busy))
    render_roots: dict[str, float] = {}
    for scope in scopes[1:]:
        component = by_name[scope.name.lower()]
        names = ["init", *component.observers]
        names += [o for d in scope.definitions.values() for o in d.observers]
        for name in names:
            if name.lower() in scope.definitions and (scope.name, name.lower()) in costs:
                render_roots[keys[scope.name, name.lower()]] = costs[scope.name, name.lower()]
    handlers = [keys[s.name, "onkeyevent"] for s in scopes[1:] if "onkeyevent" in s.definitions]
    if render_roots or handlers:  # a scene with only a key handler runs only when keys come
        scene = next((c.name for c in components if _is_scene(c, by_name)), "render")
        roots = tuple(render_roots.items()) or tuple((h, 1.0) for h in handlers)
        threads.append(Thread(scene, roots[0][0], 0.15 if render_roots else 0.0, roots=roots))
    if not threads:
        every = tuple((keys[k], costs[k]) for k in sorted(costs))
        if every:
            threads.append(Thread(MAIN, every[0][0], 0.5, roots=every))
            notes.append(NO_ENTRY)
    reached = _reached([r for t in threads for r, _ in (t.roots or ((t.root, 1.0),))], scopes, keys)
    created = {node.lower() for d in reached for node in d.nodes}
    created_anywhere = {n.lower() for s in scopes for d in s.definitions.values() for n in d.nodes}
    for name, root in sorted(task_roots.items()):
        at_start = name.lower() in created or name.lower() not in created_anywhere
        cost = next(c for k, c in costs.items() if keys[k] == root)
        seconds = min(max(0.5 + cost / 100.0, TASK_SECONDS[0]), TASK_SECONDS[1])
        start = 0.2 if at_start else float("inf")
        threads.append(Thread(name, root, 0.6, starts_at=start, stops_at=start + seconds))
    return tuple(threads), tuple(notes)


def _reached(
    roots: list[str], scopes: list[_Scope], keys: dict[tuple[str, str], str]
) -> list[Definition]:
    """The definitions the roots reach through calls."""
    by_key = {keys[s.name, lower]: (s, lower) for s in scopes for lower in s.definitions}
    seen = set(roots)
    queue = deque(roots)
    found = []
    while queue:
        scope, lower = by_key[queue.popleft()]
        found.append(scope.definitions[lower])
        for callee, _ in _callees(scope, lower):
            target = keys[callee]
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return found


class _KeyWork:
    """What a remote key makes a model read from source do (see the module's notes)."""

    def __init__(
        self,
        render: str,
        handlers: tuple[tuple[_Scope, Definition], ...],
        keys: dict[tuple[str, str], str],
        task_roots: dict[str, str],
        fallback: tuple[str, str] | None,
        scopes: list[_Scope],
    ) -> None:
        self._render = render
        self._handlers = handlers
        self._keys = keys
        self._task_roots = task_roots
        self._fallback = fallback
        self._cache: dict[str, tuple[Burst, ...]] = {}
        tasks = {name.lower(): name for name in task_roots}
        #: function -> the functions it calls, and the Task threads it starts
        self._edges: dict[str, list[str]] = {}
        self._starts: dict[str, list[str]] = {}
        for scope in scopes:
            for lower, definition in scope.definitions.items():
                key = keys[scope.name, lower]
                called = (keys[callee] for callee, _ in _callees(scope, lower))
                self._edges[key] = list(dict.fromkeys(called))
                nodes = (n.lower() for n in definition.nodes)
                self._starts[key] = [tasks[n] for n in nodes if n in tasks]

    def __call__(self, key: str, screen: str) -> tuple[tuple[Burst, ...], str]:
        value = HANDLER_KEYS.get(key.lower(), key.lower())
        bursts = self._cache.get(value)
        if bursts is None:
            bursts = self._bursts(value)
            if len(self._cache) < 64:
                self._cache[value] = bursts
        return bursts, screen

    def _bursts(self, value: str) -> tuple[Burst, ...]:
        if not self._handlers:  # a short visit to the first thread's root, if there is one
            if self._fallback is None:
                return ()
            thread, root = self._fallback
            return (Burst(thread, (root,), 2),)
        out: list[Burst] = []
        for scope, handler in self._handlers:
            root = self._keys[scope.name, handler.name.lower()]
            out.append(Burst(self._render, (root,), 2))
            first = [
                self._keys[scope.name, call.name.lower()]
                for call in handler.calls
                if call.name.lower() in scope.definitions and call.reached_by(value)
            ]
            for path in self._paths(root, list(dict.fromkeys(first))):
                out.append(Burst(self._render, path, 2))
                for task in (t for fn in path for t in self._starts.get(fn, ())):
                    task_root = self._task_roots[task]
                    out.append(Burst(task, (task_root,), 2))
                    out.extend(
                        Burst(task, p, 2)
                        for p in self._paths(task_root, self._edges.get(task_root, []))[:8]
                    )
        return tuple(out)

    def _paths(self, root: str, first: list[str]) -> list[tuple[str, ...]]:
        """Call paths from ``root`` through ``first``, breadth first, bounded."""
        paths: list[tuple[str, ...]] = []
        queue = deque((root, f) for f in first)
        while queue and len(paths) < MAX_KEY_PATHS:
            path = queue.popleft()
            paths.append(path)
            if len(path) < MAX_KEY_DEPTH:
                queue.extend((*path, c) for c in self._edges.get(path[-1], ()) if c not in path)
        return paths
