"""The tool loadout and the system prompt of an :class:`~pi_context.agent.session.AgentSession`.

Which tools exist (built-ins and extension tools), which are active (pi's ``defaultTools``
setting, then ``set_active_tools``), the prompt options built from them and the loaded
resources, and the system message that brings the stored prompt up to date at run start and
between turns (nothing is stored when it already matches).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from pi_context import _json
from pi_context.extensions import ExtensionRunner
from pi_context.messages import AgentMessage, ToolDeclaration
from pi_context.prompt import (
    SystemPromptOptions,
    build_sections,
    build_system_prompt,
    default_tool_names,
    prompt_options_for,
    system_message_for_update,
)
from pi_context.resources.loader import LoadedResources
from pi_context.session import Session
from pi_context.tools import BUILTIN_TOOL_NAMES, Tool, tool_declarations

from .incremental import PrefixFlatMap

__all__ = ["LoadoutOps", "default_tool_names"]


def _system_only(_index: int, message: AgentMessage) -> tuple[AgentMessage, ...]:
    return (message,) if message.get("role") == "system" else ()


class LoadoutOps:
    """Mixin of AgentSession: tools, the active loadout and the system prompt."""

    session: Session
    cwd: str
    _extensions: ExtensionRunner | None
    _resources: LoadedResources
    _run_options: SystemPromptOptions | None
    _run_forced: str | None

    @property
    def settings_data(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _init_loadout(self, tools: Sequence[Tool]) -> None:
        self._builtin_tools = list(tools)
        self._tools: dict[str, Tool] = {}
        self._active: list[str] = []
        # The system messages of the projection, redone only for messages new since last time.
        self._system_view: PrefixFlatMap[AgentMessage, AgentMessage] = PrefixFlatMap(_system_only)
        # The stored system messages and the wanted prompt (serialized) when last found in sync.
        self._prompt_in_sync: tuple[list[AgentMessage], bytes] | None = None
        self._set_tools()

    # -- tools ------------------------------------------------------------------------------------

    def _set_tools(self, *, newly_default: Sequence[str] = ()) -> None:
        """Register built-in and extension tools. The first loadout follows the
        ``defaultTools`` setting (built-ins only; other tools are always active); later calls
        keep the loadout and add ``newly_default`` names."""
        all_tools = list(self._builtin_tools)
        if self._extensions is not None:
            all_tools.extend(self._extensions.tools())
        self._tools = {t.name: t for t in all_tools}
        if not self._active:
            defaults = self._default_tool_names()
            self._active = [n for n in defaults if n in self._tools] + [
                n for n in self._tools if n not in BUILTIN_TOOL_NAMES
            ]
        else:
            kept = [n for n in self._active if n in self._tools]
            self._active = kept + [n for n in newly_default if n in self._tools and n not in kept]

    def _default_tool_names(self) -> list[str]:
        return default_tool_names(self.settings_data.get("defaultTools"))

    def get_active_tools(self) -> list[str]:
        return list(self._active)

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Change the loadout; the prompt and declarations are patched at the next turn."""
        kept = [n for n in self._active if n in names]
        self._active = kept + [n for n in names if n in self._tools and n not in kept]

    def _active_tool_objects(self) -> list[Tool]:
        return [self._tools[n] for n in self._active if n in self._tools]

    def declared_tools(self) -> list[ToolDeclaration]:
        hidden = set(self._options().hidden_tools)
        return tool_declarations(t for t in self._active_tool_objects() if t.name not in hidden)

    # -- system prompt ----------------------------------------------------------------------------

    def base_options(self) -> SystemPromptOptions:
        """The prompt options from resources and the active tools (pi's base options)."""
        return prompt_options_for(
            self._resources, self._tools.values(), active=self._active, cwd=self.cwd
        )

    def _options(self) -> SystemPromptOptions:
        return self._run_options if self._run_options is not None else self.base_options()

    @property
    def system_prompt(self) -> str:
        """The prompt text as the model would get it now (forced text when a run forces one)."""
        if self._run_forced is not None:
            return self._run_forced
        return build_system_prompt(self._options())

    def _system_patch(self, options: SystemPromptOptions) -> AgentMessage | None:
        """The system message that brings the stored prompt and loadout up to ``options``, or
        ``None`` when they already match.

        Diffing the tool declarations is costly, and between turns nothing has usually
        changed: when the stored system messages are the same objects and the desired sections
        and declarations serialize to the same bytes as the last time nothing was due, the
        answer is again ``None``.
        """
        systems = self._system_view(self.session.projection().messages)  # they hold the state
        sections = build_sections(options)
        tools = tool_declarations(self._active_tool_objects())
        wanted = _json.dumps([list(sections.items()), tools])
        last = self._prompt_in_sync
        if last is not None and last[1] == wanted and _same_objects(last[0], systems):
            return None
        patch = system_message_for_update(systems, sections, tools, timestamp=self.session.now_ms())
        self._prompt_in_sync = (systems, wanted) if patch is None else None
        return cast("AgentMessage | None", patch)


def _same_objects(a: Sequence[object], b: Sequence[object]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
