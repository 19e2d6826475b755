"""One slash-command registry: built-ins and extension commands registered the same way, a
built-in shadowing an extension command of the same name (as pi's terminal does), ``/help``
and completion listing both."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from prompt_toolkit.document import Document
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.interactive.mode import InteractiveShell, SlashCompleter
from pi_context.cli.interactive.shell import Shell
from pi_context.cli.interactive.slash import commands_for, run_slash
from pi_context.cli.interactive.slash.registry import (
    BUILT_INS,
    SlashCommand,
    SlashRegistry,
    source_tag,
)
from pi_context.resources.types import SkillSourceInfo
from pi_context.testing import ScriptedModel

EXTENSION = """
def register(pi):
    async def greet(args, ctx):
        pi.append_entry("greeted", {"who": args})

    async def model(args, ctx):
        pi.append_entry("ext-model", {"args": args})

    pi.register_command("greet", greet, description="greet someone [who]")
    pi.register_command("odd", greet, description="clears\x1b[2J [bold]nothing[/bold]")
    pi.register_command("model", model, description="the extension's own /model")
"""


async def _shell(tmp_path: Path, pipe: PipeInput) -> tuple[InteractiveShell, io.StringIO]:
    extensions = tmp_path / "agent" / "extensions"
    extensions.mkdir(parents=True)
    (extensions / "greeter.py").write_text(EXTENSION, encoding="utf-8")
    config = AppConfig(
        cwd=str(tmp_path), agent_dir=tmp_path / "agent", session_dir=tmp_path / "sessions"
    )
    agent = RunningAgent(await config.create(ScriptedModel([])), config)
    screen = io.StringIO()
    console = Console(file=screen, width=200, force_terminal=False, color_system=None)
    return InteractiveShell(agent, console=console, pt_input=pipe, pt_output=DummyOutput()), screen


def _custom(shell: InteractiveShell, kind: str) -> list[object]:
    return [
        e.data["data"]
        for e in shell.agent.session.entries
        if e.type == "custom" and e.data.get("customType") == kind
    ]


async def test_extension_commands_join_the_built_ins_and_a_built_in_shadows_one(
    tmp_path: Path, pipe: PipeInput
) -> None:
    shell, screen = await _shell(tmp_path, pipe)
    commands = commands_for(shell.agent)
    greet = commands.lookup("greet")
    assert greet is not None
    assert greet.source == "greeter"
    model = commands.lookup("model")
    assert model is not None
    assert model.source == "built-in"
    assert [(c.name, c.source) for c in commands.shadowed] == [("model", "greeter")]
    assert BUILT_INS.lookup("greet") is None  # the session's copy, not the built-ins

    await run_slash(shell, "/help")
    text = screen.getvalue()
    assert "/greet" in text
    assert "greet someone [who]" in text  # a description is text, never markup
    assert "clears [bold]nothing[/bold]" in text  # nor terminal control
    assert "\x1b" not in text
    assert "/model [search]" in text
    assert "/skill:<name> [args]" in text
    assert "extension greeter: /model is hidden by the built-in /model" in text

    await run_slash(shell, "/greet world")
    assert _custom(shell, "greeted") == [{"who": "world"}]
    pipe.send_text("\r")  # the built-in /model's text form asks which model; keep it
    await run_slash(shell, "/model")
    assert _custom(shell, "ext-model") == []
    assert "Current model: scripted/" in screen.getvalue()


async def test_completion_offers_extension_commands(tmp_path: Path, pipe: PipeInput) -> None:
    shell, _ = await _shell(tmp_path, pipe)
    completer = SlashCompleter(lambda: shell.agent)
    found = {
        (c.text, c.display_meta_text)
        for c in completer.get_completions(Document("/gr"), None)  # type: ignore[arg-type]
    }
    assert found == {("/greet", "greet someone [who]")}
    assert not list(completer.get_completions(Document("/skill"), None))  # type: ignore[arg-type]


async def test_unknown_command_and_aliases(tmp_path: Path, pipe: PipeInput) -> None:
    shell, screen = await _shell(tmp_path, pipe)
    await run_slash(shell, "/nosuch")
    assert "Unknown command /nosuch. Type /help for the list." in screen.getvalue()
    await run_slash(shell, "/exit")
    assert shell._quit


def test_a_built_in_registered_twice_is_an_error() -> None:
    registry = SlashRegistry()

    async def handler(shell: Shell, args: str) -> None:
        return None

    registry.register(SlashCommand("x", "/x", "x", handler, aliases=("y",)))
    with pytest.raises(ValueError, match="/x is registered twice"):
        registry.register(SlashCommand("x", "/x", "again", handler))
    assert not registry.register(SlashCommand("y", "/y", "ext", handler, source="ext"))
    assert [c.name for c in registry.shadowed] == ["y"]


@pytest.mark.parametrize(
    ("source", "scope", "tag"),
    [
        ("auto", "user", "u"),
        ("local", "project", "p"),
        ("cli", "temporary", "t"),
        ("npm:@x/tools@1.0.0", "user", "u:npm:@x/tools@1.0.0"),
        ("git:github.com/a/kit@v1", "project", "p:git:github.com/a/kit@v1"),
        ("https://gitlab.com/a/kit", "user", "u:git:gitlab.com/a/kit"),
        ("../kit", "user", "u"),
    ],
)
def test_source_tags_name_packages_as_pi_tags_them(source: str, scope: str, tag: str) -> None:
    assert source_tag(SkillSourceInfo("/p.md", source, scope)) == tag
