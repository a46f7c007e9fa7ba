"""The typer application every command module registers on, and how every command looks to a
user: ``-h``/``--help``, upper-case placeholders, choices listed, flags without a metavar, and
usage errors as one line ``error: ... (try 'rokuprof X -h')`` with exit status 2."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from rokuprof.cli import exits

#: Kept for the modules and tests that import them from here (the table: exit_status.py).
EXIT_OK = exits.OK
EXIT_USAGE = exits.USAGE
EXIT_INCOMPLETE = exits.INCOMPLETE

CONTEXT = {"help_option_names": ["-h", "--help"]}

#: Everything here goes through typer's public names (``typer``, ``typer.core``) and click's
#: public hooks (``get_params``, ``collect_usage_pieces``, ``format_options``, ``main`` with
#: ``standalone_mode=False``); tests/test_cli_public_api.py holds that nothing private is used.


def _type_placeholder(param: TyperOption) -> str:
    """``[a|b|c]`` for a choice, else the upper-case name of the value's type."""
    desc = param.type_descriptor
    if desc.is_choice:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices or ()) + "]"
    name = param.bare_type().strip("<>").removesuffix(" range")
    return {"str": "TEXT", "int": "N", "float": "NUMBER"}.get(name, name.upper())


def tidy_params(params: Sequence[Any]) -> None:
    """Placeholders as users expect them (see the module docstring), and a flag whose value no
    command receives (``--install-completion``, ``--show-completion``) off by default: False,
    not None, so typer answers it without building its pydantic adapter and ``rokuprof COMMAND
    -h`` never imports pydantic."""
    for param in params:
        if isinstance(param, TyperArgument):
            if param.metavar is None:
                param.metavar = (param.name or "arg").upper()
        elif isinstance(param, TyperOption):
            if param.is_flag and param.default is None and not param.expose_value:
                param.default = False
            if param.hidden:
                continue
            if param.is_flag or param.count or param.bare_type().strip("<>") == "bool":
                param.metavar = ""
            elif param.metavar is None:
                param.metavar = _type_placeholder(param)


def _argument_usage(param: TyperArgument) -> str:
    """An argument in the usage line: ``FILE``, ``[FILE]``, ``FILE...`` (not ``{FILE}``)."""
    name = f"{param.metavar}{'...' if param.nargs != 1 else ''}"
    return name if param.required else f"[{name}]"


class _Conventions:
    """``-h`` and tidy placeholders (mixed into commands and groups)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", CONTEXT)
        super().__init__(*args, **kwargs)

    def get_params(self, ctx: typer.Context) -> list[Any]:
        params = super().get_params(ctx)  # type: ignore[misc]
        tidy_params(params)  # here: typer adds its completion options after __init__
        return params


class RokuCommand(_Conventions, TyperCommand):
    """A command with the conventions above; an argument is shown by its upper-case
    placeholder alone (``FILE``, not ``{file} <path>``)."""

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                pieces.append(_argument_usage(param))
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces

    def format_options(self, ctx: typer.Context, formatter: Any) -> None:
        sections: dict[str, list[tuple[str, str]]] = {"Arguments": [], "Options": []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if isinstance(param, TyperArgument):
                sections["Arguments"].append((param.metavar, record[1]))
            else:
                sections["Options"].append(record)
        for title, rows in sections.items():
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def _one_line(error: typer.TyperException) -> str:
    """The error as one line; a usage error (one that names its context) says where help is."""
    message = " ".join(error.format_message().split())
    ctx = getattr(error, "ctx", None)
    if ctx is not None:
        message = f"{message.rstrip('.')} (try '{ctx.command_path} -h')"
    return message


def help_when_bare(ctx: typer.Context) -> None:
    """A group called with no command (``rokuprof``, ``rokuprof config``): its help on stderr
    and exit status 2, a usage error. Called by the group's callback (the group is made with
    ``invoke_without_command=True``)."""
    if ctx.invoked_subcommand is None:
        from rokuprof.cli.output import write_text

        write_text(ctx.get_help().rstrip("\n") + "\n", sys.stderr)
        raise typer.Exit(exits.USAGE)


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
        except typer.TyperException as error:  # typer's usage and file errors derive from it
            if not standalone_mode:
                raise
            typer.echo(f"error: {_one_line(error)}", err=True)
            status = error.exit_code
        except typer.Abort:
            if not standalone_mode:
                raise
            typer.echo("error: aborted", err=True)
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
    invoke_without_command=True,  # bare: help_when_bare
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
    ctx: typer.Context,
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
    help_when_bare(ctx)
