"""The ``inspect`` report of a decoded stream, as plain data (the CLI renders or prints it)."""

from __future__ import annotations

from rokuprof.profile.functions import aggregate_functions
from rokuprof.profile.reader import ProfileReader

HEADER_KEYS = (
    "major",
    "minor",
    "patch",
    "header_size",
    "requested_sample_ratio",
    "actual_sample_ratio",
    "line_data",
    "memory_ops",
    "start_ms",
    "target_name",
    "supplemental",
    "target_version",
    "vendor",
    "model",
    "firmware",
)


def leak_report(reader: ProfileReader, top: int) -> list[dict[str, object]]:
    """The allocating call paths of live allocations, largest first."""
    tables = reader.tables
    sites = []
    for pid, count, size in tables.leak_sites()[:top]:
        stack = tables.stack(pid)
        sites.append(
            {
                "path": pid,
                "count": count,
                "bytes": size,
                "module": tables.module_name(stack[0].module) if stack else None,
                "stack": [tables.string(node.function_id) for node in stack],
                "file": tables.string(stack[0].file_id) if stack else None,
            }
        )
    return sites


def inspect_report(reader: ProfileReader, top: int | None = None) -> dict[str, object]:
    """Everything ``rokuprof inspect`` shows; ``top`` limits functions and leak sites."""
    header = reader.header
    footer = reader.footer
    totals = reader.tables.totals()
    functions = aggregate_functions(reader.tables)
    if top is not None:
        functions = functions[:top]
    error = reader.error
    problem = reader.problem()
    return {
        "header": {k: getattr(header, k) for k in HEADER_KEYS} if header else None,
        "footer": {"end_ms": footer.end_ms, "trailing_bytes": footer.trailing_bytes}
        if footer
        else None,
        "complete": reader.complete,
        "status": reader.status,
        "error": error.to_json() if error else None,
        "problem": problem,
        "warnings": reader.warnings,
        "bytes": reader.decoder.received,
        "decoded_bytes": reader.decoder.offset,
        "totals": {
            "entries": reader.entry_count,
            "strings": totals.strings,
            "modules": totals.modules,
            "paths": totals.paths,
            "cpu": totals.cpu,
            "wall": totals.wall,
            "calls": totals.calls,
            "alloc_count": totals.alloc_count,
            "alloc_bytes": totals.alloc_bytes,
            "free_count": totals.free_count,
            "free_realloc_count": totals.free_realloc_count,
            "freed_bytes": totals.freed_bytes,
            "unknown_frees": totals.unknown_frees,
            "live_bytes": totals.live_bytes,
            "live_count": totals.live_count,
            "dangling_references": reader.tables.dangling,
        },
        "functions": [f.to_json() for f in functions],
        "leak_sites": leak_report(reader, top if top is not None else 20),
    }
