"""The atheris harness's check function, run on its seeds and a few odd inputs so it cannot rot
(atheris itself is not needed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
