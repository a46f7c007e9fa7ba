"""Moved to :mod:`rokuprof.views` (``live_view``, ``live_log``); kept only until the last
importer follows, then removed."""

from rokuprof.views.live_log import PlainLog, state_line
from rokuprof.views.live_view import LiveView

__all__ = ["LiveView", "PlainLog", "state_line"]
