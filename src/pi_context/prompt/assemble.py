"""From loaded resources and a tool loadout to the system prompt (pi's AgentSession rebuild).

:func:`system_prompt_for` is the one way to build a system prompt: the CLI (``pictx prompt``),
the agent's loadout and library users all call it (or :func:`prompt_options_for`, for the
options before rendering)::

    resources = ResourceLoader(cwd).load()
    text = system_prompt_for(resources, default_tools(cwd))

The tools bring their own ``<tools>`` snippets and guidelines, so selecting a tool can no longer
silently drop its line from the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from pi_context.errors import PromptError
from pi_context.prompt.sections import (
    DEFAULT_SELECTED_TOOLS,
    SystemPromptOptions,
    build_system_prompt,
)
from pi_context.prompt.wording import DEFAULT_WORDING, PromptWording
from pi_context.resources.loader import LoadedResources

__all__ = [
    "PromptTool",
    "default_tool_names",
    "initial_loadout",
    "normalize_guidelines",
    "normalize_snippet",
    "options_from_resources",
    "prompt_options_for",
    "system_prompt_for",
]


class PromptTool(Protocol):
    """What the system prompt needs of a tool (every :class:`pi_context.tools.Tool` has it)."""

    @property
    def name(self) -> str: ...

    @property
    def prompt_snippet(self) -> str | None: ...

    @property
    def prompt_guidelines(self) -> Sequence[str]: ...


_WS = re.compile(r"\s+")


def default_tool_names(setting: Any) -> list[str]:
    """The initial loadout from pi's ``defaultTools`` setting: plain names replace the built-in
    list; a list of only ``+name`` / ``-name`` entries changes it; anything else keeps it."""
    names = list(DEFAULT_SELECTED_TOOLS)
    if not isinstance(setting, list):
        return names
    entries = [e.strip() for e in setting if isinstance(e, str) and e.strip()]
    if entries and all(e[0] in "+-" for e in entries):
        for entry in entries:
            name = entry[1:]
            if entry[0] == "+" and name not in names:
                names.append(name)
            elif entry[0] == "-" and name in names:
                names.remove(name)
        return names
    return entries


def initial_loadout(setting: Any, available: Sequence[str]) -> list[str]:
    """The tools active at the start of a session: the ``defaultTools`` names that are
    ``available``, then every available tool that is not a built-in (extension tools are always
    active), as pi's agent session starts."""
    defaults = [n for n in default_tool_names(setting) if n in available]
    return defaults + [n for n in available if n not in DEFAULT_SELECTED_TOOLS]


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
    """The base prompt options for a session over ``resources`` and a tool loadout given as
    names plus snippet and guideline tables (prefer :func:`prompt_options_for`, which takes the
    tools themselves).

    Raises :class:`~pi_context.errors.PromptError` when tools are selected (``selected_tools``,
    or pi's default loadout when it is ``None``) but ``tool_snippets`` is not given: the
    ``<tools>`` section would silently read ``(none)``.
    """
    if tool_snippets is None and (selected_tools is None or len(selected_tools) > 0):
        raise PromptError(
            "options_from_resources: tools are selected but tool_snippets is missing, so the"
            " <tools> section would be empty; pass tool_snippets, or call prompt_options_for"
            " with the tools themselves"
        )
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


def prompt_options_for(
    resources: LoadedResources,
    tools: Iterable[PromptTool],
    *,
    active: Sequence[str] | None = None,
    hidden_tools: Sequence[str] = (),
    cwd: str | None = None,
    wording: PromptWording = DEFAULT_WORDING,
) -> SystemPromptOptions:
    """The prompt options for ``resources`` and the available ``tools``.

    ``active`` names the selected tools in order (default: the session's first loadout,
    :func:`initial_loadout` of the ``defaultTools`` setting); names that are not among
    ``tools`` are kept, as pi keeps them, and have no snippet. ``cwd`` replaces the resources'
    directory (an agent whose cwd differs).
    """
    available = list(tools)
    if active is None:
        setting = resources.settings.get("defaultTools")
        selected = initial_loadout(setting, [t.name for t in available])
    else:
        selected = list(active)
    options = options_from_resources(
        resources,
        selected_tools=selected,
        hidden_tools=hidden_tools,
        tool_snippets={t.name: t.prompt_snippet for t in available if t.prompt_snippet},
        tool_guidelines={t.name: list(t.prompt_guidelines) for t in available},
        wording=wording,
    )
    return options if cwd is None else options.evolve(cwd=cwd)


def system_prompt_for(
    resources: LoadedResources,
    tools: Iterable[PromptTool],
    *,
    active: Sequence[str] | None = None,
    hidden_tools: Sequence[str] = (),
    cwd: str | None = None,
    wording: PromptWording = DEFAULT_WORDING,
) -> str:
    """The system prompt text a first request over ``resources`` with ``tools`` carries.

    The arguments are :func:`prompt_options_for`'s. A custom ``SYSTEM.md`` replaces the default
    sections as in pi; the forced prompt of a run is the agent's business, not this function's.
    """
    return build_system_prompt(
        prompt_options_for(
            resources, tools, active=active, hidden_tools=hidden_tools, cwd=cwd, wording=wording
        )
    )
