"""atheris harness for the ``.bsprof`` decoder (see fuzz/README.md).

Each fuzz input is turned into a stream and a way to split it (:func:`derive`): either the input
itself is the stream (:func:`split_input`), or, with bit 7 of its first byte set, the input
parameterises one of the worst cases of :mod:`rokuprof.simulator.worst_cases` (a deep chain,
many busy modules, many paths: :func:`generated_input`), which it may also corrupt. The check
feeds the stream to the :class:`~rokuprof.bsprof.decoder.Decoder` whole and in the input-derived
pieces, and compares both runs with each other and with the construct reference parser. The
tables' call stacks must be folded to ``Limits.max_stack_depth`` frames (each frame the caller of
the one before, the marked frame last). When the native core is built, it decodes the same
pieces (whole and split, entries recorded) and must agree with the pure decoder, and its tables
(allocations per line and stacks included) with the pure tables. Any exception from a decoder or
any disagreement is a finding.

    python fuzz/fuzz_decoder.py -max_total_time=120 fuzz/corpus    # fuzz (needs atheris)
    python fuzz/fuzz_decoder.py crash-1234abcd                     # replay one input
    python fuzz/fuzz_decoder.py --make-corpus fuzz/corpus          # write seed inputs
    python fuzz/fuzz_decoder.py --make-native-corpus DIR           # seeds for fuzz_native.c
"""

from __future__ import annotations

import dataclasses
import struct
import sys
from functools import partial
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
    from rokuprof.path_model import FOLDED_PATH
    from rokuprof.profile.engine import PURE, native
    from rokuprof.profile.reader import ProfileReader
    from rokuprof.simulator import worst_cases

    PythonProfileReader = partial(ProfileReader, engine=PURE)
    NativeDecoder = NativeProfileReader = None
    if native() is not None:  # else the native core is not built: fuzz the pure path only
        from rokuprof._native.reader import NativeDecoder

        NativeProfileReader = partial(ProfileReader, engine=native())
    native = (NativeDecoder, NativeProfileReader, PythonProfileReader)
    return errors, grammar, reference, Decoder, Header, Limits, native, FOLDED_PATH, worst_cases


if atheris is not None and __name__ == "__main__":
    with atheris.instrument_imports(include=["rokuprof"]):
        CORE = _import_core()
else:
    CORE = _import_core()
errors, grammar, reference, Decoder, Header, Limits, NATIVE, FOLDED_PATH, worst_cases = CORE
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
    max_stack_depth=6,
)

#: The worst cases a generated input builds (bits 1..0 of its first byte, 3 = a deep chain
#: too), each as ``(name, build(size), largest size)``: small enough for a few executions a
#: second with the construct reference, large enough to pass every limit of SMALL_LIMITS and
#: the default stack depth (128).
GENERATORS = (
    ("deep chain", lambda n: worst_cases.deep_chain(n, n * 0.02 + 1, 20_000), 300),
    ("busy modules", lambda n: worst_cases.busy_modules(n, 10.0, 3), 40),
    ("many paths", lambda n: worst_cases.many_paths(n, n * 0.02, 4), 300),
)
GENERATED = 0x80  # bit 7 of byte 0: a generated input


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


def generated_input(data: bytes) -> tuple[bytes, list[int], object]:
    """Turn a generated-mode fuzz input (bit 7 of byte 0 set) into ``(stream, cut offsets,
    limits)``, the stream one of :data:`GENERATORS`.

    Byte 0: bits 1..0 = the generator (3: the deep chain), bit 2 = the limits of
    :data:`SMALL_LIMITS`, bits 6..3 = number of cuts. Byte 1: ``max_stack_depth`` = 1 + byte
    % 32. Bytes 2..3: the size (big-endian; 1 + value % the generator's largest size). Then one
    byte per cut (a position scaled over the stream), then corruptions, three bytes each: a
    position (big-endian, scaled over the stream) and a byte XORed into the stream there.
    """
    control = data[0]
    n_cuts = (control >> 3) & 0x0F
    params = data[1:4].ljust(3, b"\x00")
    _, build, largest = GENERATORS[(control & 0b11) % len(GENERATORS)]
    size = 1 + int.from_bytes(params[1:3], "big") % largest
    stream = bytearray(build(size))
    raw_cuts = data[4 : 4 + n_cuts]
    rest = data[4 + n_cuts :]
    for i in range(0, len(rest) - 2, 3):
        at = int.from_bytes(rest[i : i + 2], "big") * len(stream) // 65536
        stream[at] ^= rest[i + 2]
    base = SMALL_LIMITS if control & 0b100 else Limits()
    limits = dataclasses.replace(base, max_stack_depth=1 + params[0] % 32)
    cuts = sorted(c * (len(stream) + 1) // 256 for c in raw_cuts)
    return bytes(stream), cuts, limits


def derive(data: bytes) -> tuple[bytes, list[int], object]:
    """``(stream, cut offsets, limits)`` of any fuzz input (see :func:`split_input` and
    :func:`generated_input`)."""
    if data and data[0] & GENERATED:
        return generated_input(data)
    return split_input(data)


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
    stream, cuts, limits = derive(data)
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
    readers = _check_tables(pieces, limits)
    if data and data[0] & GENERATED:
        _check_generated(data, readers, whole)


def _check_stacks(pure, native) -> None:
    """Every defined path's stack is folded to ``max_stack_depth`` frames, each frame the
    caller of the one before it, the marked frame (only) last; both cores give the same."""
    limit = pure.limits.max_stack_depth
    for pid in pure.paths:
        stack = pure.stack(pid)
        assert len(stack) <= limit, f"path {pid}: {len(stack)} frames, limit {limit}"
        for i, node in enumerate(stack):
            if node.id == FOLDED_PATH:
                assert i == len(stack) - 1 == limit - 1, f"path {pid}: marked frame at {i}"
            elif i + 1 < len(stack) and stack[i + 1].id != FOLDED_PATH:
                assert stack[i + 1].id == node.caller, f"path {pid}: frame {i + 1} not the caller"
        if native is not None:
            assert native.stack(pid) == stack, f"path {pid}: stacks differ"
    if native is not None:
        assert native.deep_paths == pure.deep_paths, "deep_paths differ"


def _check_generated(data: bytes, readers, whole: tuple) -> None:
    """An uncorrupted worst case with room for it in the limits reads as built: complete,
    every path and module defined, the stacks of a deep chain folded where the limit says."""
    if len(data) > 4 + ((data[0] >> 3) & 0x0F) + 2 or data[0] & 0b100:
        return  # corrupted, or SMALL_LIMITS (errors are checked against the reference)
    name, _, largest = GENERATORS[(data[0] & 0b11) % len(GENERATORS)]
    size = 1 + int.from_bytes(data[1:4].ljust(3, b"\x00")[1:3], "big") % largest
    assert whole[5] == "complete" and whole[4] is None, (name, whole[4])
    for reader in readers:
        tables = reader.tables
        limit = tables.limits.max_stack_depth
        if name == "deep chain":
            assert tables.deep_paths == max(0, size - limit), (tables.deep_paths, size, limit)
            assert len(tables.stack(size)) == min(size, limit)
            assert (tables.stack(size)[-1].id == FOLDED_PATH) == (size > limit)
        elif name == "busy modules":
            assert len(tables.modules) == size and len(tables.paths) == size
        else:
            assert len(tables.paths) == size and tables.deep_paths == 0


def _check_tables(pieces: list[bytes], limits) -> list:
    """The native tables answer like the pure tables, with a delta after every piece; the
    stacks are folded (:func:`_check_stacks`). Returns the readers (pure first)."""
    pure = PythonProfileReader(limits)
    if NativeProfileReader is None:
        for piece in pieces:
            pure.feed(piece)
        _check_stacks(pure.tables, None)
        return [pure]
    native = NativeProfileReader(limits)
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
    _check_stacks(pure.tables, native.tables)
    return [pure, native]


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
    # A worst-case stream as it is, over SMALL_LIMITS: its stacks fold at 6 frames.
    seeds.append(bytes([0b100]) + worst_cases.deep_chain(25, 1.5, 20_000))
    seeds += generated_seed_inputs()
    return seeds


def generated_seed_inputs() -> list[bytes]:
    """Generated-mode inputs (:func:`generated_input`): each worst case at the default limits
    and the stack depth it names, with cuts, over SMALL_LIMITS, and corrupted."""
    size = lambda n: n.to_bytes(2, "big")  # noqa: E731 (the size field, 1 + value)
    return [
        bytes([GENERATED | 0, 127]) + size(199),  # a deep chain of 200, folded at 128 frames
        bytes([GENERATED | 0 | 2 << 3, 7]) + size(49) + bytes([30, 200]),  # at 8, in 3 pieces
        bytes([GENERATED | 3, 0]) + size(9),  # depth 10, every stack one marked frame
        bytes([GENERATED | 1, 5]) + size(11),  # 12 busy modules
        bytes([GENERATED | 1 | 0b100 | 1 << 3, 5]) + size(11) + bytes([100]),  # over 4 modules
        bytes([GENERATED | 2, 31]) + size(99),  # 100 paths over 4 modules
        bytes([GENERATED | 2 | 0b100, 31]) + size(99),  # over 30 paths
        bytes([GENERATED | 0, 3]) + size(59) + bytes([0x40, 0, 0x80, 0xC0, 0, 0x7F]),  # corrupt
    ]


def native_seed_inputs() -> list[bytes]:
    """Seeds for fuzz/fuzz_native.c (the C core alone): the bodies of :func:`seed_inputs`
    behind its control byte (bit 0 line flag, bit 1 small limits, bits 5..2 cuts)."""
    seeds = []
    for seed in seed_inputs():
        stream, _, _ = derive(seed)
        line_data = not seed[0] & GENERATED and bool(seed[0] & 0b10)
        if stream.startswith(HEADERS[line_data]):
            body = stream[len(HEADERS[line_data]) :]
        else:  # a worst case: its own header
            try:
                body = stream[reference.parse_header(stream, Limits())[1] :]
            except (reference.Truncated, errors.BsprofError):
                body = b""
        control = int(line_data) | (2 if seed[0] & 0b100 else 0) | 2 << 2
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
