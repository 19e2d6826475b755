"""From loaded resources to prompt options (what AgentSession's rebuild does in pi)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pi_context.prompt.sections import SystemPromptOptions
from pi_context.prompt.wording import DEFAULT_WORDING, PromptWording
from pi_context.resources.loader import LoadedResources

__all__ = ["normalize_guidelines", "normalize_snippet", "options_from_resources"]

_WS = re.compile(r"\s+")


def normalize_snippet(snippet: str) -> str:
    """A tool's one-line prompt snippet: line breaks and whitespace runs become one space."""
    return _WS.sub(" ", re.sub(r"[\r\n]+", " ", snippet)).strip()


def normalize_guidelines(guidelines: Sequence[str]) -> list[str]:
    """Trimmed, non-empty, first occurrence kept."""
    out: list[str] = []
    for g in guidelines:
        text = g.strip()
        if text and text not in out:
            out.append(text)
    return out


def options_from_resources(
    resources: LoadedResources,
    *,
    selected_tools: Sequence[str] | None = None,
    hidden_tools: Sequence[str] = (),
    tool_snippets: Mapping[str, str] | None = None,
    tool_guidelines: Mapping[str, Sequence[str]] | None = None,
    wording: PromptWording = DEFAULT_WORDING,
    **extra: Any,
) -> SystemPromptOptions:
    """The base prompt options for a session over ``resources`` and a tool loadout."""
    snippets = {
        name: text
        for name, raw in (tool_snippets or {}).items()
        if (text := normalize_snippet(raw))
    }
    guidelines = {
        name: g for name, raw in (tool_guidelines or {}).items() if (g := normalize_guidelines(raw))
    }
    return SystemPromptOptions(
        cwd=resources.cwd,
        custom_prompt=resources.system_prompt,
        selected_tools=None if selected_tools is None else tuple(selected_tools),
        hidden_tools=tuple(hidden_tools),
        tool_snippets=snippets,
        tool_guidelines=guidelines,
        append_system_prompt=resources.append_text,
        context_files=tuple(resources.context_files),
        skills=tuple(resources.skills),
        wording=wording,
        **extra,
    )
