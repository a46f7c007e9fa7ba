"""atheris harness for the ``.bsprof`` decoder (see fuzz/README.md).

Each fuzz input is turned into a stream and a way to split it (:func:`split_input`). The check
feeds the stream to the :class:`~rokuprof.bsprof.decoder.Decoder` whole and in the input-derived
pieces, and compares both runs with each other and with the construct reference parser. When the
native core is built, it decodes the same pieces (whole and split, entries recorded) and must
agree with the pure decoder, and its tables (allocations per line included) with the pure
tables. Any exception from a decoder or any disagreement is a finding.

    python fuzz/fuzz_decoder.py -max_total_time=120 fuzz/corpus    # fuzz (needs atheris)
    python fuzz/fuzz_decoder.py crash-1234abcd                     # replay one input
    python fuzz/fuzz_decoder.py --make-corpus fuzz/corpus          # write seed inputs
    python fuzz/fuzz_decoder.py --make-native-corpus DIR           # seeds for fuzz_native.c
"""

from __future__ import annotations

import struct
import sys
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

try:
    import atheris
except ImportError:  # the check still runs (tests import it) without atheris
    atheris = None


def _import_core():
    from rokuprof.bsprof import errors, grammar, reference
    from rokuprof.bsprof.decoder import Decoder
    from rokuprof.bsprof.model import Header, Limits
    from rokuprof.profile.reader import PythonProfileReader

    try:
        from rokuprof._native.reader import NativeDecoder, NativeProfileReader
    except ImportError:  # the native core is not built: fuzz the pure path only
        NativeDecoder = NativeProfileReader = None
    native = (NativeDecoder, NativeProfileReader, PythonProfileReader)
    return errors, grammar, reference, Decoder, Header, Limits, native


if atheris is not None and __name__ == "__main__":
    with atheris.instrument_imports(include=["rokuprof"]):
        errors, grammar, reference, Decoder, Header, Limits, NATIVE = _import_core()
else:
    errors, grammar, reference, Decoder, Header, Limits, NATIVE = _import_core()
NativeDecoder, NativeProfileReader, PythonProfileReader = NATIVE

DOCUMENTED = (
    errors.BadMagic,
    errors.BadHeader,
    errors.CorruptVarint,
    errors.InvalidValue,
    errors.UnknownEntryType,
    errors.LimitExceeded,
)

#: Limits small enough that the fuzzer can reach every one of them.
SMALL_LIMITS = Limits(
    max_string_bytes=40,
    max_header_size=300,
    max_strings=20,
    max_modules=4,
    max_paths=30,
    max_string_table_chars=200,
    max_live_allocations=8,
    max_line_keys=8,
)


def _header(line_data: bool) -> bytes:
    return grammar.build_header(
        Header(1, 0, 0, 0, 1.0, 1.0, line_data, True, 0, "fuzz", "", "1", "Roku", "X", "1")
    )


HEADERS = (_header(False), _header(True))


def split_input(data: bytes) -> tuple[bytes, list[int], object]:
    """Turn a fuzz input into ``(stream, cut offsets, limits)``.

    Byte 0: bits 1..0 not 00 = prepend a valid header (bit 1 set: with the line flag on),
    bit 2 = use :data:`SMALL_LIMITS`, bits 6..3 = number of cuts. Then one byte per cut (a
    position scaled over the stream). The rest is the stream.
    """
    if not data:
        return b"", [], None
    control = data[0]
    n_cuts = (control >> 3) & 0x0F
    raw_cuts = data[1 : 1 + n_cuts]
    stream = data[1 + n_cuts :]
    if control & 0b11:
        stream = HEADERS[(control >> 1) & 1] + stream
    limits = SMALL_LIMITS if control & 0b100 else None
    cuts = sorted(c * (len(stream) + 1) // 256 for c in raw_cuts)
    return stream, cuts, limits


def _run(pieces: list[bytes], limits, native: bool = False) -> tuple:
    decoder = NativeDecoder(limits, record=True) if native else Decoder(limits)
    entries = []
    for piece in pieces:
        if native:
            count = decoder.feed(piece)
            got = decoder.take_entries()
            assert count == len(got), "feed() count differs from the entries recorded"
            entries.extend(got)
        else:
            entries.extend(decoder.feed(piece))
    decoder.close()
    error = decoder.error
    if error is not None:
        assert isinstance(error, DOCUMENTED), repr(error)
        assert error.offset >= 0 and error.message
    assert decoder.entry_count == len(entries)
    return (
        entries,
        _header_key(decoder.header),
        decoder.footer,
        decoder.warnings,
        None if error is None else (type(error), error.offset, error.message),
        decoder.status,
        decoder.offset,
        decoder.ended,
    )


def _header_key(header) -> tuple | None:
    if header is None:
        return None
    fields = header.to_json()
    for name in ("requested_sample_ratio", "actual_sample_ratio"):
        fields[name] = struct.pack("<f", fields[name])  # NaN-safe comparison
    return tuple(sorted(fields.items()))


def check(data: bytes) -> None:
    """Decode the input-derived stream whole, split, and with the reference; raise
    ``AssertionError`` on any disagreement (and let any unexpected exception through)."""
    stream, cuts, limits = split_input(data)
    points = [0, *cuts, len(stream)]
    pieces = [stream[a:b] for a, b in pairwise(points)]
    whole = _run([stream], limits)
    split = _run(pieces, limits)
    assert whole == split, (whole, split)
    ref = reference.parse(stream, limits)
    ref_error = (
        None if ref.error is None else (type(ref.error), ref.error.offset, ref.error.message)
    )
    assert whole[0] == ref.entries, "entries differ from the reference"
    assert whole[1] == _header_key(ref.header), "header differs from the reference"
    assert whole[2] == ref.footer, "footer differs from the reference"
    assert whole[3] == ref.warnings, "warnings differ from the reference"
    assert whole[4] == ref_error, (whole[4], ref_error)
    assert whole[7] == ref.ended, "end marker seen differently"
    if NativeDecoder is not None:
        assert _run([stream], limits, native=True) == whole, "native core differs (whole)"
        assert _run(pieces, limits, native=True) == whole, "native core differs (split)"
        _check_tables(pieces, limits)


def _check_tables(pieces: list[bytes], limits) -> None:
    """The native tables answer like the pure tables, with a delta after every piece."""
    pure, native = PythonProfileReader(limits), NativeProfileReader(limits)
    for piece in pieces:
        pure.feed(piece)
        native.feed(piece)
        assert native.tables.take_delta() == pure.tables.take_delta(), "deltas differ"
    for name in ("totals", "snapshot", "leak_sites"):
        assert getattr(native.tables, name)() == getattr(pure.tables, name)(), name
    assert native.warnings == pure.warnings, "warnings differ"
    assert dict(native.tables.heap) == dict(pure.tables.heap), "heaps differ"
    for name in ("line_cpu", "line_alloc"):  # in first-seen order
        assert list(getattr(native.tables, name).items()) == list(
            getattr(pure.tables, name).items()
        ), name
    assert native.tables.untracked_line_allocs == pure.tables.untracked_line_allocs


def seed_inputs() -> list[bytes]:
    """A few valid and broken inputs to start the fuzzer from (and for the pytest)."""
    body = [
        (0, 1, "main"),
        (0, 2, "pkg:/source/main.brs"),
        (1, 1, 1),
        (2, 1, 0, 1, 0, 2, 10, 1),
        (2, 2, 1, 0, 3, 2, 20, 1),
        (4, 2, 1, 300, 900),
        (5, 2, 4),
        (3, 2, 0, 2, 4096, 64),
        (3, 2, 2, 1, 4096, 0),
        (3, 2, 0, 1, 8192, 128),
        (3, 2, 1, 1, 1234, 0),
    ]
    seeds = []
    for line_data in (False, True):
        header = HEADERS[line_data]
        entries = b"".join(grammar.build_entry(e, line_data) for e in body)
        flag = 0b10 if line_data else 0b01
        seeds += [
            bytes([flag | 3 << 3, 40, 128, 200]) + entries + b"\x00\x05xyz",
            bytes([0]) + header + entries + b"\x00\x05",
            bytes([flag | 0b100]) + entries + b"\x06",
            bytes([flag]) + entries[:-3],
            bytes([flag | 1 << 3, 7]) + entries + b"\x80" * 12,
        ]
    # Small limits filled: allocations at more lines than SMALL_LIMITS keeps (the allocation-line
    # table and the heap fill on the same entry), then line CPU; its warnings come in that order.
    many = [(3, 2, 0, lo, 0x1000 + 16 * lo, lo) for lo in range(2, 14)]
    many += [(4, 2, lo, 1, 1) for lo in range(1, 11)]
    entries = b"".join(grammar.build_entry(e, True) for e in body + many)
    seeds.append(bytes([0b110 | 2 << 3, 90, 180]) + entries + b"\x00")
    return seeds


def native_seed_inputs() -> list[bytes]:
    """Seeds for fuzz/fuzz_native.c (the C core alone): the bodies of :func:`seed_inputs`
    behind its control byte (bit 0 line flag, bit 1 small limits, bits 5..2 cuts)."""
    seeds = []
    for seed in seed_inputs():
        stream, _, limits = split_input(seed)
        line_data = bool(seed[0] & 0b10)
        body = stream[len(HEADERS[line_data]) :] if stream.startswith(HEADERS[line_data]) else b""
        control = int(line_data) | (2 if limits else 0) | 2 << 2
        seeds.append(bytes([control, 60, 190]) + body)
    return seeds


def main(argv: list[str]) -> None:
    if len(argv) > 2 and argv[1] in ("--make-corpus", "--make-native-corpus"):
        corpus = Path(argv[2])
        corpus.mkdir(parents=True, exist_ok=True)
        seeds = seed_inputs() if argv[1] == "--make-corpus" else native_seed_inputs()
        for i, seed in enumerate(seeds):
            (corpus / f"seed-{i:02d}").write_bytes(seed)
        return
    if atheris is None:
        sys.exit("atheris is not installed: pip install atheris")
    atheris.Setup(argv, check)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
