"""What the CLI tells a user who has no usable model (where ``models.json`` is, following
``PI_CODING_AGENT_DIR``) or who names a tool that does not exist."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from pi_context.cli.app.agent_api import NO_MODEL_HELP

_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY")


@pytest.fixture
def nothing_usable(project_as_cwd: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No key anywhere and no local extra; returns the agent dir."""
    import os

    from pi_context.providers import registry as model_registry

    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")) or name in _KEYS:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(model_registry, "local_model_installed", lambda: False)
    return project_as_cwd.parent / "agent"


def test_models_names_the_models_json_of_the_agent_dir(
    nothing_usable: Path, pictx_in_process: Callable[..., Any]
) -> None:
    run = pictx_in_process("models")
    assert f"describe a server in {nothing_usable / 'models.json'} " in run.out
    assert "~/.pi/agent" not in run.out


def test_print_mode_without_a_model_mentions_models_json(
    nothing_usable: Path, pictx_in_process: Callable[..., Any]
) -> None:
    run = pictx_in_process("-p", "hello")
    assert run.code == 1
    assert NO_MODEL_HELP in run.err
    assert f"{nothing_usable / 'models.json'}" in run.err


def test_a_tools_entry_no_tool_answers_to_is_warned(
    project_as_cwd: Path,
    pictx_in_process: Callable[..., Any],
    replies: Callable[[Sequence[Any]], str],
) -> None:
    model = replies(["ok"])
    run = pictx_in_process("-p", "--model", model, "-t", "read,grep,nosuch", "hi")
    assert run.code == 0
    assert "pictx: warning: --tools: no tool is called 'nosuch'; it is ignored" in run.err
    assert "'grep'" not in run.err
