"""The group's view of the command line: how an option was typed comes from the arguments
``main`` was given, never from ``sys.argv``."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from pi_context.cli.command_line import CommandLine, typed_spelling
from pi_context.cli.main import main


def _context(*args: str) -> click.Context:
    return click.Context(click.Command("chat"), obj=CommandLine(args))


@pytest.mark.parametrize(
    ("args", "spelling"),
    [
        (("-t", "read"), "-t"),
        (("-tread",), "-t"),
        (("--tools", "read"), "--tools"),
        (("--tools=read",), "--tools"),
        (("--tools", "read", "-t", "bash"), "-t"),  # the last use is the one click keeps
        (("-t", "read", "--tools=bash"), "--tools"),
        (("-p", "--", "-t"), "--tools"),  # after "--" a word is a message, not an option
    ],
)
def test_the_last_use_of_an_option_decides_its_spelling(
    args: tuple[str, ...], spelling: str
) -> None:
    assert typed_spelling(_context(*args), "-t", "--tools") == spelling


def test_without_a_known_command_line_the_long_spelling_is_named() -> None:
    assert typed_spelling(click.Context(click.Command("chat")), "-t", "--tools") == "--tools"


def test_a_tools_error_names_the_flag_of_the_arguments_main_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``main`` called in-process (as a test or an embedding program does) with ``-t``: the
    error names ``-t`` although this process's own ``sys.argv`` holds no ``-t``."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["pictx", "--tools", "read"])
    assert main(["-p", "-t", "read,+grep", "hi"]) == 1
    assert capsys.readouterr().err.strip() == (
        "pictx: error: -t: tool names cannot be mixed with +name or -name entries"
    )
