"""What the tables of every engine answer: the read API the capture, the chunk builder, the
exporters and the views use.

:class:`~rokuprof.profile.tables.ProfileTables` (pure Python) and
:class:`~rokuprof._native.reader.NativeTables` (the C core) both satisfy :class:`TablesView`;
``tests/test_engine.py`` checks that every member exists on both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from rokuprof.bsprof.model import Limits
from rokuprof.path_model import Delta, PathNode, PathStats, Totals, WallDelta


@runtime_checkable
class TablesView(Protocol):
    """The tables a ``.bsprof`` stream adds up to (:mod:`rokuprof.profile.tables`; the path
    model in :mod:`rokuprof.path_model`)."""

    # -- per call path -----------------------------------------------------------------------

    def node(self, path_id: int) -> PathNode | None:
        """The path's own element (its leaf), ``None`` for an undefined path."""
        ...

    def stack(self, path_id: int) -> tuple[PathNode, ...]:
        """The path's elements, leaf first, folded to ``limits.max_stack_depth``."""
        ...

    def stats(self, path_id: int) -> PathStats:
        """The path's cumulative counters."""
        ...

    def line_number(self, path_id: int, line_offset: int) -> int:
        """The source line of a line offset in the function at the path's leaf."""
        ...

    # -- all paths ---------------------------------------------------------------------------

    def snapshot(self) -> dict[int, PathStats]:
        """Cumulative counters of every path that has any."""
        ...

    def take_delta(self, lines: bool = True) -> Delta:
        """What changed per path (and per line, with ``lines``) since the previous call."""
        ...

    def take_walls(self) -> WallDelta:
        """``take_delta(lines=False)`` as a :class:`WallDelta` (the same baseline advances)."""
        ...

    def totals(self) -> Totals:
        """Sums over every path and the table sizes."""
        ...

    def leak_sites(self) -> list[tuple[int, int, int]]:
        """``(path, count, bytes)`` of the live allocations, largest first."""
        ...

    # -- names -------------------------------------------------------------------------------

    def string(self, sid: int) -> str:
        """The string with that ID, a placeholder for an unknown one."""
        ...

    def module_name(self, module_id: int) -> str:
        """The module's name, a placeholder for an unknown one."""
        ...

    # -- read-only mappings ------------------------------------------------------------------

    @property
    def strings(self) -> Mapping[int, str]: ...

    @property
    def modules(self) -> Mapping[int, int]: ...

    @property
    def paths(self) -> Mapping[int, PathNode]: ...

    @property
    def counters(self) -> Mapping[int, tuple[int, ...]]: ...

    @property
    def line_cpu(self) -> Mapping[tuple[int, int], tuple[int, int]]: ...

    @property
    def line_alloc(self) -> Mapping[tuple[int, int], tuple[int, int]]: ...

    @property
    def heap(self) -> Mapping[int, tuple[int, int]]: ...

    # -- scalars -----------------------------------------------------------------------------

    @property
    def limits(self) -> Limits: ...

    @property
    def live_bytes(self) -> int: ...

    @property
    def dangling(self) -> int: ...

    @property
    def deep_paths(self) -> int: ...

    @property
    def replaced_allocations(self) -> int: ...

    @property
    def untracked_allocations(self) -> int: ...

    @property
    def untracked_line_cpu(self) -> int: ...

    @property
    def untracked_line_allocs(self) -> int: ...

    @property
    def saturated(self) -> int: ...

    @property
    def warnings(self) -> list[str]: ...
