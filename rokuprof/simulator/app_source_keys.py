"""What a remote key makes an app read from source do (pure): each ``onKeyEvent`` runs, then
the calls it makes for that key (an ``if key = "OK"`` around a call is honoured; ECP ``Select``
is ``"OK"``, ``Down`` is ``"down"``...) down their call trees, breadth first and bounded; a Task
they create runs its function on its own thread."""

from __future__ import annotations

from collections import deque
from dataclasses import InitVar, dataclass, field

from rokuprof.simulator.app_model import Burst
from rokuprof.simulator.app_scopes import Scope, resolved_calls
from rokuprof.simulator.brs_scan import Definition

MAX_KEY_PATHS = 24  # call paths a key's bursts walk
MAX_KEY_DEPTH = 12
#: ECP key -> the key name ``onKeyEvent`` receives (others: lower case)
HANDLER_KEYS = {
    "select": "ok",
    "rev": "rewind",
    "fwd": "fastforward",
    "info": "options",
    "instantreplay": "replay",
    "backspace": "backspace",
}


@dataclass(eq=False)
class SourceKeys:
    """What a remote key makes a model read from source do (see the module's notes)."""

    render: str  # the render thread's name
    handlers: tuple[tuple[Scope, Definition], ...]
    keys: dict[tuple[str, str], str]  # (scope, function) -> the model's function key
    task_roots: dict[str, str]
    fallback: tuple[str, str] | None  # (thread, root) visited when no handler is known
    scopes: InitVar[list[Scope]]
    _cache: dict[str, tuple[Burst, ...]] = field(init=False, default_factory=dict)

    def __post_init__(self, scopes: list[Scope]) -> None:
        tasks = {name.lower(): name for name in self.task_roots}
        #: function -> the functions it calls, and the Task threads it starts
        self._edges: dict[str, list[str]] = {}
        self._starts: dict[str, list[str]] = {}
        for scope in scopes:
            for lower, definition in scope.definitions.items():
                key = self.keys[scope.name, lower]
                called = (self.keys[callee] for callee, _ in resolved_calls(scope, lower))
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
        if not self.handlers:  # a short visit to the first thread's root, if there is one
            if self.fallback is None:
                return ()
            thread, root = self.fallback
            return (Burst(thread, (root,), 2),)
        out: list[Burst] = []
        for scope, handler in self.handlers:
            root = self.keys[scope.name, handler.name.lower()]
            out.append(Burst(self.render, (root,), 2))
            first = [
                self.keys[scope.name, call.name.lower()]
                for call in handler.calls
                if call.name.lower() in scope.definitions and call.reached_by(value)
            ]
            for path in self._paths(root, list(dict.fromkeys(first))):
                out.append(Burst(self.render, path, 2))
                for task in (t for fn in path for t in self._starts.get(fn, ())):
                    task_root = self.task_roots[task]
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
