"""``quick_args`` binds a plain invocation exactly as typer would, and hands everything else back.

The property, over generated words for ``rokuprof inspect``, ``report`` and ``convert``: whenever
``bind`` accepts the words, typer accepts them too and calls the command with the same values
(defaults filled in); whenever typer refuses them, ``bind`` has refused them first, so typer's
own message is what the user sees.
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

from rokuprof.cli import PLAIN_COMMANDS, convert_cmd, inspect_cmd, report_cmd
from rokuprof.cli.quick_args import bind

COMMAND = inspect_cmd.inspect
REPORT = report_cmd.report_command
CONVERT = convert_cmd.convert

#: Words a user might type after ``rokuprof inspect``: files, options in every spelling, values
#: in and out of range, choices right and wrong, and words only typer understands.
WORDS = st.sampled_from(
    [
        "cap.bsprof", "-", "dir/", "--top", "-n", "--top=3", "--top=-1", "-n5", "0", "7",
        "-1", "x", "1e3", "٣", "-n=3", "--json", "-j", "--json=1", "--wall-unit", "--wall-unit=ms",
        "us", "ms", "ns", "sec", "--help", "-h", "--", "--bogus", "-jn", "",
    ]
)  # fmt: skip


#: The same for ``rokuprof report``: its ``Path | None`` and ``str | None`` options, paths that
#: exist (``.``, ``/``) and do not, empty values typer reads as ``.``.
REPORT_WORDS = st.sampled_from(
    [
        "cap.bsprof", "-", "-o", "--out", "--output", "out.html", "--out=r.html", "-o-", ".",
        "/", "--open", "--open=1", "--source", "--source=", "app.zip", "--editor-url",
        "vscode://file/{path}:{line}", "--editor-url=", "--wall-unit", "ns", "us", "sec", "",
        "--help", "--bogus", "-o=x", "--",
    ]
)  # fmt: skip


def typer_call(args: list[str], command: Any = COMMAND) -> tuple[int, dict[str, Any]]:
    """typer's exit status and the values it would call the command with."""
    seen: dict[str, Any] = {}

    @functools.wraps(command)
    def record(**kwargs: Any) -> None:
        seen.update(kwargs)

    app = typer.Typer()
    app.command()(record)
    result = CliRunner().invoke(app, args)
    return result.exit_code, seen


def with_defaults(bound: dict[str, Any], command: Any = COMMAND) -> dict[str, Any]:
    defaults = {
        name: param.default
        for name, param in pyinspect.signature(command).parameters.items()
        if param.default is not pyinspect.Parameter.empty
    }
    return {**defaults, **bound}


def bound_or_none(args: list[str], command: Any = COMMAND) -> dict[str, Any] | None:
    try:
        return bind(command, args)
    except Exception as exc:  # only its refusal may escape
        assert type(exc).__name__ == "_NotPlain", exc
        return None


def agrees_with_typer(args: list[str], command: Any) -> None:
    """Whatever ``bind`` accepts, typer accepts too, calling ``command`` with the same values
    and types (defaults filled in)."""
    bound = bound_or_none(args, command)
    if bound is None:
        return
    code, seen = typer_call(args, command)
    assert code == 0, (args, bound)
    assert seen == with_defaults(bound, command)
    assert all(type(seen[k]) is type(v) for k, v in bound.items())


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
    agrees_with_typer(args, COMMAND)


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


REPORT_INVOCATIONS = st.one_of(
    st.tuples(
        st.sampled_from(["cap.bsprof", "-"]), st.lists(REPORT_WORDS, max_size=5), st.randoms()
    ).map(lambda t: t[2].sample([t[0], *t[1]], len(t[1]) + 1)),
    st.lists(REPORT_WORDS, max_size=6),
)


@settings(max_examples=300)
@given(REPORT_INVOCATIONS)
def test_report_what_bind_accepts_typer_accepts_with_the_same_values(args):
    agrees_with_typer(args, REPORT)


@pytest.mark.parametrize(
    "args",
    [
        ["cap.bsprof"],
        ["cap.bsprof", "-o", "out.html"],
        ["-", "--output", "-", "--wall-unit", "ns"],
        ["cap.bsprof", "-o", ".", "--open"],
        ["cap.bsprof", "--source", "app.zip", "--editor-url", "vscode://file/{path}:{line}"],
        ["--out=r.html", "cap.bsprof", "--source=/"],
    ],
)
def test_the_everyday_report_invocations_are_plain(args):
    bound = bound_or_none(args, REPORT)
    assert bound is not None, args
    assert typer_call(args, REPORT) == (0, with_defaults(bound, REPORT))


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["cap.bsprof", "-o"],  # the value is missing
        ["cap.bsprof", "--source="],  # typer reads an empty path as "."
        ["cap.bsprof", "--open=1"],
        ["cap.bsprof", "-o", "a", "--out", "b"],
        ["cap.bsprof", "--wall-unit", "sec"],
        ["cap.bsprof", "-h"],
    ],
)
def test_report_invocations_that_are_not_plain_are_left_to_typer(args):
    assert bound_or_none(args, REPORT) is None


def test_the_plain_commands_name_their_functions():
    from rokuprof.cli import COMMAND_MODULES

    modules = {"convert": convert_cmd, "inspect": inspect_cmd, "report": report_cmd}
    assert set(PLAIN_COMMANDS) == set(modules) <= set(COMMAND_MODULES)
    for name, function in PLAIN_COMMANDS.items():
        assert callable(getattr(modules[name], function))


#: Words after ``rokuprof convert``: paths (empty too), numbers as people and only typer write
#: them, the optional text options, choices in other cases.
CONVERT_WORDS = st.sampled_from(
    [
        "cap.bsprof", "-", "out", "", "--out", "-o", "--out=dir", "--to", "sentry", "SENTRY",
        "--envelopes", "--release", "app@1", "--environment", "--environment=qa",
        "--wall-unit", "ms", "--chunk-seconds", "--chunk-seconds=30", "10", "2.5", "1e1",
        "inf", "0", "-3", "61", "--force", "--json", "-j", "--help", "--bogus", "--",
    ]
)  # fmt: skip
CONVERT_INVOCATIONS = st.one_of(
    st.tuples(st.lists(CONVERT_WORDS, max_size=5), st.randoms()).map(
        lambda t: t[1].sample(["cap.bsprof", "-o", "out", *t[0]], len(t[0]) + 3)
    ),
    st.lists(CONVERT_WORDS, max_size=7),
)


@settings(max_examples=400)
@given(CONVERT_INVOCATIONS)
def test_what_bind_accepts_for_convert_typer_accepts_with_the_same_values(args):
    """Paths, decimal numbers within bounds and ``X | None`` options bound as typer binds
    them (the settings' own checks, such as the chunk length, run inside the command)."""
    agrees_with_typer(args, CONVERT)


@pytest.mark.parametrize(
    "args",
    [
        ["cap.bsprof", "--out", "dir"],
        ["cap.bsprof", "-o", "dir", "--chunk-seconds", "2.5", "--release", "app@1"],
        ["-", "--out=dir", "--wall-unit", "ms", "--envelopes", "--force", "--json"],
    ],
)
def test_the_everyday_conversions_are_plain(args):
    bound = bound_or_none(args, CONVERT)
    assert bound is not None, args
    assert typer_call(args, CONVERT) == (0, with_defaults(bound, CONVERT))


@pytest.mark.parametrize(
    "args",
    [
        ["cap.bsprof"],  # --out is required
        ["cap.bsprof", "-o", ""],  # an empty path
        ["cap.bsprof", "-o", "d", "--chunk-seconds", "1e1"],  # typer's spelling of a number
        ["cap.bsprof", "-o", "d", "--to", "SENTRY"],  # a choice in another case
    ],
)
def test_anything_else_for_convert_is_left_to_typer(args):
    assert bound_or_none(args, CONVERT) is None
