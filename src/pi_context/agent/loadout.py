"""The tool loadout and the system prompt of an agent session.

:class:`Loadout` knows which tools exist (built-ins and extension tools), which are active
(pi's ``defaultTools`` setting, then ``set_active_tools``, or what the branch recorded), the
prompt options built from them and the loaded resources, the options a run uses (possibly
changed by ``before_agent_start``, possibly with a forced prompt), and the system message that
brings the stored prompt up to date at run start and between turns (nothing is stored when it
already matches).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pi_context import _json
from pi_context.messages import AgentMessage, ToolDeclaration
from pi_context.prompt import (
    SystemPromptOptions,
    build_sections,
    build_system_prompt,
    default_tool_names,
    get_current_tools,
    prompt_options_for,
    system_message_for_update,
)
from pi_context.prompt.replay import tool_state_changes
from pi_context.session import ProjectedEntry
from pi_context.tools import BUILTIN_TOOL_NAMES, RecallTool, Tool, tool_declarations

from .prefix_reuse import PrefixFlatMap
from .state import AgentState

__all__ = ["Loadout"]


_entry_key = operator.attrgetter("key")


def _system_only(_index: int, item: ProjectedEntry) -> list[AgentMessage]:
    return [m for m in item.messages if m.get("role") == "system"]


class Loadout:
    """Tools, the active set, the run's prompt options and the system-prompt patch."""

    def __init__(self, state: AgentState, tools: Sequence[Tool]) -> None:
        self._state = state
        self._builtin_tools = list(tools)
        self._tools: dict[str, Tool] = {}
        self._active: list[str] = []
        self._run_options: SystemPromptOptions | None = None
        self.forced_prompt: str | None = None
        """The whole system prompt a run forces (``before_agent_start``), else ``None``."""
        # The system messages of the projection, redone only for entries new since last time
        # (keyed by entry id and edit generation, see .prefix_reuse).
        self._system_view: PrefixFlatMap[ProjectedEntry, AgentMessage] = PrefixFlatMap(
            _system_only, key=_entry_key
        )
        # The stored system messages and the wanted prompt (serialized) when last found in sync.
        self._prompt_in_sync: tuple[list[AgentMessage], bytes] | None = None
        self._recall_offered = False
        self.register_tools()

    # -- tools ------------------------------------------------------------------------------------

    def register_tools(self, *, newly_default: Sequence[str] = ()) -> None:
        """Register built-in and extension tools. The first loadout follows the
        ``defaultTools`` setting (built-ins only; other tools are always active); later calls
        keep the loadout and add ``newly_default`` names."""
        all_tools = list(self._builtin_tools)
        if self._state.extensions is not None:
            all_tools.extend(self._state.extensions.tools())
        selection = self._state.tool_selection
        defaults = self.default_tool_names()
        if selection is not None:
            all_tools = [t for t in all_tools if selection.allows(t.name, defaults)]
        self._tools = {t.name: t for t in all_tools}
        if not self._active and selection is not None:
            chosen = selection.initially_active(list(self._tools), defaults)
            self._active = chosen + [
                n
                for n in self._tools
                if n not in BUILTIN_TOOL_NAMES
                and n not in chosen
                and selection.plain is None
                and self._starts_active(n)
            ]
        elif not self._active:
            self._active = [n for n in defaults if n in self._tools] + [
                n for n in self._tools if n not in BUILTIN_TOOL_NAMES and self._starts_active(n)
            ]
        else:
            kept = [n for n in self._active if n in self._tools]
            self._active = kept + [n for n in newly_default if n in self._tools and n not in kept]

    def _starts_active(self, name: str) -> bool:
        """Whether a tool beside the built-ins is active from the start: all are, except the
        ``recall`` tool the agent adds itself, unless it is offered ``always``."""
        tool = self._tools.get(name)
        return not isinstance(tool, RecallTool) or tool.offer == "always"

    def offer_recall(self) -> None:
        """Make the agent's ``recall`` tool active once the branch holds a compaction (its
        ``auto`` offer), once per branch: the change reaches the model as a system-prompt patch
        (``toolsAdded``) at the next request, which keeps the cached prefix."""
        if self._recall_offered:
            return
        tool = self._tools.get(RecallTool.name)
        if not isinstance(tool, RecallTool) or tool.offer != "auto":
            return
        projection = self._state.session.stored_projection()
        first = projection.entries[0].entry if projection.entries else None
        if first is None or first.type != "compaction":
            return
        self._recall_offered = True
        if RecallTool.name not in self._active:
            self._active.append(RecallTool.name)

    def default_tool_names(self) -> list[str]:
        """The names pi's ``defaultTools`` setting makes active at start."""
        return default_tool_names(self._state.settings_data.get("defaultTools"))

    def active_tools(self) -> list[str]:
        return list(self._active)

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Change the loadout; the prompt and declarations are patched at the next turn."""
        kept = [n for n in self._active if n in names]
        self._active = kept + [n for n in names if n in self._tools and n not in kept]

    def active_tool(self, name: str) -> Tool | None:
        """The tool the model may call under ``name`` (``None``: unknown or inactive)."""
        return self._tools.get(name) if name in self._active else None

    def _active_tool_objects(self) -> list[Tool]:
        return [self._tools[n] for n in self._active if n in self._tools]

    def declared_tools(self) -> list[ToolDeclaration]:
        """The declarations a request carries (hidden tools left out)."""
        hidden = set(self.options().hidden_tools)
        return tool_declarations(t for t in self._active_tool_objects() if t.name not in hidden)

    def restore_from_branch(self) -> None:
        """The loadout recorded on the branch, plus non-built-in tools it never mentions
        (after a resume or a navigation)."""
        systems: list[Mapping[str, Any]] = []
        for e in self._state.session.branch_view():
            if e.type == "message" and e.role == "system" and e.message is not None:
                systems.append(e.message)
            elif e.type == "compaction" and isinstance(e.get("systemMessage"), Mapping):
                systems.append(e.get("systemMessage"))
        self._recall_offered = False  # offered again if this branch holds a compaction
        recorded = list(get_current_tools(systems))
        if not recorded:
            return
        mentioned = set()
        for m in systems:
            for key in ("toolsAdded", "toolsRemoved"):
                for t in (m or {}).get(key) or ():
                    mentioned.add(t.get("name"))
        names = [n for n in recorded if n in self._tools]
        names += [
            n
            for n in self._tools
            if n not in mentioned
            and n not in names
            and n not in BUILTIN_TOOL_NAMES
            and self._starts_active(n)
        ]
        self._active = names

    # -- system prompt ----------------------------------------------------------------------------

    def base_options(self) -> SystemPromptOptions:
        """The prompt options from resources and the active tools (pi's base options)."""
        state = self._state
        self.offer_recall()
        return prompt_options_for(
            state.resources, self._tools.values(), active=self._active, cwd=state.cwd
        )

    def begin_run(self, options: SystemPromptOptions, forced: str | None) -> None:
        """Use ``options`` (and ``forced``, if any) until :meth:`end_run`."""
        self._run_options = options
        self.forced_prompt = forced

    def end_run(self) -> None:
        self._run_options = None
        self.forced_prompt = None

    def options(self) -> SystemPromptOptions:
        """The options in force: the run's, or the base options between runs."""
        return self._run_options if self._run_options is not None else self.base_options()

    def next_turn_options(self) -> SystemPromptOptions:
        """The run's options with the loadout as it stands now (it may change mid-run)."""
        self.offer_recall()
        options = self.options().evolve(selected_tools=tuple(self._active))
        if self._run_options is not None:
            self._run_options = options
        return options

    def system_prompt(self) -> str:
        """The prompt text as the model would get it now (forced text when a run forces one)."""
        if self.forced_prompt is not None:
            return self.forced_prompt
        return build_system_prompt(self.options())

    def system_patch(
        self, options: SystemPromptOptions, entries: Sequence[ProjectedEntry]
    ) -> AgentMessage | None:
        """The system message that brings the stored prompt and loadout of ``entries`` (the
        current projection's) up to ``options``, or ``None`` when they already match.

        Diffing the tool declarations is costly, and between turns nothing has usually
        changed: when the stored system messages are the same (the same entry keys give the
        very same cached messages) and the desired sections and declarations serialize to the
        same bytes as the last time nothing was due, the answer is again ``None``. A patch
        puts the loadout in the order the transcript will replay it (see
        :meth:`_follow_recorded_order`).
        """
        systems = self._system_view(entries)  # they hold the state
        sections = build_sections(options)
        tools = tool_declarations(self._active_tool_objects())
        wanted = _json.dumps([list(sections.items()), tools])
        last = self._prompt_in_sync
        if last is not None and last[1] == wanted and _same_objects(last[0], systems):
            return None
        reordered = self._follow_recorded_order(options, systems, tools)
        if reordered is not options:
            options = reordered
            sections = build_sections(options)
            tools = tool_declarations(self._active_tool_objects())
            wanted = _json.dumps([list(sections.items()), tools])
        patch = system_message_for_update(
            systems, sections, tools, timestamp=self._state.session.now_ms()
        )
        self._prompt_in_sync = (systems, wanted) if patch is None else None
        return cast("AgentMessage | None", patch)

    def _follow_recorded_order(
        self,
        options: SystemPromptOptions,
        systems: Sequence[AgentMessage],
        tools: Sequence[ToolDeclaration],
    ) -> SystemPromptOptions:
        """Put the loadout in the order the transcript will replay it once ``tools`` are
        recorded, and return ``options`` with its selected tools in that order.

        Replaying a tool delta moves an added name (and a changed definition, which is a
        removal plus an addition) to the end. The next process restores the loadout in that
        replayed order (:meth:`restore_from_branch`); if this one kept its own order, the
        declarations and the tools section would change order between the two processes and
        the request after a tool change would miss the whole cached prefix (Anthropic's
        ``tools`` head it). Following the replayed order here makes both processes send the
        same bytes.
        """
        recorded = get_current_tools(systems)
        replayed = list(recorded)
        added, removed = tool_state_changes(recorded, tools)
        if added or removed:
            moved = {r["name"] for r in removed} | {d["name"] for d in added}
            replayed = [n for n in replayed if n not in moved] + [d["name"] for d in added]
        order = {name: i for i, name in enumerate(replayed)}
        active = _in_order(self._active, order)
        if active == self._active:
            return options
        self._active = active
        options = options.evolve(selected_tools=tuple(_in_order(options.tools, order)))
        if self._run_options is not None:
            self._run_options = options
        return options


def _in_order(names: Sequence[str], order: Mapping[str, int]) -> list[str]:
    """``names`` sorted by their place in ``order``; names it lacks keep their order, last."""
    last = len(order)
    ranked = sorted(enumerate(names), key=lambda item: (order.get(item[1], last), item[0]))
    return [name for _, name in ranked]


def _same_objects(a: Sequence[object], b: Sequence[object]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
