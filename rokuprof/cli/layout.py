"""Decode a capture and lay out its run for the viewers' commands (export, report, diff), with
progress bars on a terminal for large inputs and nothing in a pipe; or, for the outputs that add
the tables up (pprof, folded, diff, the gate), decode it only."""

from __future__ import annotations

from rich.console import Console
from rich.progress import MofNCompleteColumn

from rokuprof.cli import exits
from rokuprof.cli.inputs import CaptureSource
from rokuprof.cli.progress import SHOW_FROM, progress_bar
from rokuprof.export import ExportInput, build_input
from rokuprof.export.aggregate import AggregateInput, AggregateReader
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.views.text import printable


def _read(source: CaptureSource, feed, err: Console) -> None:
    try:
        source.read(feed, err, what="decoding")
    except OSError as exc:
        exits.fail(f"cannot read {source.label}: {exc.strerror or exc}")


def load_aggregates(source: CaptureSource, err: Console, wall_unit: str) -> AggregateInput:
    """The capture's call paths and run facts, straight from its tables: nothing laid out (the
    same figures as :func:`load_capture`'s); an unreadable input is exit status 2."""
    from rokuprof.export.report.session import export_settings

    reading = AggregateReader(export_settings(source.session, wall_unit))
    _read(source, reading.feed, err)
    return reading.input()


def load_capture(source: CaptureSource, err: Console, wall_unit: str) -> ExportInput:
    """The capture's tables and synthetic timeline (a session's laid out as its end-of-run
    exports are: :func:`~rokuprof.export.report.session.export_settings`); an unreadable input
    is exit status 2."""
    from rokuprof.export.report.session import export_settings

    converter = OfflineConverter(
        export_settings(source.session, wall_unit), total_bytes=source.size
    )
    _read(source, converter.feed, err)
    show = err.is_terminal and converter.received >= SHOW_FROM
    with progress_bar(err, show, MofNCompleteColumn()) as progress:
        task = progress.add_task(f"laying out {printable(source.label)}", total=None)
        return build_input(
            converter, progress=lambda d, t: progress.update(task, completed=d, total=t)
        )
