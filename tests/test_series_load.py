"""Which sessions make a series (``--baseline DIR``, ``diff DIR DIR``): found by their archive,
in path order, at most three levels down, never through a link or into a dot directory; a
directory with none is a one-line error, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from rokuprof.workflows.errors import Stop
from rokuprof.workflows.series_load import MAX_DEPTH, is_session, series_paths, session_dirs


def session(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "capture.bsprof").write_bytes(b"")
    return path


def test_a_series_directory_lists_its_sessions_in_path_order(tmp_path: Path) -> None:
    series = tmp_path / "series-20261129T050000.000Z-abcd"
    made = [
        session(series / "YN2" / "20261129T050002.000Z-b"),
        session(series / "YN1" / "20261129T050001.000Z-a"),
        session(series / "YN1" / "20261129T050003.000Z-c"),
    ]
    (series / "series.json").write_text("{}")
    assert session_dirs(series) == sorted(made)
    assert series_paths(str(series)) == [str(p) for p in sorted(made)]


def test_one_capture_or_one_session_is_a_series_of_one(tmp_path: Path) -> None:
    one = session(tmp_path / "s")
    assert is_session(one) and series_paths(str(one)) == [str(one)]
    assert series_paths(str(one / "capture.bsprof")) == [str(one / "capture.bsprof")]
    assert series_paths("-") == ["-"]


def test_links_dot_directories_and_depth_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "out"
    kept = session(root / "dev" / "s1")
    elsewhere = session(tmp_path / "elsewhere" / "s")
    (root / "linked").symlink_to(elsewhere.parent, target_is_directory=True)
    session(root / ".dev-deleting" / "s2")
    deep = root
    for level in range(MAX_DEPTH + 1):
        deep = deep / f"d{level}"
    session(deep)
    assert session_dirs(root) == [kept]


def test_a_directory_without_sessions_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(Stop) as stopped:
        series_paths(str(tmp_path / "empty"))
    message = str(stopped.value)
    assert "is a directory without a capture.bsprof" in message and "\n" not in message
