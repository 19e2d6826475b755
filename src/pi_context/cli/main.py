"""The ``pictx`` command line: the entry point of the console script.

This is the only place that turns errors into exit codes: a
:class:`~pi_context.errors.PiContextError` prints one line (``pictx: error: FILE:LINE: why``)
and exits 1; an unexpected exception prints one line and exits 2.

The click group and its subcommand table live in :mod:`pi_context.cli.group`, imported when a
command line needs them: a bare ``pictx --version`` is answered here, with the line click's
version option prints, without importing click (two thirds of ``pictx --help``'s start-up).
The group's names stay importable from here (``from pi_context.cli.main import cli``).
"""

from __future__ import annotations

import sys

from pi_context import _lazy
from pi_context._version import __version__

TYPE_CHECKING = False  # not typing's: ``pictx --version`` imports no typing (see pi_context)
if TYPE_CHECKING:
    from collections.abc import Sequence

    # The click group's names, imported on first use (``_lazy.attach_stub`` reads this block):
    # the entry point itself needs no click.
    from pi_context.cli.group import SUBCOMMANDS as SUBCOMMANDS
    from pi_context.cli.group import cli as cli
    from pi_context.cli.group import wants_agent as wants_agent

__all__ = ["SUBCOMMANDS", "cli", "main", "wants_agent"]

VERSION_LINE = f"pictx, version {__version__}\n"
"""What ``pictx --version`` prints: the line of the group's click version option, which answers
``--version`` combined with other arguments."""

PROCESS_MARKERS = {"AI_AGENT": "pictx", "PI_CODING_AGENT": "true"}
"""Set for the console script's process, so every command it runs (the model's tools, ``!cmd``,
MCP servers) can tell it runs inside a coding agent. pi sets the same two variables
(``AI_AGENT=pi``); ``PI_CODING_AGENT=true`` lets scripts written for pi see pictx alike."""

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pictx``; returns the exit code (the console script exits with it)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-v"]):
        return _print_version()
    if argv is None:  # the console script, not a caller in this process
        import os

        os.environ.update(PROCESS_MARKERS)
    try:
        return _run(args, from_shell=argv is None)
    except KeyboardInterrupt:  # Ctrl-C before a command runs (click answers it after)
        _error("aborted")
        return 1


def _run(args: list[str], *, from_shell: bool) -> int:
    if from_shell:  # MCP servers start while pictx loads (only for a -p / --mode run)
        from pi_context.mcp.early import spawn_for_command_line

        spawn_for_command_line(args)
    import click

    from pi_context.cli import collector  # here, not at the top: ``--version`` needs none
    from pi_context.cli.command_line import CommandLine
    from pi_context.cli.entry_help import mistyped_command
    from pi_context.cli.group import cli, entry_command
    from pi_context.errors import PiContextError

    typo = mistyped_command(args, cli.list_commands(click.Context(cli)))
    if typo is not None:
        _error(
            f"no command '{args[0]}'; did you mean `pictx {typo}`? "
            f'To send it as a prompt: pictx -- "{" ".join(args)}" (or pictx -p ...)'
        )
        return 2
    if from_shell:
        # The start-up runs with the collector off: the agent command resumes it once the agent
        # is built, the group once the command that runs is imported (LazyGroup.get_command).
        collector.pause()
    try:
        result = entry_command(args).main(
            args=args, prog_name="pictx", standalone_mode=False, obj=CommandLine(tuple(args))
        )
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.UsageError as exc:
        _error(exc.format_message())
        if exc.ctx is not None:
            _echo_error(f"Try '{exc.ctx.command_path} --help' for help.")
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
        _echo_error(f"pictx: internal error: {type(exc).__name__}: {exc}")
        return 2
    finally:
        collector.resume()
    return result if isinstance(result, int) else 0


def _print_version() -> int:
    try:
        sys.stdout.write(VERSION_LINE)
        sys.stdout.flush()
    except BrokenPipeError:
        return 1
    return 0


def _error(text: str) -> None:
    """The one error form of every command: ``pictx: error: <one line>`` on stderr."""
    _echo_error(f"pictx: error: {text}")


def _echo_error(text: str) -> None:
    """One error line on stderr, terminal-safe (imported here: startup stays free of rich)."""
    from pi_context.cli.terminal_text import echo, one_line

    echo(one_line(text), err=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
