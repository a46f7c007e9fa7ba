"""The atheris harness's check function, run on its seeds, a few odd inputs and generated worst
cases (deep chains, busy modules, many paths) so it cannot rot (atheris itself is not needed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.bsprof.model import Limits
from rokuprof.simulator import worst_cases

HARNESS = Path(__file__).resolve().parent.parent / "fuzz" / "fuzz_decoder.py"


def _load():
    spec = importlib.util.spec_from_file_location("fuzz_decoder", HARNESS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fuzz = _load()


@pytest.mark.parametrize("seed", fuzz.seed_inputs())
def test_seeds_pass_the_check(seed):
    fuzz.check(seed)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00",
        b"\x01",
        b"\x03\x00",
        b"\x07\xff\xff",
        b"\x78" + b"\x80" * 40,
        b"bsprof\x00\x00",
    ],
)
def test_odd_inputs_pass_the_check(data):
    fuzz.check(data)


def test_split_input_layout():
    stream, cuts, limits = fuzz.split_input(bytes([0b0001_0101, 0, 255]) + b"\x08a\x00")
    assert stream == fuzz.HEADERS[0] + b"\x08a\x00"
    assert cuts == [0, len(stream)]
    assert limits is fuzz.SMALL_LIMITS


def test_check_catches_a_disagreement(monkeypatch):
    """The check is not vacuous: a decoder that drops an entry is caught."""
    real = fuzz.Decoder

    class Lossy(real):
        def feed(self, data):
            return super().feed(data)[1:]

    monkeypatch.setattr(fuzz, "Decoder", Lossy)
    with pytest.raises(AssertionError):
        fuzz.check(fuzz.seed_inputs()[1])


@given(st.binary(max_size=200))
def test_random_inputs_pass_the_check(data):
    fuzz.check(data)


def test_generated_input_layout():
    data = bytes([fuzz.GENERATED | 1 << 3, 9]) + (99).to_bytes(2, "big") + bytes([128])
    stream, cuts, limits = fuzz.derive(data)
    assert stream == worst_cases.deep_chain(100, 3.0, 20_000)
    assert cuts == [(len(stream) + 1) // 2]
    assert limits == Limits(max_stack_depth=10)
    data = bytes([fuzz.GENERATED | 0b101, 40]) + (3).to_bytes(2, "big") + b"\x80\x00\x01"
    stream, cuts, limits = fuzz.derive(data)
    clean = worst_cases.busy_modules(4, 10.0, 3)
    assert len(stream) == len(clean) and stream != clean  # one byte XORed in the middle
    assert stream[len(clean) // 2] == clean[len(clean) // 2] ^ 1
    assert limits.max_modules == fuzz.SMALL_LIMITS.max_modules and limits.max_stack_depth == 9


@pytest.mark.parametrize("kind", range(4))
@pytest.mark.parametrize("depth_limit", [0, 5, 127])
def test_each_generator_passes_the_check(kind, depth_limit):
    """Deep chains (folded at 1, 6 and 128 frames), busy modules, many paths: the stacks are
    folded alike on both cores and the tables read what was built."""
    fuzz.check(bytes([fuzz.GENERATED | kind, depth_limit]) + (149).to_bytes(2, "big"))


def test_generated_seeds_give_native_seed_bodies():
    bodies = fuzz.native_seed_inputs()[-len(fuzz.generated_seed_inputs()) :]
    assert all(len(body) > 100 for body in bodies)


def test_check_catches_an_unfolded_stack(monkeypatch):
    """The stack check is not vacuous: tables that do not fold a deep chain are caught."""
    from rokuprof.profile import table_reads as tables  # where the pure stack() folds

    monkeypatch.setattr(tables, "fold_stack", lambda nodes, limit: tuple(nodes))
    data = bytes([fuzz.GENERATED, 7]) + (19).to_bytes(2, "big")
    with pytest.raises(AssertionError, match="frames, limit 8"):
        fuzz.check(data)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 127),
    st.integers(0, 255),
    st.integers(0, 60),
    st.binary(max_size=30),
)
def test_random_generated_inputs_pass_the_check(control, depth_limit, size, tail):
    """Small generated worst cases, cut and corrupted at random."""
    fuzz.check(bytes([fuzz.GENERATED | control, depth_limit]) + size.to_bytes(2, "big") + tail)
