"""Profile tables built from decoded ``.bsprof`` entries (pure core, no I/O)."""

from rokuprof._lazy import lazy_names
from rokuprof.path_model import Delta, PathNode, PathStats, Totals
from rokuprof.profile.functions import FunctionStats, aggregate_functions
from rokuprof.profile.tables import ProfileTables

# The reader loads on first use: the native core's reader imports profile.tables, and the
# engines (imported by the reader) import the native core's reader.
__getattr__ = lazy_names(__name__, {"ProfileReader": "reader"})

__all__ = [
    "Delta",
    "FunctionStats",
    "PathNode",
    "PathStats",
    "ProfileReader",  # loaded on first use (__getattr__)
    "ProfileTables",
    "Totals",
    "aggregate_functions",
]
