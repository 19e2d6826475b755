"""Prompt templates in the terminal: ``/help`` and completion list them as pi's completion
list shows them, ``/name args`` sends the expanded text, ``/reload`` picks up a new file, and
a template named like a built-in is hidden and reported."""

from __future__ import annotations

import io
from pathlib import Path

from prompt_toolkit.document import Document
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.interactive.mode import InteractiveShell, SlashCompleter
from pi_context.cli.interactive.slash import commands_for, run_slash
from pi_context.messages import text_of
from pi_context.testing import ScriptedModel, reply

REVIEW = """---
description: Review staged git changes
argument-hint: "[focus]"
---
Review the staged changes. Focus on ${1:-correctness}. Also: ${@:2}
"""


async def _shell(tmp_path: Path, pipe: PipeInput) -> tuple[InteractiveShell, io.StringIO]:
    prompts = tmp_path / "agent" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text(REVIEW, encoding="utf-8")
    (prompts / "model.md").write_text("never used\n", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    config = AppConfig(
        cwd=str(project), agent_dir=tmp_path / "agent", session_dir=tmp_path / "sessions"
    )
    agent = RunningAgent(
        await config.create(ScriptedModel([reply("one"), reply("two"), reply("three")])), config
    )
    screen = io.StringIO()
    console = Console(file=screen, width=200, force_terminal=False, color_system=None)
    return InteractiveShell(agent, console=console, pt_input=pipe, pt_output=DummyOutput()), screen


def _user_texts(shell: InteractiveShell) -> list[str]:
    return [
        text_of(e.data["message"]["content"])
        for e in shell.agent.session.entries
        if e.type == "message" and e.data["message"]["role"] == "user"
    ]


async def test_help_lists_templates_with_hint_and_scope_tag(
    tmp_path: Path, pipe: PipeInput
) -> None:
    shell, screen = await _shell(tmp_path, pipe)
    await run_slash(shell, "/help")
    text = screen.getvalue()
    assert "/review [focus]" in text
    assert "[u] Review staged git changes" in text
    model_md = tmp_path / "agent" / "prompts" / "model.md"
    assert f"prompt template {model_md}: /model is hidden by another /model" in text
    commands = commands_for(shell.agent)
    review = commands.lookup("review")
    assert review is not None
    assert review.source == "prompt template"


async def test_completion_offers_templates(tmp_path: Path, pipe: PipeInput) -> None:
    shell, _ = await _shell(tmp_path, pipe)
    completer = SlashCompleter(lambda: shell.agent)
    found = {
        (c.text, c.display_meta_text)
        for c in completer.get_completions(Document("/rev"), None)  # type: ignore[arg-type]
    }
    assert found == {("/review", "[u] Review staged git changes")}


async def test_a_template_sends_its_expanded_text(tmp_path: Path, pipe: PipeInput) -> None:
    shell, _ = await _shell(tmp_path, pipe)
    await run_slash(shell, '/review "API compatibility" docs tests')
    await run_slash(shell, "/review")
    assert _user_texts(shell) == [
        "Review the staged changes. Focus on API compatibility. Also: docs tests",
        "Review the staged changes. Focus on correctness. Also: ",
    ]


async def test_reload_picks_up_a_new_template(tmp_path: Path, pipe: PipeInput) -> None:
    shell, screen = await _shell(tmp_path, pipe)
    await run_slash(shell, "/fresh now")
    assert "Unknown command /fresh" in screen.getvalue()
    (tmp_path / "agent" / "prompts" / "fresh.md").write_text("Fresh: $@", encoding="utf-8")
    await run_slash(shell, "/reload")
    await run_slash(shell, "/fresh now")
    assert _user_texts(shell) == ["Fresh: now"]


async def test_verbose_names_templates_and_their_problems(tmp_path: Path, pipe: PipeInput) -> None:
    project_prompts = tmp_path / "project" / ".pi" / "prompts"
    project_prompts.mkdir(parents=True)
    (project_prompts / "review.md").write_text("project review\n", encoding="utf-8")
    prompts = tmp_path / "agent" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text(REVIEW, encoding="utf-8")
    (prompts / "broken.md").write_text("---\ndescription: [x\n---\nbody\n", encoding="utf-8")
    config = AppConfig(
        cwd=str(tmp_path / "project"),
        agent_dir=tmp_path / "agent",
        session_dir=tmp_path / "sessions",
        trusted=True,
    )
    agent = RunningAgent(await config.create(ScriptedModel([])), config)
    screen = io.StringIO()
    console = Console(file=screen, width=400, force_terminal=False, color_system=None)
    shell = InteractiveShell(
        agent, console=console, pt_input=pipe, pt_output=DummyOutput(), verbose=True
    )
    shell._banner()
    agent.close()
    text = screen.getvalue()
    assert "prompt templates: /review" in text
    assert f'prompt template collision: {prompts / "review.md"}: name "/review" collision' in text
    assert f"prompt template warning: {prompts / 'broken.md'}: invalid YAML frontmatter" in text
