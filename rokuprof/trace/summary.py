"""What ``rokuprof inspect TRACE`` reports: the trace's own state (bytes, packets, losses,
problems, its span in time) and Roku's analyses (:mod:`rokuprof.trace.analysis`), as plain JSON
values (pure)."""

from __future__ import annotations

from rokuprof.trace.analysis import analyse
from rokuprof.trace.model import Trace


def trace_report(trace: Trace, top: int = 50) -> dict:
    """The whole ``inspect --json`` object of a closed trace."""
    first, last = trace.first_ts, trace.last_ts
    offset = trace.wall_offset_ns()
    complete = trace.error is None and not trace.trailing_bytes
    return {
        "kind": "perfetto-trace",
        "complete": complete,
        "error": trace.error,
        "problems": list(trace.problems),
        "bytes": trace.bytes_read,
        "packets": trace.packets,
        "slices": len(trace.slices),
        "flows": len(trace.flows),
        "lost_chunks": trace.lost_chunks,
        "loss_marks": trace.loss_marks,
        "skipped_packets": trace.skipped_packets,
        "unmatched_ends": trace.unmatched_ends,
        "span_ms": None if first is None or last is None else round((last - first) / 1e6, 3),
        "start_unix_ms": (
            None if first is None or offset is None else round((first + offset) / 1e6, 3)
        ),
        **analyse(trace, top),
    }
