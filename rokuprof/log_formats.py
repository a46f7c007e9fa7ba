"""The daemon's log line formats: their one home, light enough for ``rokuprof daemon -h``."""

from __future__ import annotations

#: ``human``: lines for people; ``json``: one object a line, for a collector.
FORMATS = ("human", "json")
