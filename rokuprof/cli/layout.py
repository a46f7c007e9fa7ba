"""Decode a capture and lay out its run for the viewers' commands (export, report, diff), with
progress bars on a terminal for large inputs and nothing in a pipe."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from rokuprof.cli import exits
from rokuprof.cli.inputs import CaptureSource
from rokuprof.cli.progress import SHOW_FROM
from rokuprof.export import ExportInput, build_input
from rokuprof.sentry.chunk import ChunkSettings
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.views.text import printable


def load_capture(source: CaptureSource, err: Console, wall_unit: str) -> ExportInput:
    """The capture's tables and synthetic timeline; an unreadable input is exit status 2."""
    converter = OfflineConverter(ChunkSettings(wall_unit=wall_unit), total_bytes=source.size)
    try:
        source.read(converter.feed, err, what="decoding")
    except OSError as exc:
        exits.fail(f"cannot read {source.label}: {exc.strerror or exc}")
    show = err.is_terminal and converter.received >= SHOW_FROM
    with Progress(
        # plain text: a file name is neither markup ([]) nor a format template ({})
        TextColumn(f"laying out {_braces(printable(source.label))}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        console=err,
        transient=True,
        disable=not show,
    ) as progress:
        task = progress.add_task("layout", total=None)
        return build_input(
            converter, progress=lambda d, t: progress.update(task, completed=d, total=t)
        )


def _braces(label: str) -> str:
    """A label inside a ``str.format`` template (rich's progress columns) stays as it is."""
    return label.replace("{", "{{").replace("}", "}}")
