"""docs/cli.md documents every command, option, interactive key and slash command pictx has.

The page's reference section is generated from the code (:mod:`tests.cli_reference`); after a
change to the commands, the key table or the slash commands, regenerate it with
``.venv/bin/python -m tests.cli_reference``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

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


_TREE_KEYS = {
    "<any>": "typing",
    "<bracketed-paste>": "typing",
    "c-m": "Enter",
    "escape": "Esc",
    "c-h": "Backspace",
    "pageup": "PageUp",
    "pagedown": "PageDown",
}
_SHIFT_CTRL = {  # CSI-u and modifyOtherKeys spellings of Shift+Ctrl+<key>
    ("escape", "[", "7", "9", ";", "6", "u"): "Shift+Ctrl+O",
    ("escape", "[", "2", "7", ";", "6", ";", "7", "9", "~"): "Shift+Ctrl+O",
}


def _tree_key_name(keys: tuple[str, ...]) -> str:
    """A binding of the ``/tree`` selector as docs/cli.md names it."""
    if keys in _SHIFT_CTRL:
        return _SHIFT_CTRL[keys]
    if len(keys) == 2 and keys[0] == "escape":
        return "Alt+" + _tree_key_name(keys[1:])
    (key,) = keys
    if key in _TREE_KEYS:
        return _TREE_KEYS[key]
    if key.startswith("c-"):
        return "Ctrl+" + _tree_key_name((key[2:],))
    if len(key) == 1:
        return f"Shift+{key}" if key.isupper() else key.upper()
    return key.capitalize()


def test_every_key_of_the_tree_selector_is_documented(tmp_path: Path) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from pi_context.cli.interactive.tree.selector import TreeSelector
    from tests.cli.interactive.tree.helpers import Built

    built = Built(tmp_path)
    with create_pipe_input() as pipe:
        selector = TreeSelector(
            built.view(),
            set_label=lambda _target, _label: built.doc(),
            copy=lambda _text: True,
            pt_input=pipe,
            pt_output=DummyOutput(),
        )
        bindings = selector.app.key_bindings
        assert bindings is not None
        names = {
            _tree_key_name(tuple(str(getattr(k, "value", k)) for k in binding.keys))
            for binding in bindings.bindings
        }
    text = CLI_MD.read_text(encoding="utf-8")
    section = text.split("### The `/tree` selector", 1)[1].split("\n### ", 1)[0]
    assert {"Ctrl+Left", "Alt+Right", "Shift+L", "Shift+Ctrl+O", "typing"} <= names
    assert sorted(name for name in names if not _mentions(section, name)) == []


def test_every_key_of_the_pickers_is_documented() -> None:
    """The extra keys each picker declares (``PickerKey(keys, label, ...)``), by the label its
    hint line shows, are in the page's Pickers section."""
    import ast

    from pi_context.cli.interactive import pickers

    labels: set[str] = set()
    for module in Path(pickers.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "PickerKey"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                labels.add(node.args[1].value)
    text = CLI_MD.read_text(encoding="utf-8")
    section = text.split("### Pickers", 1)[1].split("\n### ", 1)[0]
    assert {"Tab", "Ctrl+S", "Space", "Ctrl+R"} <= labels
    assert sorted(label for label in labels if not _mentions(section, label)) == []
