"""What a reader's tables answer, gathered for comparing two engines (the native core against the
pure tables, the pure engine's one-pass body against the decoder's entries applied), and a
stream that keeps a heap busy."""

from __future__ import annotations

import random

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import ALLOC, CPU, FREE, FREE_REALLOC, MEMORY, Footer, Header, Limits

#: Limits small enough that generated streams run into every one of them.
TIGHT = Limits(
    max_string_bytes=6,
    max_header_size=120,
    max_strings=5,
    max_modules=2,
    max_paths=6,
    max_string_table_chars=30,
    max_live_allocations=3,
    max_line_keys=4,
)


def walk(paths, path_id: int) -> tuple:
    """A call path's stack from the path table alone (the model of ``stack()``)."""
    nodes, seen = [], set()
    while path_id and path_id not in seen and path_id in paths:
        nodes.append(paths[path_id])
        seen.add(path_id)
        path_id = paths[path_id].caller
    return tuple(nodes)


def table_view(tables, ids) -> dict[str, object]:
    """Everything the tables answer, order included where the pure tables define one."""
    return {
        "snapshot": list(tables.snapshot().items()),
        "counters": list(tables.counters.items()),
        "totals": tables.totals(),
        "line_cpu": list(tables.line_cpu.items()),
        "heap": dict(tables.heap),
        "leak_sites": tables.leak_sites(),
        "line_alloc": list(tables.line_alloc.items()),
        "warnings": tables.warnings,
        "scalars": (
            tables.live_bytes,
            tables.dangling,
            tables.replaced_allocations,
            tables.untracked_allocations,
            tables.untracked_line_cpu,
            tables.untracked_line_allocs,
            tables.saturated,
        ),
        "strings": list(tables.strings.items()),
        "modules": list(tables.modules.items()),
        "paths": list(tables.paths.items()),
        "per_id": [
            (
                walk(tables.paths, i),
                tables.stats(i),
                tables.string(i),
                tables.module_name(i),
                tables.line_number(i, 3),
            )
            for i in ids
        ],
    }


def ids_of(pure) -> list[int]:
    """Every ID the stream mentions, plus a few it does not."""
    ids = {0, 1, 2, 2**32 - 1}
    ids.update(pure.tables.strings, pure.tables.modules, pure.tables.paths)
    ids.update(p for p, _ in pure.tables.line_cpu)
    ids.update(p for p, _ in pure.tables.line_alloc)
    return sorted(ids)


def heap_stream(seed: int, operations: int, addresses: int, line_data: bool) -> bytes:
    """Many memory operations on a pool of addresses (0 included), from a few paths, with CPU
    on many lines: grows and shrinks the heap and line tables well past their first size."""
    rng = random.Random(seed)
    header = Header(1, 0, 0, 0, 1.0, 1.0, line_data, True, 0, "heap", "", "1", "R", "X", "1")
    entries = [(0, 1, "f"), (1, 1, 1), (2, 7, 0, 1, 0, 1, 10, 1), (2, 2**32 - 1, 7, 0, 2, 1, 5, 1)]
    pool = [0, 2**32 - 1] + [rng.randrange(2**32) for _ in range(addresses)]
    for _ in range(operations):
        path = rng.choice((7, 2**32 - 1, 99))  # 99 is never defined
        lo = rng.randrange(1, 50) if line_data else 0
        roll = rng.random()
        address = rng.choice(pool)
        if roll < 0.5:
            entries.append((MEMORY, path, ALLOC, lo, address, rng.randrange(1 << 20)))
        elif roll < 0.8:
            entries.append((MEMORY, path, FREE, lo, address, 0))
        elif roll < 0.9:
            entries.append((MEMORY, path, FREE_REALLOC, lo, address, 0))
            entries.append((MEMORY, path, ALLOC, lo, rng.choice(pool), rng.randrange(4096)))
        else:
            entries.append((CPU, path, lo, rng.randrange(1000), rng.randrange(1000)))
    body = encode_entries(entries, line_data)
    return build_header(header) + body + END_MARKER + build_footer(Footer(1))
