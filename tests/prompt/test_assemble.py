"""system_prompt_for: the one way from resources and tools to a system prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context import (
    FunctionTool,
    LoadedResources,
    PromptError,
    ResourceLoader,
    default_tools,
    prompt_options_for,
    system_prompt_for,
)
from pi_context.prompt import build_sections
from pi_context.prompt.assemble import options_from_resources


def _resources(tmp_path: Path, settings: dict[str, Any] | None = None) -> LoadedResources:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    if settings is not None:
        (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return ResourceLoader(project, agent_dir=agent, home=tmp_path / "home").load()


async def _count(args: dict[str, Any], cwd: Path) -> str:
    return "0"


def _grep_tool(snippet: str | None = "Search files") -> FunctionTool:
    return FunctionTool("grep", "search", {"type": "object"}, _count, prompt_snippet=snippet)


def test_every_default_tool_brings_its_snippet_line(tmp_path: Path) -> None:
    text = system_prompt_for(_resources(tmp_path), default_tools())
    for tool in default_tools():
        assert f"- {tool.name}: {tool.prompt_snippet}" in text
    assert "(none)" not in text


def test_the_default_tools_setting_picks_the_first_loadout(tmp_path: Path) -> None:
    res = _resources(tmp_path, {"defaultTools": ["-bash", "-write"]})
    options = prompt_options_for(res, [*default_tools(), _grep_tool()])
    # built-ins by the setting, then every other tool (extension tools are always active)
    assert options.tools == ("read", "edit", "grep")
    sections = build_sections(options)
    assert "- grep: Search files" in sections["tools"]
    assert "- bash:" not in sections["tools"]


def test_explicit_active_tools_and_cwd(tmp_path: Path) -> None:
    res = _resources(tmp_path)
    options = prompt_options_for(res, default_tools(), active=["write"], cwd="/elsewhere")
    assert options.tools == ("write",)
    assert options.cwd == "/elsewhere"
    assert build_sections(options)["tools"].startswith("<tools>\n- write: ")


def test_a_tool_without_snippet_is_selected_but_not_listed(tmp_path: Path) -> None:
    text = system_prompt_for(_resources(tmp_path), [_grep_tool(snippet=None)])
    assert "(none)" in text


def test_selecting_tools_without_snippets_fails_loudly(tmp_path: Path) -> None:
    res = _resources(tmp_path)
    with pytest.raises(PromptError, match="tool_snippets is missing"):
        options_from_resources(res, selected_tools=["read"])
    with pytest.raises(PromptError, match="tool_snippets is missing"):
        options_from_resources(res)  # pi's default loadout is a selection too
    # no tools at all needs no snippets
    assert options_from_resources(res, selected_tools=[]).tools == ()
