"""Plain data types of the ``.bsprof`` format: header, footer, entry kinds, limits.

Body entries travel as plain tuples whose first item is the entry type, because the decoder
produces millions of them; the field order is fixed here and nowhere else::

    (STRING, string_id, text)
    (MODULE, module_id, name_string_id)
    (PATH,   path_id, caller_id, module_id, line_offset, file_string_id, line, function_string_id)
    (MEMORY, path_id, operation, line_offset, address, size)
    (CPU,    path_id, line_offset, cpu_self, wall_self)
    (CALLS,  path_id, count)

``module_id`` is 0 for a chained path (it belongs to the module of its root) and ``caller_id`` is
0 for a root. ``line_offset`` is 0 when the header's line flag is off. ``size`` is 0 for frees.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

MAGIC = b"bsprof\x00\x00"

#: The major format version this code was written for. Any other major is still read, with a
#: warning (the real version numbers of shipped files are not public).
SUPPORTED_MAJOR = 1

# Entry types (the low three bits of an entry tag).
STRING = 0
MODULE = 1
PATH = 2
MEMORY = 3
CPU = 4
CALLS = 5

# Memory operations (bits 4..3 of a memory-operation tag).
ALLOC = 0
FREE = 1
FREE_REALLOC = 2

ENTRY_NAMES = {
    STRING: "string",
    MODULE: "module",
    PATH: "path",
    MEMORY: "memory",
    CPU: "cpu",
    CALLS: "calls",
}

UINT32_MAX = 0xFFFFFFFF

Entry = tuple  # one body entry, laid out as described in the module docstring


@dataclass(frozen=True, slots=True)
class Header:
    """The stream header. ``header_size`` counts bytes from the start of the stream."""

    major: int
    minor: int
    patch: int
    header_size: int
    requested_sample_ratio: float
    actual_sample_ratio: float
    line_data: bool
    memory_ops: bool
    start_ms: int
    target_name: str
    supplemental: str
    target_version: str
    vendor: str
    model: str
    firmware: str

    @property
    def version(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Footer:
    """The stream footer: the run end timestamp, and how many unknown bytes followed it."""

    end_ms: int
    trailing_bytes: int = 0

    def to_json(self) -> dict[str, object]:
        return {"end_ms": self.end_ms, "trailing_bytes": self.trailing_bytes}


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what a broken or hostile stream can make us hold in memory.

    They bound how *many* strings, modules and paths a stream may define, never how large an ID
    is: every ID from 1 to 2**32 - 1 is valid (the tables map IDs to dense slots)."""

    max_string_bytes: int = 64 * 1024
    max_header_size: int = 64 * 1024
    max_strings: int = 1_000_000
    max_string_table_chars: int = 64 * 1024 * 1024
    max_modules: int = 100_000
    max_paths: int = 1_000_000
    max_live_allocations: int = 5_000_000
    max_line_keys: int = 2_000_000  # distinct (path, line offset) pairs with line-level CPU
    # Frames a call stack shows in every output: a deeper path keeps its leaf-most
    # max_stack_depth - 1 frames, and one marked frame stands for the rest (the paths
    # themselves are kept whole, as parent pointers, however deep).
    max_stack_depth: int = 128
