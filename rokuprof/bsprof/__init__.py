"""The ``.bsprof`` format: grammar, incremental decoder, errors (pure core, no I/O)."""

from rokuprof.bsprof.decoder import Decoder
from rokuprof.bsprof.errors import (
    BadHeader,
    BadMagic,
    BsprofError,
    CorruptVarint,
    DecoderStateError,
    InvalidValue,
    LimitExceeded,
    UnknownEntryType,
)
from rokuprof.bsprof.model import Entry, Footer, Header, Limits

__all__ = [
    "BadHeader",
    "BadMagic",
    "BsprofError",
    "CorruptVarint",
    "Decoder",
    "DecoderStateError",
    "Entry",
    "Footer",
    "Header",
    "InvalidValue",
    "LimitExceeded",
    "Limits",
    "UnknownEntryType",
]
