"""Profile tables built from decoded ``.bsprof`` entries (pure core, no I/O)."""

from rokuprof.profile.functions import FunctionStats, aggregate_functions
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.tables import Delta, PathNode, PathStats, ProfileTables, Totals

__all__ = [
    "Delta",
    "FunctionStats",
    "PathNode",
    "PathStats",
    "ProfileReader",
    "ProfileTables",
    "Totals",
    "aggregate_functions",
]
