"""The ``pictx`` command line: one click group, subcommands registered by their modules.

This is the only place that turns errors into exit codes: a
:class:`~pi_context.errors.PiContextError` prints one line (``pictx: error: FILE:LINE: why``)
and exits 1; an unexpected exception prints one line and exits 2.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import click

from pi_context.cli.entry_help import AGENT_HELP, mistyped_command
from pi_context.errors import PiContextError

__all__ = ["cli", "main"]

# Modules under pi_context.cli that add subcommands through ``register(group)``.
COMMAND_MODULES = ("session_cmds", "prompt_cmds", "compaction_cmds", "models_cmds", "run")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="pi-context", prog_name="pictx")
def cli() -> None:
    """pi-context: pi-compatible sessions, system prompts and compaction."""


def _register_commands() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(f"pi_context.cli.{name}").register(cli)


_register_commands()
cli.epilog = AGENT_HELP


def _entry_command(args: Sequence[str]) -> click.Command:
    """``pictx [options] [messages...]`` with no subcommand named first starts the agent:
    interactive in a terminal, one-shot with -p, an event stream with --mode json."""
    from pi_context.cli.run import agent_command, wants_agent

    return agent_command if wants_agent(args, cli) else cli


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pictx``; returns the exit code (the console script exits with it)."""
    args = list(sys.argv[1:] if argv is None else argv)
    typo = mistyped_command(args, cli.list_commands(click.Context(cli)))
    if typo is not None:
        _error(
            f"no command '{args[0]}'; did you mean `pictx {typo}`? "
            f'To send it as a prompt: pictx -- "{" ".join(args)}" (or pictx -p ...)'
        )
        return 2
    try:
        result = _entry_command(args).main(args=args, prog_name="pictx", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.UsageError as exc:
        _error(exc.format_message())
        if exc.ctx is not None:
            click.echo(f"Try '{exc.ctx.command_path} --help' for help.", err=True)
        return exc.exit_code
    except click.ClickException as exc:
        _error(exc.format_message())
        return exc.exit_code
    except click.Abort:
        _error("aborted")
        return 1
    except PiContextError as exc:
        _error(str(exc))
        return 1
    except BrokenPipeError:
        return 1
    except Exception as exc:  # noqa: BLE001 - the CLI edge: never a traceback for users
        click.echo(f"pictx: internal error: {type(exc).__name__}: {_one_line(str(exc))}", err=True)
        return 2
    return result if isinstance(result, int) else 0


def _error(text: str) -> None:
    """The one error form of every command: ``pictx: error: <one line>`` on stderr."""
    click.echo(f"pictx: error: {_one_line(text)}", err=True)


def _one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
