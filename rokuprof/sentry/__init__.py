"""Sentry V2 profile chunks: builder, validation, envelopes, DSN (pure core, no I/O).

* :mod:`~rokuprof.sentry.chunk` - :class:`ChunkBuilder` (the live API; read its docstring),
  :class:`ChunkSettings`, :class:`Chunk`, :class:`BuildReport`.
* :mod:`~rokuprof.sentry.chunkjson` - a chunk's JSON written straight from its sample runs.
* :mod:`~rokuprof.sentry.convert` - :class:`OfflineConverter` for a whole ``.bsprof`` file.
* :mod:`~rokuprof.sentry.validate` - :func:`validate_chunk` with Relay's discard reasons.
* :mod:`~rokuprof.sentry.envelope` - :func:`chunk_envelope`, :class:`Envelope`, :func:`gzip_body`.
* :mod:`~rokuprof.sentry.dsn` - :class:`Dsn` (envelope URL, ``X-Sentry-Auth``).
* :mod:`~rokuprof.sentry.flamegraph` - the time Sentry computes from chunks.
"""

from rokuprof.sentry.assemble import Chunk
from rokuprof.sentry.build_report import BuildReport, Leftover
from rokuprof.sentry.chunk import ChunkBuilder, Flush
from rokuprof.sentry.convert import ConversionSummary, OfflineConverter, convert_bytes
from rokuprof.sentry.dsn import Dsn, DsnError
from rokuprof.sentry.envelope import (
    Envelope,
    EnvelopeError,
    EnvelopeItem,
    check_envelope,
    chunk_envelope,
    gzip_body,
)
from rokuprof.sentry.sampling import DEFAULT_WALL_UNIT, SAMPLE_RATE_HZ, WALL_UNITS
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.sentry.validate import ChunkInvalid, Problem, check_chunk, validate_chunk

__all__ = [
    "DEFAULT_WALL_UNIT",
    "SAMPLE_RATE_HZ",
    "WALL_UNITS",
    "BuildReport",
    "Chunk",
    "ChunkBuilder",
    "ChunkInvalid",
    "ChunkSettings",
    "ConversionSummary",
    "Dsn",
    "DsnError",
    "Envelope",
    "EnvelopeError",
    "EnvelopeItem",
    "Flush",
    "Leftover",
    "OfflineConverter",
    "Problem",
    "check_chunk",
    "check_envelope",
    "chunk_envelope",
    "convert_bytes",
    "gzip_body",
    "validate_chunk",
]
