"""What ``session.json`` says about one run, and the statuses a run ends in (pure: no I/O; the
writer of the session directory is :mod:`rokuprof.capture.session`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from rokuprof import __version__
from rokuprof.store.layout import SessionStatus
from rokuprof.timefmt import utc_iso_or_none as iso

if TYPE_CHECKING:
    from rokuprof.bsprof.model import Header

SESSION_FORMAT = 1


# The statuses by their old names (``SessionStatus`` lives with the layout, below ``capture/``).
STREAMING = SessionStatus.STREAMING
COMPLETE = SessionStatus.COMPLETE
TRUNCATED = SessionStatus.TRUNCATED
INTERRUPTED = SessionStatus.INTERRUPTED
FAILED = SessionStatus.FAILED
STATUSES = tuple(SessionStatus)


@dataclass
class SessionRecord:
    """What ``session.json`` says about one run."""

    session: str
    profiler_id: str
    device: dict[str, object]
    start: float  # Unix seconds: when the stream connected
    status: SessionStatus = SessionStatus.STREAMING
    end: float | None = None
    app: dict[str, object] = field(default_factory=dict)
    profiler: dict[str, object] = field(default_factory=dict)
    bytes: int = 0
    entries: int = 0
    chunks: int = 0
    end_reason: str = ""
    errors: list[dict[str, object]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    chunk_report: dict[str, object] = field(default_factory=dict)
    exports: dict[str, object] = field(default_factory=dict)  # format -> file, bytes or error
    environment: str | None = None
    release: str | None = None
    vitals: dict[str, object] | None = None  # the app's CPU and memory (capture.vitals)
    marks: list[dict[str, object]] = field(default_factory=list)  # named moments, bounded
    marks_dropped: int = 0  # marks past the bound: counted, not kept
    trace: dict[str, object] | None = None  # the app trace's file and how it ended (trace_tap)

    def add_error(self, kind: str, message: str, **extra: object) -> None:
        self.errors.append({"kind": kind, "message": message, **extra})

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["start"] = iso(self.start)
        data["end"] = iso(self.end)
        data["duration_seconds"] = round(self.end - self.start, 3) if self.end is not None else None
        return {"format": SESSION_FORMAT, "rokuprof": __version__, **data}


def header_facts(header: Header) -> dict[str, object]:
    """What a stream's header says about the profiler, as ``session.json``'s ``profiler``."""
    return {
        "format_version": header.version,
        "line_data": header.line_data,
        "memory_ops": header.memory_ops,
        "requested_sample_ratio": header.requested_sample_ratio,
        "actual_sample_ratio": header.actual_sample_ratio,
        "start_ms": header.start_ms,
        "vendor": header.vendor,
        "model": header.model,
        "firmware": header.firmware,
        "supplemental": header.supplemental,
    }
