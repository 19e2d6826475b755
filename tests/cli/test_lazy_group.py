"""Subcommands are imported when they run: ``--version`` and ``--help`` load no agent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pi_context.cli.lazy_group import LazyCommand, LazyGroup
from pi_context.cli.main import SUBCOMMANDS, cli, main, wants_agent

# Modules a command that needs no model must not import.
HEAVY = (
    "pi_context.agent",
    "pi_context.providers",
    "pi_context.model",
    "pi_context.session",
    "pi_context.compaction",
    "pi_context.tools",
    "llama_cpp",
    "openai",
    "anthropic",
    "httpx",
    "prompt_toolkit",
    "rich",
    "importlib.metadata",
)

PROBE = """
import json, sys
from pi_context.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _imports_of(*args: str) -> tuple[str, set[str]]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, None), done.stderr
    return done.stdout, set(report["modules"])


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_no_agent(flag: str) -> None:
    out, modules = _imports_of(flag)
    assert out.startswith("pictx, version ") if flag == "--version" else "Commands:" in out
    loaded = sorted(m for m in modules if m.startswith(HEAVY))
    assert loaded == []


def test_a_subcommand_imports_only_its_module() -> None:
    out, modules = _imports_of("session", "--help")
    assert "info" in out
    assert "pi_context.cli.commands.session" in modules
    assert "pi_context.agent" not in modules
    assert "pi_context.cli.commands.chat" not in modules
    assert "pi_context.cli.commands.compact" not in modules


def test_session_info_imports_no_terminal_ui() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"
    out, modules = _imports_of("session", "info", str(example))
    assert "entries" in out
    loaded = sorted(
        m for m in modules if m.startswith(("rich", "prompt_toolkit", "pi_context.agent"))
    )
    assert loaded == []


def test_the_agent_command_and_the_http_adapters_load_no_terminal_ui_and_no_sdk() -> None:
    """``pictx -p`` imports these before its first request: the interactive front end and
    the Anthropic and OpenAI SDKs (a second or more of CPU between them) are not among what they load."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    probe = (
        "import json, sys; import pi_context.cli.commands.chat, pi_context.providers.anthropic, "
        "pi_context.providers.openai; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
    )
    modules = json.loads(done.stdout)
    assert [m for m in modules if m.startswith(("prompt_toolkit", "anthropic", "openai"))] == []


def _help(group: click.Group, *args: str) -> str:
    result = CliRunner().invoke(group, [*args, "--help"], catch_exceptions=False)
    assert result.exit_code == 0
    return result.output


def _fresh() -> LazyGroup:
    return LazyGroup("pictx", lazy_commands=SUBCOMMANDS, help=cli.help)


def test_help_lists_the_same_lines_before_and_after_importing_every_command() -> None:
    group = _fresh()
    lazy = _help(group)
    assert group.commands == {}  # listing imported nothing
    for name in group.list_commands(click.Context(group)):
        assert group.get_command(click.Context(group), name) is not None
    assert set(group.commands) == set(SUBCOMMANDS)
    assert _help(group) == lazy


def test_the_table_repeats_each_commands_own_help() -> None:
    for name, entry in SUBCOMMANDS.items():
        command = entry.load()
        assert command.name == name
        assert " ".join((command.help or "").split("\n\n")[0].split()) == entry.help
    session = SUBCOMMANDS["session"].load()
    assert isinstance(session, LazyGroup)
    for name, entry in session.lazy_commands.items():
        command = entry.load()
        assert command.name == name
        assert " ".join((command.help or "").split("\n\n")[0].split()) == entry.help


def test_session_compaction_is_reachable() -> None:
    session = SUBCOMMANDS["session"].load()
    assert isinstance(session, click.Group)
    names = session.list_commands(click.Context(session))
    assert {"info", "tree", "context", "compaction"} <= set(names)
    assert "ENTRY_ID" in _help(cli, "session", "compaction")


def test_unknown_names_and_bad_targets() -> None:
    group = _fresh()
    ctx = click.Context(group)
    assert group.get_command(ctx, "sesion") is None
    assert wants_agent(["hello"], group)
    assert not wants_agent(["session"], group)
    assert not wants_agent(["--version"], group)
    assert wants_agent([], group)
    with pytest.raises(TypeError, match="not a click command"):
        LazyCommand("pi_context.cli.group:SUBCOMMANDS", "x").load()


def test_version_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("pictx, version ")
