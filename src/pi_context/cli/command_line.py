"""The arguments ``pictx`` was run with, for a command that must know how an option was typed.

:func:`pi_context.cli.main.main` hands them to click as the root context's ``obj``; a command
reads them there, never from ``sys.argv`` (a process may run ``main`` with other arguments).
Loaded by every command line, so it imports nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``pictx --help`` imports this module, and no typing
if TYPE_CHECKING:
    import click

__all__ = ["CommandLine", "typed_spelling"]


class CommandLine:
    """The arguments of one ``pictx`` command line, as :func:`~pi_context.cli.main.main` got
    them."""

    __slots__ = ("args",)

    def __init__(self, args: tuple[str, ...]) -> None:
        self.args = args


def typed_spelling(ctx: click.Context, short: str, long: str) -> str:
    """How the last use of an option was typed: ``short`` (``-t``, ``-tx``) or ``long``
    (``--tools``, ``--tools=x``); ``long`` when the command line is not known."""
    line = ctx.find_root().obj
    spelling = long
    for arg in line.args if isinstance(line, CommandLine) else ():
        if arg == "--":
            break
        if arg == long or arg.startswith(long + "="):
            spelling = long
        elif arg.startswith(short) and not arg.startswith("--"):
            spelling = short
    return spelling
