"""A call tree of the timeline's samples: root, one node per thread, then frames (for the
formats that number their nodes: ``.cpuprofile``, one thread per tree, and nflxprofile)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rokuprof.export.model import ExportInput
from rokuprof.export.names import drawn


@dataclass(slots=True)
class Node:
    id: int
    name: str
    frame: int | None  # index into ExportInput.frames; None for root, threads and idle
    kind: str  # "root" | "thread" | "idle" | "frame"
    parent: int | None
    children: list[int] = field(default_factory=list)
    hits: int = 0


class CallTree:
    """Nodes numbered from ``first_id``; :meth:`leaf` gives the node of a thread's stack."""

    def __init__(
        self, inp: ExportInput, first_id: int, root_name: str, *, thread_nodes: bool = True
    ) -> None:
        """``thread_nodes=False``: a thread's frames hang from the root (a one-thread tree)."""
        self.inp = inp
        self._thread_nodes = thread_nodes
        self.nodes: list[Node] = [Node(first_id, root_name, None, "root", None)]
        self._first = first_id
        self._children: dict[tuple[int, int], int] = {}  # (parent id, frame) -> node id
        self._threads: dict[int, int] = {}
        self._leaves: dict[tuple[int, int], int] = {}  # (thread, stack index) -> node id
        self.idle_id: int | None = None

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def node(self, node_id: int) -> Node:
        return self.nodes[node_id - self._first]

    def _add(self, name: str, frame: int | None, kind: str, parent: int) -> int:
        node_id = self._first + len(self.nodes)
        self.nodes.append(Node(node_id, name, frame, kind, parent))
        self.node(parent).children.append(node_id)
        return node_id

    def idle(self) -> int:
        if self.idle_id is None:
            self.idle_id = self._add("(idle)", None, "idle", self.root.id)
        return self.idle_id

    def thread(self, thread: int) -> int:
        if not self._thread_nodes:
            return self.root.id
        node_id = self._threads.get(thread)
        if node_id is None:
            node_id = self._threads[thread] = self._add(
                drawn(self.inp.threads[thread]), None, "thread", self.root.id
            )
        return node_id

    def leaf(self, thread: int, stack: int) -> int:
        """The node of a thread's timeline stack (created on first use)."""
        node_id = self._leaves.get((thread, stack))
        if node_id is not None:
            return node_id
        node_id = self.thread(thread)
        frames = self.inp.frames
        for frame in reversed(self.inp.timeline.stacks[stack]):
            child = self._children.get((node_id, frame))
            if child is None:
                child = self._children[(node_id, frame)] = self._add(
                    drawn(frames[frame].function), frame, "frame", node_id
                )
            node_id = child
        self._leaves[(thread, stack)] = node_id
        return node_id
