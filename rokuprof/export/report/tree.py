"""The report's call tree, merged by function: node columns in flat number arrays.

A capture can have as many nodes as its call paths times their folded depth (a 10,000-deep chain
of distinct functions: 1.27 million), so a node costs no Python object: its parent and function
are 8-byte array items, its first child is found through two more arrays, and only a node's
second and later children go in a dict. Pure.
"""

from __future__ import annotations

from array import array


class NodeColumns:
    """Nodes numbered in creation order; the first ``roots`` are the thread roots."""

    def __init__(self, roots: int) -> None:
        self.parent = array("q", [-1] * roots)
        self.fn = array("q", [-1] * roots)
        self._first_fn = array("q", [-1] * roots)
        self._first_child = array("q", [-1] * roots)
        self._more: dict[int, int] = {}  # parent << 32 | function -> child

    def __len__(self) -> int:
        return len(self.parent)

    def child(self, node: int, fn: int) -> int:
        """The child of ``node`` for function ``fn`` (created on first use)."""
        first = self._first_fn[node]
        if first == fn:
            return self._first_child[node]
        key = node << 32 | fn
        if first >= 0:
            found = self._more.get(key)
            if found is not None:
                return found
        child = len(self.parent)
        self.parent.append(node)
        self.fn.append(fn)
        self._first_fn.append(-1)
        self._first_child.append(-1)
        if first < 0:
            self._first_fn[node], self._first_child[node] = fn, child
        else:
            self._more[key] = child
        return child
