"""Interning: each distinct item once, in first-seen order, known by its index (pure).

The exporters' tables of names and frames are interned this way: pprof's string table, the
frames of :class:`~rokuprof.export.model.ExportInput`, the report model's strings.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class Interner(Generic[T]):
    """:attr:`items` holds each distinct item once; :meth:`id` is an item's index there, the
    item added first when it is new. Given an existing list, it interns into it."""

    __slots__ = ("_ids", "items")

    def __init__(self, items: list[T] | None = None) -> None:
        self.items: list[T] = [] if items is None else items
        self._ids: dict[T, int] = {item: i for i, item in enumerate(self.items)}

    def id(self, item: T) -> int:
        i = self._ids.get(item)
        if i is None:
            i = self._ids[item] = len(self.items)
            self.items.append(item)
        return i
