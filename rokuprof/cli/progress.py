"""Progress bars of long commands: on a terminal for large inputs, nothing in a pipe."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, ProgressColumn

READ_SIZE = 1 << 20
SHOW_FROM = 8 << 20  # inputs smaller than this are read too fast to need a bar


def progress_bar(console: Console, show: bool, *columns: ProgressColumn) -> Progress:
    """A bar that leaves no trace when done, labelled by its task's description shown as plain
    text (a file name is neither a format template nor markup), then ``columns``."""
    from rich.progress import BarColumn, Progress, TextColumn  # loaded by a bar's first use

    return Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        *columns,
        console=console,
        transient=True,
        disable=not show,
    )
