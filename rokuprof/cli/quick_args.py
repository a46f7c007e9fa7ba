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
import os
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

#: Declarations a plain invocation may not carry (each changes how a value is read).
_NOT_PLAIN = ("envvar", "callback", "parser", "click_type", "is_eager", "clamp", "count")
#: A ``Path``'s declarations as typer's defaults leave them: anything else (a path that must
#: exist, be resolved, be a file only, ...) is typer's to check.
_PLAIN_PATH = {
    "exists": False,
    "file_okay": True,
    "dir_okay": True,
    "writable": False,
    "readable": True,
    "resolve_path": False,
    "allow_dash": False,
    "path_type": None,
}
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
        # `--name=value`; a short option's `-o=x` is `-o` with the value `=x` to typer: not plain
        flag, equals, text = word.partition("=") if word.startswith("--") else (word, "", "")
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
        kind = _unless_none(kind, param.default)
        infos = [x for x in extras if isinstance(x, (ArgumentInfo, OptionInfo))]
        if len(infos) != 1 or not _plain_type(kind):
            raise _NotPlain(param.name)
        info = infos[0]
        if any(getattr(info, attr, None) for attr in _NOT_PLAIN):
            raise _NotPlain(param.name)
        if kind is Path and any(getattr(info, k) != v for k, v in _PLAIN_PATH.items()):
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


def _unless_none(kind: Any, default: Any) -> Any:
    """``X`` of an option ``X | None = None`` (a value given is read as an ``X``), else
    ``kind``."""
    if typing.get_origin(kind) not in (typing.Union, types.UnionType) or default is not None:
        return kind
    others = [k for k in typing.get_args(kind) if k is not type(None)]
    return others[0] if len(others) == 1 and others[0] is not bool else kind


def _plain_type(kind: Any) -> bool:
    return kind in (str, int, bool, float, Path) or (
        isinstance(kind, type) and issubclass(kind, Enum)
    )


def _value(kind: Any, info: Any, text: str) -> Any:
    """``text`` as ``kind``, within ``info``'s bounds; ``_NotPlain`` otherwise."""
    if kind is str:
        return text
    if kind in (int, float):
        if not text.isascii() or not (text.isdigit() if kind is int else _DECIMAL.fullmatch(text)):
            raise _NotPlain(text)
        number = kind(text)
        low, high = getattr(info, "min", None), getattr(info, "max", None)
        if (low is not None and number < low) or (high is not None and number > high):
            raise _NotPlain(text)
        return number
    if kind is Path:
        return _path(text)
    if isinstance(kind, type) and issubclass(kind, Enum):
        for member in kind:
            if member.value == text:
                return member
    raise _NotPlain(text)


def _path(text: str) -> Path:
    """``text`` as typer reads a ``Path`` with its default declarations: any name, but one that
    exists must be readable; an empty or unusual name is left to typer."""
    if not text or "\0" in text:
        raise _NotPlain(text)
    try:
        os.stat(text)
    except OSError:
        return Path(text)  # not there yet: an output, say
    except ValueError:
        raise _NotPlain(text) from None
    if not os.access(text, os.R_OK):
        raise _NotPlain(text)
    return Path(text)
