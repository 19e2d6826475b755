"""Subcommands imported when they run, so ``pictx --version`` does not load the agent.

A :class:`LazyGroup` knows its subcommands by name from a table of :class:`LazyCommand`
entries (``"module:attribute"`` and the one-line help that ``--help`` lists) and imports a
command's module only when that command is looked up to run. ``pictx --version`` and
``pictx --help`` import click and this table, nothing of the agent, the providers or the
session store. A test keeps the listed help equal to the commands' own. Looking up the
command to run ends the console script's start-up (:mod:`pi_context.cli.collector`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import NamedTuple

import click

from pi_context.cli import collector

__all__ = ["LazyCommand", "LazyGroup"]


class LazyCommand(NamedTuple):
    """Where a subcommand lives (``"pi_context.cli.commands.chat:chat_command"``); its help.

    A named tuple rather than a dataclass: ``pictx --help`` builds the table and imports
    nothing else (``dataclasses`` is a millisecond of its start-up)."""

    target: str
    help: str

    def load(self) -> click.Command:
        module_name, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


class LazyGroup(click.Group):
    """A click group whose subcommands in ``lazy_commands`` are imported on first use."""

    def __init__(
        self,
        *args: object,
        lazy_commands: Mapping[str, LazyCommand] | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy_commands: dict[str, LazyCommand] = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        return sorted({*self.commands, *self.lazy_commands})

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in self.lazy_commands:
            command = self.lazy_commands[cmd_name].load()
            self.add_command(command, cmd_name)
        if command is not None:
            # The command to run is imported: the console script's start-up, which ran with
            # the collector off (pi_context.cli.collector), is over.
            collector.resume()
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, from the table for commands not imported yet."""
        rows: list[tuple[str, str]] = []
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max((len(name) for name in names), default=0)
        for name in names:
            loaded = self.commands.get(name)
            if loaded is not None:
                if loaded.hidden:
                    continue
                rows.append((name, loaded.get_short_help_str(limit)))
            else:
                text = click.Command(name, help=self.lazy_commands[name].help)
                rows.append((name, text.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
