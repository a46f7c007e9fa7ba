"""Small streams that cost a careless reader far more than their size (issue 18's worst cases).

Each function returns a whole ``.bsprof`` stream (header, body, end marker, footer) built with
the fast encoder, so tests, ``benchmarks/worst_cases.py`` and the fuzz harness's generators can
feed a reader what a buggy app or anyone on the LAN could send it:

* :func:`deep_chain`: one call chain ``depth`` paths deep (path *i* called from *i - 1*), every
  path with some CPU: about 12 bytes a level;
* :func:`busy_modules`: ``modules`` executable modules (each a Sentry thread), all busy for the
  whole run;
* :func:`many_paths`: ``paths`` root paths, each with a little CPU, spread over a few modules;
* :func:`long_names`: a call chain whose functions have ``names`` distinct names of ``length``
  characters (the longest a string may be), each defined at many lines: a reader that writes a
  name once per frame, node or event pays the name's length each time.

Pure and deterministic: the same arguments give the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import (
    CALLS,
    CPU,
    MODULE,
    PATH,
    STRING,
    SUPPORTED_MAJOR,
    Entry,
    Footer,
    Header,
)

START_MS = 1_795_273_445_000
FILE, FUNCTION, MODULE_NAME = 1, 2, 3  # string IDs every worst case defines
_FIRST_FREE_STRING = 16


def header(start_ms: int = START_MS, name: str = "Worst Case") -> Header:
    """The header every worst case uses (no line data, no memory operations)."""
    return Header(
        major=SUPPORTED_MAJOR,
        minor=0,
        patch=0,
        header_size=0,
        requested_sample_ratio=1.0,
        actual_sample_ratio=1.0,
        line_data=False,
        memory_ops=False,
        start_ms=start_ms,
        target_name=name,
        supplemental="",
        target_version="1.0.0",
        vendor="Roku",
        model="4800X",
        firmware="12.5.0",
    )


def stream(entries: Iterator[Entry] | list[Entry], seconds: float, name: str) -> bytes:
    """A whole stream of ``entries`` for a run of ``seconds``."""
    h = header(name=name)
    body = encode_entries(entries, line_data=False)
    footer = Footer(START_MS + round(seconds * 1000))
    return b"".join((build_header(h), body, END_MARKER, build_footer(footer)))


def _names() -> list[Entry]:
    return [
        (STRING, FILE, "pkg:/source/deep.brs"),
        (STRING, FUNCTION, "recurse"),
        (STRING, MODULE_NAME, "main"),
    ]


def deep_chain(depth: int, seconds: float = 10.0, wall_us: int | None = None) -> bytes:
    """One chain of ``depth`` paths, each charged ``wall_us`` of wall time (default: the run's
    wall time spread evenly, at least 1 us) and one call."""
    wall = wall_us if wall_us is not None else max(1, int(seconds * 1e6 / depth))

    def entries() -> Iterator[Entry]:
        yield from _names()
        yield (MODULE, 1, MODULE_NAME)
        for i in range(1, depth + 1):
            if i == 1:
                yield (PATH, 1, 0, 1, 0, FILE, 1, FUNCTION)
            else:
                yield (PATH, i, i - 1, 0, 0, FILE, 1 + i % 1000, FUNCTION)
            yield (CPU, i, 0, wall // 2, wall)
            yield (CALLS, i, 1)

    return stream(entries(), seconds, f"deep chain {depth}")


def busy_modules(modules: int, seconds: float = 10.0, flushes: int = 10) -> bytes:
    """``modules`` modules, each with one root path that is busy all run long: its wall time is
    sent in ``flushes`` equal parts, as a device flushes periodically."""
    per_flush = int(seconds * 1e6 / flushes)

    def entries() -> Iterator[Entry]:
        yield from _names()
        for m in range(1, modules + 1):
            name = _FIRST_FREE_STRING + m
            yield (STRING, name, f"task{m}")
            yield (MODULE, m, name)
            yield (PATH, m, 0, m, 0, FILE, m, FUNCTION)
        for _ in range(flushes):
            for m in range(1, modules + 1):
                yield (CPU, m, 0, per_flush // 2, per_flush)
                yield (CALLS, m, 1)

    return stream(entries(), seconds, f"busy modules {modules}")


def many_paths(
    paths: int, seconds: float = 10.0, modules: int = 4, run_seconds: float | None = None
) -> bytes:
    """``paths`` root paths over ``modules`` modules, each with one call and an equal share of
    ``seconds`` of wall time (at least 1 us); the run lasts ``run_seconds`` (default:
    ``seconds``)."""
    wall = max(1, int(seconds * 1e6 / paths))

    def entries() -> Iterator[Entry]:
        yield from _names()
        for m in range(1, modules + 1):
            yield (MODULE, m, MODULE_NAME)
        for p in range(1, paths + 1):
            yield (PATH, p, 0, 1 + p % modules, 0, FILE, p % 100_000 + 1, FUNCTION)
            yield (CPU, p, 0, wall // 2, wall)
            yield (CALLS, p, 1)

    run = seconds if run_seconds is None else run_seconds
    return stream(entries(), run, f"many paths {paths}")


def long_names(
    names: int = 500, length: int = 64 * 1024, depth: int = 2_000, seconds: float | None = None
) -> bytes:
    """One chain of ``depth`` paths (as :func:`deep_chain`, 20 ms of wall time each unless the
    run is shorter) whose path *i* runs function ``i % names`` defined at line *i*: ``names``
    distinct function names, each ``length`` characters long (the decoder's longest string is
    64 KiB), so about ``names * length`` bytes of strings and ``depth`` distinct frames."""
    run = seconds if seconds is not None else depth * 0.02 + 1
    wall = max(1, min(20_000, int(run * 1e6 / depth)))

    def entries() -> Iterator[Entry]:
        yield from _names()
        yield (MODULE, 1, MODULE_NAME)
        for n in range(names):
            text = f"fn{n:05d}_"
            yield (STRING, _FIRST_FREE_STRING + n, (text * (length // len(text) + 1))[:length])
        for i in range(1, depth + 1):
            name = _FIRST_FREE_STRING + i % names
            yield (PATH, i, i - 1, 1 if i == 1 else 0, 0, FILE, i, name)
            yield (CPU, i, 0, wall // 2, wall)
            yield (CALLS, i, 1)

    return stream(entries(), run, f"long names {names}x{length}")
