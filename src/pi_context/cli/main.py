"""The ``pictx`` command line: one click group whose subcommands are imported when they run.

This is the only place that turns errors into exit codes: a
:class:`~pi_context.errors.PiContextError` prints one line (``pictx: error: FILE:LINE: why``)
and exits 1; an unexpected exception prints one line and exits 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from pi_context._version import __version__
from pi_context.cli import collector
from pi_context.cli.entry_help import AGENT_HELP, mistyped_command
from pi_context.cli.lazy_group import LazyCommand, LazyGroup
from pi_context.errors import PiContextError

__all__ = ["SUBCOMMANDS", "cli", "main", "wants_agent"]

# Every subcommand, imported only when it runs (``pictx --version`` loads none of them). The
# help line is what ``pictx --help`` lists; tests/cli/test_lazy_group.py keeps it equal to
# the command's own docstring.
SUBCOMMANDS = {
    "chat": LazyCommand(
        "pi_context.cli.commands.chat:chat_command",
        "Talk to the agent: interactive in a terminal, or one-shot with -p / --mode json.",
    ),
    "compact": LazyCommand(
        "pi_context.cli.commands.compact:compact_command",
        "Compact the current branch of a session FILE (appends a compaction entry).",
    ),
    "distrust": LazyCommand(
        "pi_context.cli.commands.prompt:distrust_command",
        "Never use a project's .pi settings, SYSTEM.md or skills (context files still load).",
    ),
    "mcp": LazyCommand(
        "pi_context.cli.commands.mcp:mcp_group",
        "List, add and remove MCP servers (mcp.json).",
    ),
    "models": LazyCommand(
        "pi_context.cli.commands.models:models_command",
        "List the models pictx knows: built-ins, ~/.pi/agent/models.json and the local model.",
    ),
    "prompt": LazyCommand(
        "pi_context.cli.commands.prompt:prompt_command",
        "Print the system prompt as it would be sent for a directory.",
    ),
    "session": LazyCommand(
        "pi_context.cli.commands.session:session_group",
        "Inspect pi session files (never modifies them).",
    ),
    "skills": LazyCommand(
        "pi_context.cli.commands.prompt:skills_command",
        "List the skills available in a directory, with loading problems.",
    ),
    "trust": LazyCommand(
        "pi_context.cli.commands.prompt:trust_command",
        "Trust a project (its .pi settings, SYSTEM.md, skills) from now on.",
    ),
}


@click.group(
    cls=LazyGroup,
    lazy_commands=SUBCOMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="pictx")
def cli() -> None:
    """pi-context: pi-compatible sessions, system prompts and compaction."""


cli.epilog = AGENT_HELP


def wants_agent(args: Sequence[str], group: click.Group) -> bool:
    """Whether ``pictx ARGS`` runs the agent (no subcommand named first, no group help)."""
    if not args:
        return True
    first = args[0]
    if first in group.list_commands(click.Context(group)):
        return False
    return first not in ("-h", "--help", "--version")


def _entry_command(args: Sequence[str]) -> click.Command:
    """``pictx [options] [messages...]`` with no subcommand named first starts the agent:
    interactive in a terminal, one-shot with -p, an event stream with --mode json."""
    if wants_agent(args, cli):
        from pi_context.cli.commands.chat import chat_command

        return chat_command
    return cli


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
    if argv is None and wants_agent(args, cli):
        collector.pause()  # the agent command resumes it once the agent is built
    try:
        result = _entry_command(args).main(args=args, prog_name="pictx", standalone_mode=False)
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


def _error(text: str) -> None:
    """The one error form of every command: ``pictx: error: <one line>`` on stderr."""
    _echo_error(f"pictx: error: {text}")


def _echo_error(text: str) -> None:
    """One error line on stderr, terminal-safe (imported here: startup stays free of rich)."""
    from pi_context.cli.terminal_text import echo, one_line

    echo(one_line(text), err=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
