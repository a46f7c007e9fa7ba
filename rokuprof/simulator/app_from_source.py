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

from rokuprof.simulator.app_model import AppModel, Function, Thread
from rokuprof.simulator.app_scopes import MAIN, Scope, function_key, resolved_calls, scopes_of
from rokuprof.simulator.app_source_keys import SourceKeys
from rokuprof.simulator.brs_scan import Component, Definition

LOOP_FACTOR = 3.0
MAX_LOOPS = 3
TASK_SECONDS = (0.6, 3.0)  # how long a start-up Task runs, from its cost
NO_ENTRY = "no Main, RunUserInterface or component: every function is a root"


def build_model(app_name: str, sources: Mapping[str, str]) -> AppModel:
    """The model of the app whose files are ``sources`` (``pkg:/`` path -> text)."""
    scopes, components = scopes_of(sources)
    functions: dict[str, Function] = {}
    keys: dict[tuple[str, str], str] = {}  # (scope, lower name) -> function key
    for scope in scopes:
        for lower, definition in scope.definitions.items():
            keys[scope.name, lower] = function_key(scope.name, definition.name)
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
    key_work = SourceKeys(render, tuple(handlers), keys, task_roots, fallback, scopes)
    return AppModel(
        name=f"app source: {app_name}",
        functions=functions,
        threads=threads,
        key_work=key_work,
        all_functions=functions,
        notes=notes,
        render_thread=render if render != MAIN else "",
    )


def _weight(loops: int) -> float:
    return LOOP_FACTOR ** min(loops, MAX_LOOPS)


def _inclusive(scopes: list[Scope]) -> dict[tuple[str, str], float]:
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
        stack: list[list] = [
            [start, iter(resolved_calls(scope_of[start[0]], start[1])), own[start], 1.0]
        ]
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
                calls = iter(resolved_calls(scope_of[callee[0]], callee[1]))
                stack.append([callee, calls, own[callee], _weight(loops)])
                on_path.add(callee)
    return done


def _function(
    key: str,
    definition: Definition,
    scope: Scope,
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


def _task_roots(scopes: list[Scope], by_name: dict[str, Component]) -> dict[str, str]:
    """Task component name -> the key of the function its ``functionName`` names."""
    roots = {}
    for scope in scopes:
        component = by_name.get(scope.name.lower())
        if scope.name == MAIN or component is None or not _is_task(component, by_name):
            continue
        for definition in scope.definitions.values():
            target = scope.definitions.get(definition.task_function.lower())
            if target is not None:
                roots[scope.name] = function_key(scope.name, target.name)
                break
    return roots


def _threads(
    scopes: list[Scope],
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
    cost_of = {keys[k]: c for k, c in costs.items()}  # function key -> its cost
    for name, root in sorted(task_roots.items()):
        at_start = name.lower() in created or name.lower() not in created_anywhere
        cost = cost_of[root]
        seconds = min(max(0.5 + cost / 100.0, TASK_SECONDS[0]), TASK_SECONDS[1])
        start = 0.2 if at_start else float("inf")
        threads.append(Thread(name, root, 0.6, starts_at=start, stops_at=start + seconds))
    return tuple(threads), tuple(notes)


def _reached(
    roots: list[str], scopes: list[Scope], keys: dict[tuple[str, str], str]
) -> list[Definition]:
    """The definitions the roots reach through calls."""
    by_key = {keys[s.name, lower]: (s, lower) for s in scopes for lower in s.definitions}
    seen = set(roots)
    queue = deque(roots)
    found = []
    while queue:
        scope, lower = by_key[queue.popleft()]
        found.append(scope.definitions[lower])
        for callee, _ in resolved_calls(scope, lower):
            target = keys[callee]
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return found
