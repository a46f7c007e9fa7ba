"""How a workflow stops early: :class:`Stop` carries the one-line reason and the exit status
(:mod:`rokuprof.exit_status`); the CLI prints the line and exits with the status."""

from __future__ import annotations

from rokuprof.exit_status import USAGE


class Stop(Exception):
    """The workflow cannot go on: ``str(self)`` says why (device text already escaped by the
    printer), ``status`` is the command's exit status."""

    def __init__(self, message: object, status: int = USAGE) -> None:
        super().__init__(str(message))
        self.status = status
