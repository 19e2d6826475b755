"""docs/cli.md documents every command, option, interactive key and slash command pictx has.

The page's reference section is generated from the code (:mod:`tests.cli_reference`); after a
change to the commands, the key table or the slash commands, regenerate it with
``.venv/bin/python -m tests.cli_reference``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
import pytest

from pi_context.cli.group import cli
from pi_context.cli.interactive.hotkeys import listed_keys
from pi_context.cli.interactive.slash import app  # noqa: F401  (registers the built-ins)
from pi_context.cli.interactive.slash.registry import BUILT_INS
from tests.cli_reference import BEGIN, CLI_MD, END, current_section, reference

REGENERATE = "docs/cli.md is out of date: run .venv/bin/python -m tests.cli_reference"


def _commands(
    command: click.Command, path: tuple[str, ...] = ("pictx",)
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path[-1])
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from _commands(sub, (*path, name))


def _mentions(text: str, word: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def test_the_reference_section_is_the_generated_one() -> None:
    section = current_section(CLI_MD.read_text(encoding="utf-8"))
    assert section is not None, f"docs/cli.md has no {BEGIN!r} ... {END!r} section"
    assert section == reference(), REGENERATE


def test_every_option_of_every_command_is_documented() -> None:
    text = CLI_MD.read_text(encoding="utf-8")
    missing = [
        f"{' '.join(path)} {name}"
        for path, command in _commands(cli)
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
        if not _mentions(text, name)
    ]
    assert missing == [], REGENERATE


def test_every_subcommand_is_documented() -> None:
    text = CLI_MD.read_text(encoding="utf-8")
    missing = [
        " ".join(path)
        for path, command in _commands(cli)
        if len(path) > 1 and path != ("pictx", "chat") and f"`{' '.join(path)}" not in text
    ]
    assert missing == [], REGENERATE


def test_every_key_and_slash_command_is_documented() -> None:
    text = CLI_MD.read_text(encoding="utf-8")
    keys = sorted(key for key in listed_keys() if key not in text)
    commands = sorted(
        f"/{name}"
        for command in BUILT_INS
        for name in (command.name, *command.aliases)
        if f"/{name}" not in text
    )
    assert keys == [], REGENERATE
    assert commands == [], REGENERATE


def test_a_new_option_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: an option added to a command changes the generated section."""
    from pi_context.cli.commands.chat import chat_command

    documented = reference()
    extra = click.Option(["--surely-undocumented"], is_flag=True, help="A probe.")
    monkeypatch.setattr(chat_command, "params", [*chat_command.params, extra])
    assert reference() != documented
    assert "--surely-undocumented" in reference()
    assert not _mentions(CLI_MD.read_text(encoding="utf-8"), "--surely-undocumented")
