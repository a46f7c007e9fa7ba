"""The manifest as rokuprof rewrites it: the profiler's keys set, every other line untouched."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rokuprof.app.manifest import (
    MANIFEST_KEYS_DOC,
    ProfilerKeys,
    parse_manifest,
    profiled_manifest,
    profiler_settings,
)

ALL_KEYS = ProfilerKeys(mem=True, lines=True, sample_ratio=0.5, dest="local")
OURS = {key for key, _, _ in MANIFEST_KEYS_DOC}

BASE = "bsprof_enable=1\nbsprof_data_dest=network\nrun_as_process=1\n"


def test_parse_reads_keys_and_skips_the_rest() -> None:
    text = "\ufeff# a comment\ntitle = My App \r\n\nnot a key line\n  # indented=comment\nx=a=b\n"
    assert parse_manifest(text) == {"title": "My App", "x": "a=b"}


def test_parse_keeps_the_first_of_a_repeated_key() -> None:
    assert parse_manifest("a=1\na=2\n") == {"a": "1"}


def test_the_default_keys_are_appended_to_a_manifest_without_them() -> None:
    text = "title=Cafe\nmajor_version=1\n"
    assert profiled_manifest(text, ProfilerKeys()) == text + BASE


def test_an_existing_key_changes_in_place_and_later_copies_go() -> None:
    text = "title=Cafe\nbsprof_enable=0\n# keep\nbsprof_data_dest=local\nbsprof_enable = 0\nz=1\n"
    assert profiled_manifest(text, ProfilerKeys()) == (
        "title=Cafe\nbsprof_enable=1\n# keep\nbsprof_data_dest=network\nz=1\nrun_as_process=1\n"
    )


def test_crlf_and_bom_are_kept_and_appended_lines_follow_the_first_line() -> None:
    text = "\ufefftitle=Cafe\r\n# note\r\nbsprof_enable=0\r\n"
    assert profiled_manifest(text, ProfilerKeys()) == (
        "\ufefftitle=Cafe\r\n# note\r\nbsprof_enable=1\r\n"
        "bsprof_data_dest=network\r\nrun_as_process=1\r\n"
    )


def test_a_last_line_without_newline_gets_one_before_the_appended_keys() -> None:
    assert profiled_manifest("title=Cafe", ProfilerKeys()) == "title=Cafe\n" + BASE
    assert profiled_manifest("", ProfilerKeys()) == BASE


def test_a_commented_key_is_a_comment() -> None:
    text = "#bsprof_enable=1\n"
    assert profiled_manifest(text, ProfilerKeys()) == text + BASE


def test_optional_keys() -> None:
    out = profiled_manifest("title=Cafe\n", ALL_KEYS)
    assert out == (
        "title=Cafe\nbsprof_enable=1\nbsprof_data_dest=local\nrun_as_process=1\n"
        "bsprof_enable_mem=1\nbsprof_enable_lines=1\nrsg_version=1.2\nbsprof_sample_ratio=0.5\n"
    )


def test_options_left_off_leave_the_users_lines_alone() -> None:
    text = "bsprof_enable_mem=1\nbsprof_sample_ratio=0.1\n"
    assert profiled_manifest(text, ProfilerKeys()) == text + BASE


@pytest.mark.parametrize(
    ("have", "want"), [("1.1", "1.2"), ("1.2", "1.2"), ("1.3", "1.3"), ("2", "2"), ("x", "1.2")]
)
def test_lines_raise_rsg_version_to_1_2_never_lower(have: str, want: str) -> None:
    out = profiled_manifest(f"rsg_version={have}\n", ProfilerKeys(lines=True))
    assert parse_manifest(out)["rsg_version"] == want
    assert out.startswith(f"rsg_version={want}\n")


@pytest.mark.parametrize(("ratio", "text"), [(0.001, "0.001"), (1.0, "1.0"), (1, "1.0")])
def test_sample_ratio_is_written_as_a_decimal(ratio: float, text: str) -> None:
    assert profiler_settings(ProfilerKeys(sample_ratio=ratio))["bsprof_sample_ratio"] == text


@pytest.mark.parametrize("ratio", [0.0, 0.0009, 1.01, -1.0, math.nan, math.inf, True, "0.5"])
def test_a_sample_ratio_outside_0_001_to_1_is_refused(ratio: object) -> None:
    with pytest.raises(ValueError, match=r"sample ratio must be a number from 0\.001 to 1\.0"):
        ProfilerKeys(sample_ratio=ratio)  # type: ignore[arg-type]


def test_dest_is_network_or_local() -> None:
    with pytest.raises(ValueError, match="bsprof_data_dest must be network or local, not 'disk'"):
        ProfilerKeys(dest="disk")


def test_the_docs_table_names_every_key_that_can_be_set() -> None:
    assert set(profiler_settings(ALL_KEYS)) == OURS
    assert all(why for _, _, why in MANIFEST_KEYS_DOC)
    mem = next(why for key, _, why in MANIFEST_KEYS_DOC if key == "bsprof_enable_mem")
    assert "sample ratio 1.0" in mem


# -- properties ----------------------------------------------------------------------------------

_text = st.text(
    st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), max_size=12
)
_key = st.sampled_from([*sorted(OURS), "title", "major_version", "x", " bsprof_enable "]) | _text
_line = st.one_of(
    st.builds(lambda k, v: f"{k}={v}", _key, _text),
    st.builds(lambda t: "#" + t, _text),
    st.just(""),
    _text,
)
_ending = st.sampled_from(["\n", "\r\n"])
_keys = st.builds(
    ProfilerKeys,
    mem=st.booleans(),
    lines=st.booleans(),
    sample_ratio=st.none() | st.floats(0.001, 1.0),
    dest=st.sampled_from(["network", "local"]),
)


def _is_ours(line: str) -> bool:
    body = line.rstrip("\r\n")
    key = body.split("=", 1)[0].strip()
    return "=" in body and not body.lstrip().startswith("#") and key in OURS


@st.composite
def manifests(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.tuples(_line, _ending), max_size=12))
    text = "".join(line + ending for line, ending in lines)
    if lines and draw(st.booleans()):
        text = text.removesuffix(lines[-1][1])  # no newline at the end
    return ("\ufeff" if draw(st.booleans()) else "") + text


def _split(text: str) -> list[str]:
    """Lines with their endings, split on ``\\n`` only (as a manifest is)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


@given(manifests(), _keys)
def test_every_line_that_is_not_one_of_our_keys_survives_unchanged(text: str, keys) -> None:
    out = profiled_manifest(text, keys)
    assert out.startswith("\ufeff") == text.startswith("\ufeff")
    before = [line for line in _split(text.removeprefix("\ufeff")) if not _is_ours(line)]
    after = [line for line in _split(out.removeprefix("\ufeff")) if not _is_ours(line)]
    if before and not before[-1].endswith("\n"):  # the last line may have gained its newline
        lines = _split(text.removeprefix("\ufeff"))
        newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
        assert after[len(before) - 1] in (before[-1], before[-1] + newline)
        after[len(before) - 1] = before[-1]
    assert after == before
    settings = profiler_settings(keys, parse_manifest(text))
    parsed = parse_manifest(out)
    assert {key: parsed[key] for key in settings} == settings
    assert {k: v for k, v in parsed.items() if k not in OURS} == {
        k: v for k, v in parse_manifest(text).items() if k not in OURS
    }
    # each key set once, and setting them again changes nothing
    set_lines = [
        key
        for line in _split(out.removeprefix("\ufeff"))
        if _is_ours(line) and (key := line.split("=", 1)[0].strip()) in settings
    ]
    assert sorted(set_lines) == sorted(settings)
    assert profiled_manifest(out, keys) == out
