"""``pictx --help`` shows the agent's options; a mistyped subcommand is not sent to the model;
every error is one ``pictx: error:`` line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from pi_context.cli.commands.chat import chat_command
from pi_context.cli.entry_help import AGENT_HELP, mistyped_command
from tests.cli.helpers import PictxInProcess, sessions_of

NAMES = ["chat", "compact", "distrust", "models", "prompt", "session", "skills", "trust"]


def test_top_level_help_lists_every_option_of_the_agent(pictx_in_process: PictxInProcess) -> None:
    run = pictx_in_process("--help")
    assert run.code == 0
    for param in chat_command.params:
        if isinstance(param, click.Option) and "--help" not in param.opts:
            for opt in param.opts:
                assert opt in AGENT_HELP, opt
                assert opt in run.out, opt
    assert 'pictx -- "' in run.out  # how to send a command-like message as a prompt


def test_mistyped_command_rules() -> None:
    assert mistyped_command(["sesion", "info", "x"], NAMES) == "session"
    assert mistyped_command(["model"], NAMES) == "models"
    assert mistyped_command(["session", "info"], NAMES) is None  # a real command
    prompts = (["fix", "the", "bug"], ["explain"], ["what", "is", "this"], ["cat", "x"])
    for prompt in (*prompts, ["sesion info x"], ["-p", "sesion"]):
        assert mistyped_command(prompt, NAMES) is None, prompt
    assert mistyped_command(["Sesion"], NAMES) is None  # a capitalised word reads as a prompt
    assert mistyped_command([], NAMES) is None


def test_a_mistyped_command_suggests_the_command_and_sends_nothing(
    project_as_cwd: Path, pictx_in_process: PictxInProcess
) -> None:
    run = pictx_in_process("sesion", "info", "x")
    assert run.code == 2
    assert run.err.startswith("pictx: error: no command 'sesion'; did you mean `pictx session`?")
    assert 'pictx -- "sesion info x"' in run.err
    assert sessions_of(project_as_cwd.parent / "agent", project_as_cwd) == []


def test_double_dash_sends_command_like_text_as_a_prompt(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Callable[[list[str]], str]
) -> None:
    run = pictx_in_process("-p", "--model", replies(["ok"]), "--", "sesion info x")
    assert (run.code, run.out) == (0, "ok\n")


def test_usage_and_click_errors_use_the_one_error_form(
    project_as_cwd: Path, pictx_in_process: PictxInProcess
) -> None:
    for args in (["--bogus"], ["session", "inf", "x"], ["session", "info", "/no/such/file"]):
        run = pictx_in_process(*args)
        assert run.code != 0
        assert run.err.startswith("pictx: error: "), run.err
        assert "\nError:" not in run.err
        assert not run.err.startswith("Error:")
