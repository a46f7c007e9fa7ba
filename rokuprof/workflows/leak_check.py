"""Leaks by iteration of a session (``rokuprof inspect SESSION --leaks``, and after a
``profile`` run): its capture's memory operations and its scenario's iteration marks, judged by
:mod:`rokuprof.verdict.leaks`, said one line a finding (device names escaped)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.bounded_read import read_capped
from rokuprof.export.model import ExportInput
from rokuprof.export.report.session import MAX_RECORD_BYTES, load_session_capture
from rokuprof.store.layout import RECORD_FILE
from rokuprof.verdict.leaks import IterationGroup, LeakParams, PathName, Series, leak_groups
from rokuprof.views.text import printable

NO_ITERATIONS = (
    "no iterations: the session has no iteration marks (a scenario's iterations step makes "
    "them: docs/commands.md)"
)
NO_MEMORY = "no verdict: the capture has no memory operations (profile with --mem)"


DEFAULT_PARAMS = LeakParams()


class LeakCheckError(Exception):
    """The session's record cannot be read (its capture's errors are ``OSError``)."""


@dataclass
class LeakReport:
    """A session's iteration groups judged; ``notes`` say why there is nothing to judge."""

    session: Path
    groups: list[IterationGroup]
    memory_ops: bool
    notes: list[str] = field(default_factory=list)

    @property
    def leaks(self) -> list[Series]:
        """The call paths found leaking, every group's."""
        return [s for g in self.groups for s in g.leaks]

    def lines(self) -> list[str]:
        """One line a finding (each group's, then the notes), printable on a terminal."""
        lines = [line for g in self.groups for line in g.lines()] + self.notes
        return [printable(line) for line in lines]

    def to_json(self) -> dict[str, object]:
        return {
            "session": str(self.session),
            "memory_ops": self.memory_ops,
            "groups": [g.to_json() for g in self.groups],
            "leaks": len(self.leaks),
            "notes": list(self.notes),
        }


def session_marks(session_dir: Path) -> list[dict[str, object]]:
    """``session.json``'s ``marks`` (empty without them); ``LeakCheckError`` when the record
    cannot be read or is not JSON."""
    path = Path(session_dir) / RECORD_FILE
    data = read_capped(
        path,
        MAX_RECORD_BYTES,
        unreadable=lambda why: LeakCheckError(f"{path}: cannot read: {why}"),
        too_big=lambda: LeakCheckError(f"{path}: larger than {MAX_RECORD_BYTES >> 20} MiB"),
    )
    try:
        record = json.loads(data)
    except (ValueError, RecursionError):
        raise LeakCheckError(f"{path}: not JSON") from None
    marks = record.get("marks") if isinstance(record, dict) else None
    return [m for m in marks if isinstance(m, dict)] if isinstance(marks, list) else []


def path_names(inp: ExportInput) -> dict[int, PathName]:
    """Each call path of the export named by its leaf function and file, and its caller."""
    frames = inp.frames
    names: dict[int, PathName] = {}
    for path in inp.paths:
        if not path.frames:
            continue
        leaf = frames[path.frames[0]]
        caller = frames[path.frames[1]].function if len(path.frames) > 1 else None
        names[path.id] = PathName(leaf.function, leaf.file, caller)
    return names


def leak_report(
    session_dir: Path,
    params: LeakParams = DEFAULT_PARAMS,
    *,
    inp: ExportInput | None = None,
) -> LeakReport:
    """The leak verdicts of a session directory: its marks, and its capture's memory
    operations (``inp``: the capture already decoded and laid out, as ``profile`` has it after
    its report; else read from the session). ``LeakCheckError`` for an unreadable record,
    ``OSError`` for an unreadable capture."""
    session_dir = Path(session_dir)
    marks = session_marks(session_dir)
    if inp is None:
        inp = load_session_capture(session_dir)
    report = LeakReport(session_dir, [], inp.run.memory_ops)
    timeline = inp.timeline
    if timeline.origin is None or not inp.run.memory_ops:
        report.notes.append(NO_MEMORY)
        return report
    names = path_names(inp)
    retained = {path.id: path.live_bytes for path in inp.paths}  # by allocating path, at the end
    report.groups = leak_groups(
        timeline.memory, timeline.origin, timeline.hz, marks, names.get, params, retained
    )
    if not report.groups:
        report.notes.append(NO_ITERATIONS)
    return report
