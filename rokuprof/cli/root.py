"""The typer application every command module registers on, and how every command looks to a
user: ``-h``/``--help``, upper-case placeholders, choices listed, flags without a metavar, and
usage errors as one line ``error: ... (try 'rokuprof X -h')`` with exit status 2."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer import _click
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
from typer._coercion import build_runtime_param
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption, _TyperParameter
from typer.exceptions import Abort

from rokuprof.cli import exits

#: Kept for the modules and tests that import them from here (the table: exit_status.py).
EXIT_OK = exits.OK
EXIT_USAGE = exits.USAGE
EXIT_INCOMPLETE = exits.INCOMPLETE

CONTEXT = {"help_option_names": ["-h", "--help"]}


def _type_placeholder(param: TyperOption) -> str:
    """``[a|b|c]`` for a choice, else the upper-case name of the value's type."""
    desc = param.type_descriptor
    if desc.is_choice:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices or ()) + "]"
    name = param.bare_type().strip("<>").removesuffix(" range")
    return {"str": "TEXT", "int": "N", "float": "NUMBER"}.get(name, name.upper())


class _Argument(TyperArgument):
    """An argument shown by its upper-case placeholder alone (``FILE``, not ``{file} <path>``)."""

    def display_type_rich(self, ctx: _click.Context) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        name = self.display_name_raw + ("..." if self.nargs != 1 else "")
        return name if self.required else f"[{name}]"


class _NoneStaysNone:
    """A parameter's coercion that answers an absent value (None) itself and builds typer's
    pydantic adapter only for a value given: ``rokuprof COMMAND -h`` then never imports
    pydantic for the options it was not given (typer builds the adapter first and then returns
    None for None, ``RuntimeParam.coerce``)."""

    def __init__(self, param: _TyperParameter) -> None:
        self._param = param
        self._built: Any = None

    def coerce(self, value: Any, param: _TyperParameter, ctx: _click.Context) -> Any:
        if value is None and not (param.multiple or param.nargs == -1):
            return None
        if self._built is None:
            self._built = build_runtime_param(self._param.type_descriptor)
        return self._built.coerce(value, param=param, ctx=ctx)


def tidy_params(params: Sequence[_click.Parameter]) -> None:
    """Placeholders as users expect them (see the module docstring)."""
    for param in params:
        if isinstance(param, _TyperParameter) and param._runtime_param is None:
            param._runtime_param = _NoneStaysNone(param)  # type: ignore[assignment]
        if isinstance(param, TyperArgument):
            param.__class__ = _Argument  # same state, different display
            if param.metavar is None:
                param.metavar = (param.name or "arg").upper()
        elif isinstance(param, TyperOption) and not param.hidden:
            if param.is_flag or param.count or param.bare_type().strip("<>") == "bool":
                param.metavar = ""
            elif param.metavar is None:
                param.metavar = _type_placeholder(param)


class _Conventions:
    """``-h`` and tidy placeholders (mixed into commands and groups)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", CONTEXT)
        super().__init__(*args, **kwargs)

    def get_params(self, ctx: _click.Context) -> list[_click.Parameter]:
        params = super().get_params(ctx)  # type: ignore[misc]
        tidy_params(params)  # here: typer adds its completion options after __init__
        return params


class RokuCommand(_Conventions, TyperCommand):
    """A command with the conventions above."""


def _one_line(error: ClickException) -> str:
    message = " ".join(error.format_message().split())
    ctx = getattr(error, "ctx", None)
    if isinstance(error, UsageError) and ctx is not None:
        message = f"{message.rstrip('.')} (try '{ctx.command_path} -h')"
    return message


class RokuGroup(_Conventions, TyperGroup):
    """A group with the conventions above; as the root, it reports a usage error as one line."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as error:  # `rokuprof`, `rokuprof config`: a usage error
            from rokuprof.cli.output import write_text

            write_text(error.format_message().rstrip("\n") + "\n", sys.stderr)  # the help
            status = error.exit_code
        except ClickException as error:
            if not standalone_mode:
                raise
            _click.echo(f"error: {_one_line(error)}", err=True)
            status = error.exit_code
        except Abort:
            if not standalone_mode:
                raise
            _click.echo("error: aborted", err=True)
            status = exits.FAILED
        if not standalone_mode:
            return status
        sys.exit(status if isinstance(status, int) else exits.OK)


class RokuTyper(typer.Typer):
    """A ``typer.Typer`` whose groups and commands follow the conventions above."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", RokuGroup)
        kwargs.setdefault("context_settings", CONTEXT)
        kwargs.setdefault("pretty_exceptions_enable", False)
        kwargs.setdefault("rich_markup_mode", None)  # plain help: no boxes, nothing cut in a pipe
        super().__init__(**kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", RokuCommand)
        return super().command(*args, **kwargs)


app = RokuTyper(
    name="rokuprof",
    no_args_is_help=True,
    add_completion=True,
)


def _show_version(value: bool) -> None:
    if value:
        from rokuprof import __version__
        from rokuprof.cli.output import write_text
        from rokuprof.profile.engine import describe

        write_text(f"rokuprof {__version__}\ndecoder core: {describe()}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Capture Roku BrightScript profiler data (.bsprof) and turn it into profiles.

    `rokuprof COMMAND -h` describes each command. Shell completion: `rokuprof
    --install-completion` (bash, zsh, fish, PowerShell).

    Exit status (every command): 0 success; 1 the work could not be finished (an output could
    not be written midway, a device could not be reached); 2 bad usage or a problem found
    before any work (missing or unreadable input, not a .bsprof, an output that cannot be
    written, a bad host); 3 the data was incomplete or corrupt (what could be read was used).
    """
