"""The click group of ``pictx``: its subcommands by name, imported only when they run.

:mod:`pi_context.cli.main` imports this module for every command line except a bare
``pictx --version``, which it answers without click (importing click takes three times as
long as starting the interpreter).
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from pi_context._version import __version__
from pi_context.cli.entry_help import AGENT_HELP
from pi_context.cli.lazy_group import LazyCommand, LazyGroup

__all__ = ["SUBCOMMANDS", "cli", "entry_command", "wants_agent"]


# Every subcommand, imported only when it runs (``pictx --help`` loads none of them). The
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
        "List the models pictx knows: built-ins, the agent dir's models.json and the local model.",
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
    "store": LazyCommand(
        "pi_context.cli.commands.store:store_group",
        "Session stores: create the schema, import, export and list sessions.",
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
@click.version_option(__version__, "-v", "--version", prog_name="pictx")
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
    return first not in ("-h", "--help", "-v", "--version")


def entry_command(args: Sequence[str]) -> click.Command:
    """``pictx [options] [messages...]`` with no subcommand named first starts the agent:
    interactive in a terminal, one-shot with -p, an event stream with --mode json."""
    if wants_agent(args, cli):
        from pi_context.cli.commands.chat import chat_command

        return chat_command
    return cli
