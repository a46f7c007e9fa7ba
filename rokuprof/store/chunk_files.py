"""Chunk files of an offline conversion: an output directory made ready (an earlier
conversion's files replaced only when asked), and chunks written as they are made.

``rokuprof convert`` and the daemon's recovery write through :func:`write_chunks`: atomically,
in order, by one writer thread while the next chunks are made, with at most a few chunks
waiting for it (so memory holds a few chunks whatever the run's length).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from rokuprof.sentry.assemble import Chunk
from rokuprof.sentry.envelope import chunk_envelope
from rokuprof.store.files import write_atomic
from rokuprof.store.layout import CHUNK_SUFFIX, CHUNKS_DIR, chunk_name, is_chunk
from rokuprof.store.writable import output_dir_problem

#: Chunks made and not yet written: bounds memory, and lets fsync overlap the next chunk.
WRITES_IN_FLIGHT = 4
#: Where ``convert --envelopes`` writes a Sentry envelope per chunk.
ENVELOPES_DIR = "envelopes"


class OutputError(OSError):
    """The output cannot be prepared or written; the message names the file or directory (an
    ``OSError``: to a caller that retries on disk trouble, it is one)."""


def prepare_output(out: Path, subdirs: Sequence[str], force: bool) -> None:
    """Create ``out`` and its subdirectories and prove each writable, before any decoding;
    refuse to mix with an earlier conversion's chunks and envelopes unless ``force`` (then
    they are removed)."""
    directories = [out] + [out / sub for sub in subdirs]
    for directory in directories:
        if directory.exists() and not directory.is_dir():
            raise OutputError(f"{directory} exists and is not a directory")
    existing = [p for p in sorted((out / CHUNKS_DIR).glob("*")) if is_chunk(p.name)]
    existing += sorted((out / ENVELOPES_DIR).glob("*.envelope"))
    if existing and not force:
        raise OutputError(
            f"{out} already holds {len(existing)} converted file(s) "
            f"(e.g. {existing[0]}); use --force to replace them"
        )
    for directory in directories:
        if (problem := output_dir_problem(directory)) is not None:
            raise OutputError(problem)
    try:
        for path in existing:
            path.unlink()
    except OSError as exc:
        raise OutputError(f"cannot replace {exc.filename or out}: {exc.strerror or exc}") from exc


def conversion_paths(out: Path, envelopes: bool) -> Callable[[Chunk], list[tuple[Path, bytes]]]:
    """What ``convert`` writes for a chunk: ``out/chunks/NNNNNN.json`` (and with
    ``envelopes``, ``out/envelopes/NNNNNN.envelope``)."""

    def files(chunk: Chunk) -> list[tuple[Path, bytes]]:
        name = chunk_name(chunk.index)
        written = [(out / CHUNKS_DIR / name, chunk.data)]
        if envelopes:
            stem = name.removesuffix(CHUNK_SUFFIX)
            envelope = chunk_envelope(chunk, sent_at=time.time()).to_bytes()
            written.append((out / ENVELOPES_DIR / f"{stem}.envelope", envelope))
        return written

    return files


def write_chunks(
    chunks: Iterable[Chunk],
    files: Callable[[Chunk], list[tuple[Path, bytes]]],
    *,
    within: Path | None = None,
    after_each: Callable[[Chunk, Path], None] | None = None,
) -> list[Path]:
    """Write each chunk's files (``files(chunk)``: paths and bytes, the chunk file first)
    atomically as the chunks are made; the chunk files written, in order. ``after_each`` runs
    on this thread after a chunk's files are on disk and may raise to stop (what is queued is
    then dropped). :class:`OutputError` names a file that could not be written."""
    written: list[Path] = []

    def done(future: Future[Path], chunk: Chunk) -> None:
        path = future.result()
        written.append(path)
        if after_each is not None:
            after_each(chunk, path)

    with ThreadPoolExecutor(1, thread_name_prefix="rokuprof-chunk-writer") as writer:
        pending: deque[tuple[Future[Path], Chunk]] = deque()
        try:
            for chunk in chunks:
                pending.append((writer.submit(_write, files(chunk), within), chunk))
                while len(pending) > WRITES_IN_FLIGHT:
                    done(*pending.popleft())
            while pending:
                done(*pending.popleft())
        except BaseException as exc:
            for future, _ in pending:
                future.cancel()
            if isinstance(exc, OSError):
                why = exc.strerror or exc
                raise OutputError(f"cannot write {exc.filename}: {why}") from exc
            raise
    return written


def _write(files: list[tuple[Path, bytes]], within: Path | None) -> Path:
    """One chunk's files, atomically; an error names the file."""
    for path, data in files:
        try:
            write_atomic(path, data, within=within)
        except OSError as exc:
            exc.filename = exc.filename or str(path)
            raise
    return files[0][0]
