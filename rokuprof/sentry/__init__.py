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

from rokuprof._lazy import lazy_names

# Each name loads its module on first use: importing one module below the package (the
# validator, say) does not load the chunk builder and the converter.
_HOMES = {
    "BuildReport": "build_report",
    "Chunk": "assemble",
    "ChunkBuilder": "chunk",
    "ChunkInvalid": "validate",
    "ChunkSettings": "settings",
    "ConversionSummary": "convert",
    "DEFAULT_WALL_UNIT": "sampling",
    "Dsn": "dsn",
    "DsnError": "dsn",
    "Envelope": "envelope",
    "EnvelopeError": "envelope",
    "EnvelopeItem": "envelope",
    "Flush": "chunk",
    "Leftover": "build_report",
    "OfflineConverter": "convert",
    "Problem": "validate",
    "SAMPLE_RATE_HZ": "sampling",
    "WALL_UNITS": "sampling",
    "check_chunk": "validate",
    "check_envelope": "envelope",
    "chunk_envelope": "envelope",
    "convert_bytes": "convert",
    "gzip_body": "envelope",
    "validate_chunk": "validate",
}
__getattr__ = lazy_names(__name__, _HOMES)

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
