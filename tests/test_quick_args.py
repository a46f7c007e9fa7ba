"""``quick_args`` binds a plain invocation exactly as typer would, and hands everything else back.

The property, over generated words for ``rokuprof inspect``: whenever ``bind`` accepts the words,
typer accepts them too and calls the command with the same values (defaults filled in); whenever
typer refuses them, ``bind`` has refused them first, so typer's own message is what the user sees.
The typer side is the real framework parsing the command's own declarations (a recorder wrapped
around the command, so nothing runs)."""

from __future__ import annotations

import functools
import inspect as pyinspect
from typing import Any

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rokuprof.cli import inspect_cmd
from rokuprof.cli.quick_args import bind

COMMAND = inspect_cmd.inspect

#: Words a user might type after ``rokuprof inspect``: files, options in every spelling, values
#: in and out of range, choices right and wrong, and words only typer understands.
WORDS = st.sampled_from(
    [
        "cap.bsprof", "-", "dir/", "--top", "-n", "--top=3", "--top=-1", "-n5", "0", "7",
        "-1", "x", "1e3", "٣", "--json", "-j", "--json=1", "--wall-unit", "--wall-unit=ms",
        "us", "ms", "ns", "sec", "--help", "-h", "--", "--bogus", "-jn", "",
    ]
)  # fmt: skip


def typer_call(args: list[str]) -> tuple[int, dict[str, Any]]:
    """typer's exit status and the values it would call the command with."""
    seen: dict[str, Any] = {}

    @functools.wraps(COMMAND)
    def record(**kwargs: Any) -> None:
        seen.update(kwargs)

    app = typer.Typer()
    app.command()(record)
    result = CliRunner().invoke(app, args)
    return result.exit_code, seen


def with_defaults(bound: dict[str, Any]) -> dict[str, Any]:
    defaults = {
        name: param.default
        for name, param in pyinspect.signature(COMMAND).parameters.items()
        if param.default is not pyinspect.Parameter.empty
    }
    return {**defaults, **bound}


def bound_or_none(args: list[str]) -> dict[str, Any] | None:
    try:
        return bind(COMMAND, args)
    except Exception as exc:  # only its refusal may escape
        assert type(exc).__name__ == "_NotPlain", exc
        return None


#: Mostly one file among a few option words, as people type them, sometimes anything at all.
INVOCATIONS = st.one_of(
    st.tuples(st.sampled_from(["cap.bsprof", "-"]), st.lists(WORDS, max_size=4), st.randoms()).map(
        lambda t: t[2].sample([t[0], *t[1]], len(t[1]) + 1)
    ),
    st.lists(WORDS, max_size=6),
)


@settings(max_examples=400)  # each example parses in memory: a few milliseconds
@given(INVOCATIONS)
def test_what_bind_accepts_typer_accepts_with_the_same_values(args):
    bound = bound_or_none(args)
    if bound is None:
        return
    code, seen = typer_call(args)
    assert code == 0, (args, bound)
    assert seen == with_defaults(bound)
    assert all(type(seen[k]) is type(v) for k, v in bound.items())


@pytest.mark.parametrize(
    "args",
    [
        ["cap.bsprof"],
        ["cap.bsprof", "--json"],
        ["-", "-n", "0", "--wall-unit", "ms"],
        ["--top=3", "cap.bsprof", "-j"],
        ["cap.bsprof", "--wall-unit=ns", "--top", "7"],
    ],
)
def test_the_everyday_invocations_are_plain(args):
    bound = bound_or_none(args)
    assert bound is not None, args
    assert typer_call(args) == (0, with_defaults(bound))


@pytest.mark.parametrize(
    "args",
    [
        [],  # the file is missing: typer says so
        ["cap.bsprof", "--top", "-1"],  # under the minimum
        ["cap.bsprof", "--wall-unit", "sec"],  # not a choice
        ["cap.bsprof", "--help"],
        ["cap.bsprof", "-jn", "3"],  # a short cluster
        ["cap.bsprof", "--json", "--json"],
        ["cap.bsprof", "other.bsprof"],
        ["--", "cap.bsprof"],
    ],
)
def test_anything_else_is_left_to_typer(args):
    assert bound_or_none(args) is None
