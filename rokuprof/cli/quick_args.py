"""A command's plain invocations run without the CLI framework's value coercion.

typer coerces every non-flag value through a pydantic ``TypeAdapter`` it builds when the command
runs: importing pydantic and building the adapters costs more CPU than ``rokuprof inspect`` of a
small capture does. ``run_plain`` binds the words of a plain invocation to the command
function's own declarations (its ``Annotated[..., typer.Argument/Option(...)]`` parameters: the
one owner of names, defaults and bounds) and calls it; anything it does not recognise as plain
(help, a value out of range or not among the choices, an unknown or repeated option, a
declaration it does not handle) returns ``False`` untouched, and typer parses it as always, with
its own messages. The exit statuses are typer's: ``typer.Exit``'s code, 130 on an interrupt, 1
on a closed pipe.
"""

from __future__ import annotations

import errno
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from typer.models import ArgumentInfo, OptionInfo

#: Declarations a plain invocation may not carry (each changes how a value is read or checked).
_NOT_PLAIN = (
    "envvar", "callback", "parser", "click_type", "is_eager", "clamp", "count", "prompt",
    "default_factory", "exists", "writable", "resolve_path", "allow_dash", "path_type",
    "formats",
)  # fmt: skip
#: A number as a plain invocation writes it (anything else, such as ``1e3`` or ``inf``, is typer's).
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]+)?")


class _NotPlain(Exception):
    """The invocation, or the command, is not one this module binds."""


def run_plain(command: Callable[..., Any], args: Sequence[str]) -> bool:
    """Run ``command`` on ``args`` and exit if they are a plain invocation; else ``False``."""
    try:
        kwargs = bind(command, args)
    except _NotPlain:
        return False
    try:
        command(**kwargs)
    except typer.Exit as stop:
        sys.exit(stop.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        sys.exit(1)
    sys.exit(0)


def bind(command: Callable[..., Any], args: Sequence[str]) -> dict[str, Any]:
    """``command``'s keyword arguments for ``args``; ``_NotPlain`` when they are not plain."""
    positional, options = _declarations(command)
    values: dict[str, Any] = {}
    words = iter(args)
    for word in words:
        if word == "-" or not word.startswith("-"):
            if not positional:
                raise _NotPlain(word)
            name, kind, info = positional.pop(0)
            values[name] = _value(kind, info, word)
            continue
        flag, equals, text = word.partition("=")
        if flag not in options:
            raise _NotPlain(word)  # help, `--`, a short cluster, an unknown option
        name, kind, info = options[flag]
        if name in values:
            raise _NotPlain(word)
        if kind is bool:
            if equals:
                raise _NotPlain(word)
            values[name] = True
            continue
        if not equals:
            text = next(words, None)
            if text is None:
                raise _NotPlain(word)
        values[name] = _value(kind, info, text)
    for name, param in inspect.signature(command).parameters.items():
        if name not in values and param.default is inspect.Parameter.empty:
            raise _NotPlain(f"{name} is required")  # an argument or an option without default
    return values


def _declarations(
    command: Callable[..., Any],
) -> tuple[list[tuple[str, Any, Any]], dict[str, tuple[str, Any, Any]]]:
    """(the arguments in order as (parameter, type, ArgumentInfo), option word →
    (parameter, type, OptionInfo))."""
    hints = typing.get_type_hints(command, include_extras=True)
    positional: list[tuple[str, Any, Any]] = []
    options: dict[str, tuple[str, Any, Any]] = {}
    for param in inspect.signature(command).parameters.values():
        hint = hints.get(param.name)
        if typing.get_origin(hint) is not typing.Annotated:
            raise _NotPlain(param.name)
        kind, *extras = typing.get_args(hint)
        infos = [x for x in extras if isinstance(x, (ArgumentInfo, OptionInfo))]
        kind = _optional(kind)
        if len(infos) != 1 or not _plain_type(kind):
            raise _NotPlain(param.name)
        info = infos[0]
        if any(getattr(info, attr, None) for attr in _NOT_PLAIN):
            raise _NotPlain(param.name)
        if not all(getattr(info, attr, True) for attr in ("file_okay", "dir_okay", "readable")):
            raise _NotPlain(param.name)
        if isinstance(info, ArgumentInfo):
            positional.append((param.name, kind, info))
            continue
        words = tuple(info.param_decls or ())
        if isinstance(info.default, str):  # inside Annotated, typer reads the first as a name
            words = (info.default, *words)
        words = words or (f"--{param.name.replace('_', '-')}",)
        for word in words:
            if "/" in word or not word.startswith("-"):
                raise _NotPlain(word)  # a --yes/--no pair or a renamed parameter
            options[word] = (param.name, kind, info)
    return positional, options


def _optional(kind: Any) -> Any:
    """``X`` for ``X | None`` (an option whose default is ``None``) other than a flag; else
    ``kind`` itself."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        inner = [x for x in typing.get_args(kind) if x is not type(None)]
        if len(inner) == 1 and len(typing.get_args(kind)) == 2 and inner[0] is not bool:
            return inner[0]
    return kind


def _plain_type(kind: Any) -> bool:
    return kind in (str, int, bool, float, Path) or (
        isinstance(kind, type) and issubclass(kind, Enum)
    )


def _value(kind: Any, info: Any, text: str) -> Any:
    """``text`` as ``kind``, within ``info``'s bounds; ``_NotPlain`` otherwise."""
    if kind is str:
        return text
    if kind is Path:
        if not text:
            raise _NotPlain(text)
        return Path(text)
    if kind in (int, float):
        if not text.isascii() or not (text.isdigit() if kind is int else _DECIMAL.fullmatch(text)):
            raise _NotPlain(text)
        number = kind(text)
        low, high = getattr(info, "min", None), getattr(info, "max", None)
        if (low is not None and number < low) or (high is not None and number > high):
            raise _NotPlain(text)
        return number
    if isinstance(kind, type) and issubclass(kind, Enum):
        for member in kind:
            if member.value == text:
                return member
    raise _NotPlain(text)
