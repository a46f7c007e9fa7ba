"""Reading a file with a progress bar on a terminal (silent otherwise)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

READ_SIZE = 1 << 20
SHOW_FROM = 8 << 20  # files smaller than this read too fast to need a bar


def read_with_progress(
    path: Path, feed: Callable[[bytes], object], console: Console, what: str = "reading"
) -> int:
    """Feed the file's bytes to ``feed`` in pieces; return the number of bytes read."""
    total = path.stat().st_size
    show = console.is_terminal and total >= SHOW_FROM
    done = 0
    with (
        path.open("rb") as f,
        Progress(
            TextColumn(f"{what} {path.name}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            console=console,
            transient=True,
            disable=not show,
        ) as progress,
    ):
        task = progress.add_task(what, total=total)
        while data := f.read(READ_SIZE):
            feed(data)
            done += len(data)
            progress.update(task, completed=done)
    return done
